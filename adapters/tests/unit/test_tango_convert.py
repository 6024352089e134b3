"""Pure parts of the Tango adapter: metadata, quality, write conversion, errors,
settings (no servers)."""

from __future__ import annotations

import asyncio
import operator
import time

import numpy as np
import pytest
import tango
from tango import AttrDataFormat, AttrQuality, AttrWriteType, CmdArgType

from synoptic_adapters.tango.convert import (
    SEVERITY_OF_QUALITY,
    STATE_LABELS,
    STATUS_OF_QUALITY,
    metadata,
    reading,
    timestamp_ns,
)
from synoptic_adapters.tango.device import _polled_attributes
from synoptic_adapters.tango.events import EventInbox, EventItem
from synoptic_adapters.tango.settings import TangoSettings, TangoSettingsError
from synoptic_adapters.tango.writes import WriteTypeError, coerce, failure
from synoptic_schemas import PutError


def _info(data_type: CmdArgType, **fields: object) -> tango.AttributeInfoEx:
    info = tango.AttributeInfoEx()
    info.data_type = data_type
    info.data_format = fields.pop("data_format", AttrDataFormat.SCALAR)
    info.writable = fields.pop("writable", AttrWriteType.READ)
    info.enum_labels = fields.pop("enum_labels", [])
    alarms = info.alarms
    for name in ("min_warning", "max_warning", "min_alarm", "max_alarm"):
        setattr(alarms, name, str(fields.pop(name, "Not specified")))
    info.alarms = alarms
    for name, value in fields.items():
        setattr(info, name, value)
    return info


def test_quality_to_severity_and_status() -> None:
    assert SEVERITY_OF_QUALITY[AttrQuality.ATTR_VALID] == 0
    assert SEVERITY_OF_QUALITY[AttrQuality.ATTR_WARNING] == 1
    assert SEVERITY_OF_QUALITY[AttrQuality.ATTR_ALARM] == 2
    assert SEVERITY_OF_QUALITY[AttrQuality.ATTR_INVALID] == 3
    assert SEVERITY_OF_QUALITY[AttrQuality.ATTR_CHANGING] == 0
    assert STATUS_OF_QUALITY[AttrQuality.ATTR_CHANGING] == "CHANGING"


def test_a_value_without_a_date_is_stamped_now() -> None:
    attr = tango.DeviceAttribute()
    attr.value, attr.quality = 4.5, AttrQuality.ATTR_VALID
    attr.time = tango.TimeVal(1_700_000_000, 250_000, 0)
    value_of = operator.attrgetter("value")
    assert reading(attr, value_of).t == 1_700_000_000_250_000_000
    assert timestamp_ns(attr.time) == 1_700_000_000_250_000_000
    attr.time = tango.TimeVal(0, 0, 0)  # a device server that set no date
    before = time.time_ns()
    stamped = reading(attr, value_of).t
    assert before <= stamped <= time.time_ns()
    assert before <= timestamp_ns(attr.time) <= time.time_ns()


def test_metadata_of_a_writable_spectrum_with_limits() -> None:
    info = _info(
        CmdArgType.DevDouble,
        data_format=AttrDataFormat.SPECTRUM,
        max_dim_x=10,
        writable=AttrWriteType.READ_WRITE,
        unit="mm",
        format="%7.2f",
        min_value="-5",
        max_value="5",
        min_warning=-1,
        max_warning=1,
        min_alarm=-2,
        description="beam position",
    )
    assert metadata(info) == {
        "dt": "f8",
        "shape": [10],
        "w": True,
        "native": "DevDouble",
        "unit": "mm",
        "prec": 2,
        "ctrl": [-5.0, 5.0],
        "warn": [-1.0, 1.0],
        "desc": "beam position",
    }  # fmt: skip  (one-sided alarm limit dropped)


def test_metadata_of_enum_state_image_and_defaults() -> None:
    enum = metadata(_info(CmdArgType.DevEnum, enum_labels=["A", "B"]))
    assert (enum["dt"], enum["labels"]) == ("enum", ["A", "B"])
    state = metadata(_info(CmdArgType.DevState))
    assert state["dt"] == "state" and state["labels"] == STATE_LABELS
    assert STATE_LABELS[int(tango.DevState.MOVING)] == "MOVING"
    image = metadata(
        _info(
            CmdArgType.DevUShort,
            data_format=AttrDataFormat.IMAGE,
            max_dim_x=32,
            max_dim_y=24,
            unit="No unit",
            description="No description",
            format="%d",
        )
    )
    assert image == {"dt": "u2", "shape": [24, 32], "w": False, "native": "DevUShort"}


@pytest.mark.parametrize(
    ("value", "meta", "expected"),
    [
        (1, {"dt": "f8", "shape": []}, 1.0),
        ("2.5", {"dt": "f4", "shape": []}, 2.5),
        (3.0, {"dt": "i4", "shape": []}, 3),
        (255, {"dt": "u1", "shape": []}, 255),
        ("true", {"dt": "bool", "shape": []}, True),
        (0, {"dt": "bool", "shape": []}, False),
        (12, {"dt": "str", "shape": []}, "12"),
        ("on", {"dt": "enum", "shape": [], "labels": ["OFF", "ON"]}, 1),
        (1, {"dt": "enum", "shape": [], "labels": ["OFF", "ON"]}, 1),
    ],
)
def test_coerce_scalars(value: object, meta: dict, expected: object) -> None:
    result = coerce(value, meta)
    assert result == expected and type(result) is type(expected)


