"""Channel Access values ⇄ bus fields: pure functions, no CA calls.

Native field types (``DBF_*`` codes 0..6) map to bus dtypes; CTRL values become
``MetaMsg`` fields; put values are checked against the channel's native type
before anything is sent, so a type mismatch is answered clearly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from synoptic_adapters.putcheck import PutValueError, checked_array, checked_number

#: EPICS alarm status codes → names (alarm.h order).
ALARM_STATUS = (
    "NO_ALARM", "READ", "WRITE", "HIHI", "HIGH", "LOLO", "LOW", "STATE", "COS",
    "COMM", "TIMEOUT", "HWLIMIT", "CALC", "SCAN", "LINK", "SOFT", "BAD_SUB", "UDF",
    "DISABLE", "SIMM", "READ_ACCESS", "WRITE_ACCESS",
)  # fmt: skip

#: DBF code → (bus dtype, native type name, numpy dtype or None).
NATIVE_TYPES: dict[int, tuple[str, str, np.dtype | None]] = {
    0: ("str", "DBR_STRING", None),
    1: ("i2", "DBR_SHORT", np.dtype("<i2")),
    2: ("f4", "DBR_FLOAT", np.dtype("<f4")),
    3: ("enum", "DBR_ENUM", np.dtype("<u2")),
    4: ("u1", "DBR_CHAR", np.dtype("<u1")),
    5: ("i4", "DBR_LONG", np.dtype("<i4")),
    6: ("f8", "DBR_DOUBLE", np.dtype("<f8")),
}


def status_text(status: int) -> str:
    """The EPICS alarm status name of a status code."""
    return (
        ALARM_STATUS[status] if 0 <= status < len(ALARM_STATUS) else f"STATUS_{status}"
    )


def _pair(lo: Any, hi: Any) -> list[float] | None:
    if lo is None or hi is None:
        return None
    lo, hi = float(lo), float(hi)
    if math.isnan(lo) or math.isnan(hi) or lo == hi:  # EPICS: equal means unset
        return None
    return [lo, hi]


def build_meta(ctrl: Any, datatype: int, count: int, writable: bool) -> dict[str, Any]:
    """``MetaMsg`` fields (without ver/t/ep) from a FORMAT_CTRL value and the
    channel's native type, element count and write access."""
    dt, native, _ = NATIVE_TYPES.get(datatype, ("str", f"DBF_{datatype}", None))
    meta: dict[str, Any] = {
        "dt": dt,
        "shape": [] if count == 1 else [count],
        "w": bool(writable),
        "native": native,
    }
    units = getattr(ctrl, "units", None)
    if units:
        meta["unit"] = units
    precision = getattr(ctrl, "precision", None)
    if precision is not None and dt in ("f4", "f8"):
        meta["prec"] = int(precision)
    for key, lo, hi in (
        ("disp", "lower_disp_limit", "upper_disp_limit"),
        ("warn", "lower_warning_limit", "upper_warning_limit"),
        ("alarm", "lower_alarm_limit", "upper_alarm_limit"),
        ("ctrl", "lower_ctrl_limit", "upper_ctrl_limit"),
    ):
        pair = _pair(getattr(ctrl, lo, None), getattr(ctrl, hi, None))
        if pair is not None:
            meta[key] = pair
    enums = getattr(ctrl, "enums", None)
    if enums is not None:
        meta["labels"] = list(enums)
    return meta


def put_value(value: Any, datatype: int, count: int, labels: list[str] | None) -> Any:
    """Convert a bus put value for a channel of native ``datatype``; raise
    :class:`PutValueError` naming the mismatch."""
    if isinstance(value, bool):
        value = int(value)
    if datatype == 0:  # string
        if isinstance(value, str | int | float):
            text = str(value)
            if len(text.encode()) > 39:
                raise PutValueError("EPICS strings hold at most 39 bytes")
            return text
        raise PutValueError(f"expected a string, got {type(value).__name__}")
    if datatype == 3:  # enum: index or label
        if isinstance(value, str):
            if labels and value in labels:
                return labels.index(value)
            raise PutValueError(f"{value!r} is not one of the labels {labels}")
        if isinstance(value, int) and 0 <= value < 16:
            if labels and value >= len(labels):
                raise PutValueError(
                    f"enum index {value} is beyond {len(labels)} labels"
                )
            return value
        raise PutValueError(f"expected an enum index or label, got {value!r}")
    dtype = NATIVE_TYPES[datatype][2] if datatype in NATIVE_TYPES else None
    if dtype is None:
        raise PutValueError(f"channel of native type {datatype} cannot be written")
    if count > 1 or isinstance(value, list | tuple | np.ndarray):
        array = checked_array(value, dtype, NATIVE_TYPES[datatype][1])
        if array.size > count:
            raise PutValueError(f"array of {array.size} elements exceeds {count}")
        return array
    return checked_number(value, dtype, NATIVE_TYPES[datatype][1])
