"""Tango values and attribute configurations → bus values and metadata.

Pure functions over pytango objects (no I/O), safe to call from Tango's event
threads.

Quality → severity: VALID 0, WARNING 1 (minor), ALARM 2 (major), INVALID 3.
CHANGING (the value is moving towards a set point, e.g. a motor in motion) is not
an alarm: it maps to 0, and the status text says ``CHANGING`` so a screen can
still show it. The status text is always the Tango quality name.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import tango
from tango import (
    AttrDataFormat,
    AttributeInfoEx,
    AttrQuality,
    AttrWriteType,
    CmdArgType,
)

from synoptic_schemas import Severity

SEVERITY_OF_QUALITY: dict[AttrQuality, int] = {
    AttrQuality.ATTR_VALID: Severity.NONE,
    AttrQuality.ATTR_CHANGING: Severity.NONE,
    AttrQuality.ATTR_WARNING: Severity.MINOR,
    AttrQuality.ATTR_ALARM: Severity.MAJOR,
    AttrQuality.ATTR_INVALID: Severity.INVALID,
}
STATUS_OF_QUALITY: dict[AttrQuality, str] = {
    quality: quality.name.removeprefix("ATTR_") for quality in SEVERITY_OF_QUALITY
}
# the same, indexed by the quality's integer value: a lookup per event without
# hashing an enum member (a Python-level ``Enum.__hash__``)
_SEVERITY_BY_VALUE: tuple[int, ...] = tuple(
    int(SEVERITY_OF_QUALITY.get(AttrQuality(i), Severity.INVALID))
    for i in range(max(map(int, SEVERITY_OF_QUALITY)) + 1)
)
_STATUS_BY_VALUE: tuple[str, ...] = tuple(
    STATUS_OF_QUALITY.get(AttrQuality(i), str(i))
    for i in range(max(map(int, SEVERITY_OF_QUALITY)) + 1)
)

#: Tango data type → bus ``dt``.
DT_OF_TYPE: dict[CmdArgType, str] = {
    CmdArgType.DevBoolean: "bool",
    CmdArgType.DevUChar: "u1",
    CmdArgType.DevShort: "i2",
    CmdArgType.DevUShort: "u2",
    CmdArgType.DevLong: "i4",
    CmdArgType.DevULong: "u4",
    CmdArgType.DevLong64: "i8",
    CmdArgType.DevULong64: "u8",
    CmdArgType.DevFloat: "f4",
    CmdArgType.DevDouble: "f8",
    CmdArgType.DevString: "str",
    CmdArgType.DevEnum: "enum",
    CmdArgType.DevState: "state",
    CmdArgType.DevEncoded: "str",
}
#: DevState names, index = value.
STATE_LABELS: list[str] = [
    str(name) for name, _ in sorted(tango.DevState.names.items(), key=lambda i: i[1])
]
_NOT_SPECIFIED = {"", "Not specified", "No unit", "No description", "No standard unit"}
_PRECISION = re.compile(r"%[-+ #0]*\d*\.(\d+)[fFeEgG]")


class Reading(NamedTuple):
    """One value as the bus carries it (a tuple: one is built per event)."""

    v: Any
    t: int  # ns since the Unix epoch
    sev: int
    st: str


def timestamp_ns(time_val: tango.TimeVal) -> int:
    """A Tango ``TimeVal`` as integer nanoseconds; an unset one (0: a device
    server that gave its value no date) is now, as the EPICS adapters do for an
    unset stamp, so that its value is not placed in 1970 by trends and history."""
    secs = time_val.tv_sec
    return secs * 1_000_000_000 + time_val.tv_usec * 1000 if secs else time.time_ns()


#: Gives the plain value of a ``DeviceAttribute`` (see :func:`plain_value`).
ValueOf = Callable[[tango.DeviceAttribute], Any]


def reading(
    attr_value: tango.DeviceAttribute, value_of: ValueOf | None = None
) -> Reading:
    """The bus value of a read or event ``DeviceAttribute`` (which must not carry an
    error: check ``has_failed`` first). ``value_of`` (from :func:`value_reader` of
    an earlier value of the same attribute) skips the type dispatch."""
    quality = int(attr_value.quality)
    time_val = attr_value.time
    try:
        sev, st = _SEVERITY_BY_VALUE[quality], _STATUS_BY_VALUE[quality]
    except IndexError:
        sev, st = Severity.INVALID, str(attr_value.quality)
    secs = time_val.tv_sec
    return Reading(
        (value_of or plain_value)(attr_value),
        secs * 1_000_000_000 + time_val.tv_usec * 1000 if secs else time.time_ns(),
        sev,
        st,
    )


def value_reader(attr_value: tango.DeviceAttribute) -> ValueOf:
    """The cheapest function equal to :func:`plain_value` for every value of this
    attribute (its type and format do not change while it is subscribed)."""
    if attr_value.data_format == AttrDataFormat.SCALAR and attr_value.type not in (
        CmdArgType.DevState,
        CmdArgType.DevEnum,
        CmdArgType.DevEncoded,
    ):
        return _plain_scalar
    return plain_value


def _plain_scalar(attr_value: tango.DeviceAttribute) -> Any:
    value = attr_value.value
    if isinstance(value, np.generic):
        return value.item()
    return value


def plain_value(attr_value: tango.DeviceAttribute) -> Any:
    """Scalars as Python numbers/str/bool (DevState and DevEnum as their index),
    spectrum and image as numpy arrays (strings as lists), None when INVALID."""
    value = attr_value.value
    if value is None:
        return None
    kind = attr_value.type
    if attr_value.data_format == AttrDataFormat.SCALAR:
        if kind in (CmdArgType.DevState, CmdArgType.DevEnum):
            return int(value)
        if kind == CmdArgType.DevEncoded:
            return _encoded_text(value)
        if isinstance(value, np.generic):
            return value.item()
        return value
    if kind == CmdArgType.DevString or isinstance(value, list | tuple):
        return [str(item) for item in value]
    if kind in (CmdArgType.DevState, CmdArgType.DevEnum):
        return np.asarray(value, dtype=np.int16)
    return np.ascontiguousarray(value)


def _encoded_text(value: Any) -> str:
    fmt, data = value
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data).decode("utf-8", "replace")
    return f"{fmt}: {data!r}"


def metadata(info: AttributeInfoEx) -> dict[str, Any]:
    """The ``MetaMsg`` keys (except ver/t/ep) of an attribute configuration."""
    data_type = CmdArgType(info.data_type)
    meta: dict[str, Any] = {
        "dt": DT_OF_TYPE.get(data_type, "str"),
        "shape": _shape(info),
        "w": info.writable != AttrWriteType.READ,
        "native": str(data_type),
    }
    if (unit := info.unit) not in _NOT_SPECIFIED:
        meta["unit"] = unit
    if match := _PRECISION.search(info.format or ""):
        meta["prec"] = int(match.group(1))
    if (ctrl := _pair(info.min_value, info.max_value)) is not None:
        meta["ctrl"] = ctrl
    alarms = info.alarms
    if (warn := _pair(alarms.min_warning, alarms.max_warning)) is not None:
        meta["warn"] = warn
    if (alarm := _pair(alarms.min_alarm, alarms.max_alarm)) is not None:
        meta["alarm"] = alarm
    if data_type == CmdArgType.DevEnum:
        meta["labels"] = [str(label) for label in info.enum_labels]
    elif data_type == CmdArgType.DevState:
        meta["labels"] = list(STATE_LABELS)
    if (desc := info.description) not in _NOT_SPECIFIED:
        meta["desc"] = desc
    return meta


def _shape(info: AttributeInfoEx) -> list[int]:
    if info.data_format == AttrDataFormat.SPECTRUM:
        return [int(info.max_dim_x)]
    if info.data_format == AttrDataFormat.IMAGE:
        return [int(info.max_dim_y), int(info.max_dim_x)]
    return []


def _pair(low: str, high: str) -> list[float] | None:
    """``[lo, hi]`` when both limits are set (one-sided limits are dropped: the
    bus contract has no open interval)."""
    try:
        return [float(low), float(high)]
    except (TypeError, ValueError):
        return None
