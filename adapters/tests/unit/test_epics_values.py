"""CA values ⇄ bus fields: put conversion by native type, metadata from CTRL values,
and the generated simulator database."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from synoptic_adapters.epics.values import (
    PutValueError,
    build_meta,
    put_value,
    status_text,
)
from synoptic_adapters.sim.epics_db import SimSpec, build_database, counter_names

DBF_STRING, DBF_SHORT, DBF_ENUM, DBF_LONG, DBF_DOUBLE = 0, 1, 3, 5, 6


def test_put_values_convert_to_the_native_type() -> None:
    assert put_value(4.5, DBF_DOUBLE, 1, None) == 4.5
    assert put_value("4.5", DBF_DOUBLE, 1, None) == 4.5
    assert put_value(True, DBF_LONG, 1, None) == 1
    assert put_value(3.0, DBF_SHORT, 1, None) == 3
    assert put_value(12, DBF_STRING, 1, None) == "12"
    assert put_value("On", DBF_ENUM, 1, ["Off", "On"]) == 1
    assert put_value(0, DBF_ENUM, 1, ["Off", "On"]) == 0
    array = put_value([1, 2, 3], DBF_DOUBLE, 100_000, None)
    assert isinstance(array, np.ndarray) and array.dtype == np.float64


@pytest.mark.parametrize(
    ("value", "datatype", "count", "labels", "words"),
    [
        ("abc", DBF_DOUBLE, 1, None, "not a number"),
        ({"a": 1}, DBF_DOUBLE, 1, None, "expected a number"),
        (3.5, DBF_LONG, 1, None, "not an integer"),
        (70000, DBF_SHORT, 1, None, "out of range"),
        ("Maybe", DBF_ENUM, 1, ["Off", "On"], "not one of the labels"),
        (5, DBF_ENUM, 1, ["Off", "On"], "beyond 2 labels"),
        ("x" * 40, DBF_STRING, 1, None, "at most 39 bytes"),
        ([1, 2, 3], DBF_DOUBLE, 2, None, "exceeds 2"),
        (["a", "b"], DBF_DOUBLE, 10, None, "numeric array"),
        ([1, 70000], DBF_SHORT, 10, None, "1..70000 are out of range for DBR_SHORT"),
        ([1.0, 2.5], DBF_LONG, 10, None, "not all elements are integers"),
        ([[1, 2]], DBF_DOUBLE, 10, None, "expected 1-D numbers"),
    ],
)
def test_mismatched_put_values_are_refused_clearly(
    value: object, datatype: int, count: int, labels: list[str] | None, words: str
) -> None:
    with pytest.raises(PutValueError, match=words):
        put_value(value, datatype, count, labels)


def test_metadata_from_a_ctrl_value() -> None:
    nan = float("nan")
    ctrl = SimpleNamespace(
        units="mm", precision=3, lower_disp_limit=-10.0, upper_disp_limit=10.0,
        lower_warning_limit=-5.0, upper_warning_limit=5.0,
        lower_alarm_limit=nan, upper_alarm_limit=8.0,
        lower_ctrl_limit=0.0, upper_ctrl_limit=0.0,
    )  # fmt: skip
    meta = build_meta(ctrl, DBF_DOUBLE, 1000, writable=False)
    assert meta == {
        "dt": "f8",
        "shape": [1000],
        "w": False,
        "native": "DBR_DOUBLE",
        "unit": "mm",
        "prec": 3,
        "disp": [-10.0, 10.0],
        "warn": [-5.0, 5.0],
    }  # fmt: skip  (alarm: a NaN limit; ctrl: 0..0 means unset in EPICS)
    enum = build_meta(SimpleNamespace(enums=["Off", "On"]), DBF_ENUM, 1, True)
    assert enum == {"dt": "enum", "shape": [], "w": True, "native": "DBR_ENUM",
                    "labels": ["Off", "On"]}  # fmt: skip
    assert status_text(3) == "HIHI" and status_text(99) == "STATUS_99"


def test_the_simulator_database_holds_n_counters_and_the_extras() -> None:
    spec = SimSpec("T:", records=1200, rate=10.0)
    text, names = build_database(spec)
    assert names[:2] == ["T:CNT:00000", "T:CNT:00001"] and len(names) == 1200 + 11
    assert text.count('record(calcout, "T:CNT:') == 1200
    assert '"T:CNT:00007 NPP"' in text and 'field(SCAN, ".1 second")' in text
    for kind in ("calc", "compress", "waveform", "mbbi", "mbbo", "stringin", "ao"):
        assert f"record({kind}," in text
    assert 'field(NELM, "100000")' in text and 'field(ASG, "RO")' in text
    assert 'record(ai, "T:UNSET")' in text and "T:UNSET" not in names
    counters_only, names = build_database(SimSpec("T:", 3, 1.0, extras=False))
    assert names == counter_names(SimSpec("T:", 3, 1.0)) and "SINE" not in counters_only
    with pytest.raises(ValueError, match="soft IOC scans at"):
        build_database(SimSpec("T:", 3, rate=3.0))