def test_coerce_arrays() -> None:
    result = coerce([1, 2, 3], {"dt": "i2", "shape": [8]})
    assert isinstance(result, np.ndarray) and result.tolist() == [1, 2, 3]
    assert coerce(("a", 1), {"dt": "str", "shape": [4]}) == ["a", "1"]


@pytest.mark.parametrize(
    ("value", "meta"),
    [
        (1.5, {"dt": "i4", "shape": []}),
        (256, {"dt": "u1", "shape": []}),
        (-1, {"dt": "u4", "shape": []}),
        ("abc", {"dt": "f8", "shape": []}),
        (True, {"dt": "f8", "shape": []}),
        ("maybe", {"dt": "bool", "shape": []}),
        ("SIDEWAYS", {"dt": "enum", "shape": [], "labels": ["OFF", "ON"]}),
        (5, {"dt": "enum", "shape": [], "labels": ["OFF", "ON"]}),
        (1, {"dt": "state", "shape": []}),
        (1.0, {"dt": "f8", "shape": [4]}),
        ([1, "x"], {"dt": "i4", "shape": [4]}),
        ({"a": 1}, {"dt": "str", "shape": []}),
    ],
)
def test_coerce_refuses_what_does_not_fit(value: object, meta: dict) -> None:
    with pytest.raises(WriteTypeError):
        coerce(value, meta)


def _failed(reason: str, desc: str) -> tango.DevFailed:
    error = tango.DevError()
    error.reason, error.desc = reason, desc
    return tango.DevFailed(error)


def test_devfailed_to_put_error() -> None:
    code, text = failure(_failed("API_WAttrOutsideLimit", "above the maximum"))
    assert (code, text) == (PutError.FAILED, "API_WAttrOutsideLimit: above the maximum")
    assert failure(_failed("API_DeviceTimedOut", "x"))[0] == PutError.TIMEOUT
    assert failure(_failed("API_AttrNotFound", "x"))[0] == PutError.UNKNOWN
    assert failure(_failed("API_AttrNotWritable", "x"))[0] == PutError.ACCESS
    assert failure(_failed("API_CorbaException", "x"))[0] == PutError.DISCONNECTED


def test_polled_attributes_from_polling_status() -> None:
    status = [
        "Polled attribute name = Double\nPolling period (mS) = 100\n...",
        "Polled command name = State\nPolling period (mS) = 3000",
        "Polled attribute name = bulk_0001\nPolling period (mS) = 100",
    ]
    assert _polled_attributes(status) == {"double": 0.1, "bulk_0001": 0.1}


def test_settings_from_a_config_section() -> None:
    settings = TangoSettings.from_section(
        {"no_database_hosts": ["Sim:10000"], "poll_period": 0.5}
    )
    assert settings.poll_period == 0.5
    assert (
        settings.device_url("sim:10000", "a/b/c") == "tango://sim:10000/a/b/c#dbase=no"
    )
    assert settings.device_url("db:10000", "a/b/c") == "tango://db:10000/a/b/c"
    with pytest.raises(TangoSettingsError) as error:
        TangoSettings.from_section({"poll_period": -1})
    assert error.value.field == "tango.poll_period"
    with pytest.raises(TangoSettingsError) as error:
        TangoSettings.from_section({"pol_period": 1})
    assert "pol_period" in str(error.value)
    with pytest.raises(TangoSettingsError):
        TangoSettings.from_section({"no_database_hosts": ["no-port"]})


class _Handled(list[EventItem]):
    """Items handed over by an inbox; ``until(n)`` waits for n of them."""

    def __init__(self) -> None:
        super().__init__()
        self._more = asyncio.Event()

    def __call__(self, item: EventItem) -> None:
        self.append(item)
        self._more.set()

    async def until(self, count: int) -> None:
        async with asyncio.timeout(5):
            while len(self) < count:
                self._more.clear()
                await self._more.wait()


async def test_event_inbox_is_bounded_and_counts_drops() -> None:
    handled = _Handled()
    inbox = EventInbox(asyncio.get_running_loop(), handled, max_items=3)
    for n in range(5):
        inbox.post(EventItem(None, 0, "value", n))
    inbox.post(EventItem(None, 0, "live"))  # never dropped
    await handled.until(4)
    assert [i.payload for i in handled if i.kind == "value"] == [0, 1, 2]
    assert [i.kind for i in handled][-1] == "live"
    assert (inbox.received, inbox.dropped) == (4, 2)


async def test_event_inbox_hands_over_in_order_from_another_thread() -> None:
    handled = _Handled()
    inbox = EventInbox(asyncio.get_running_loop(), handled)

    def post_many() -> None:
        for n in range(5000):
            inbox.post(EventItem(None, 0, "value", n))

    await asyncio.to_thread(post_many)
    await handled.until(5000)
    assert [item.payload for item in handled] == list(range(5000))
    assert (inbox.received, inbox.dropped) == (5000, 0)
    await asyncio.sleep(inbox.batch_window * 3)  # quiet again: the drains stop
    assert not inbox._scheduled
