"""Put values → Tango write values, and DevFailed → put (and command) replies."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tango

from synoptic_schemas import PutError

_INT_RANGES = {
    "u1": (0, 2**8 - 1),
    "i2": (-(2**15), 2**15 - 1),
    "u2": (0, 2**16 - 1),
    "i4": (-(2**31), 2**31 - 1),
    "u4": (0, 2**32 - 1),
    "i8": (-(2**63), 2**63 - 1),
    "u8": (0, 2**64 - 1),
}
_TIMEOUT_REASONS = frozenset({"API_DeviceTimedOut", "API_CorbaTimeout"})
_DISCONNECTED_REASONS = frozenset(
    {
        "API_CantConnectToDevice",
        "API_DeviceNotExported",
        "API_CommunicationFailed",
        "API_CorbaException",
        "API_ServerNotRunning",
        "API_CantConnectToDatabase",
    }
)
_UNKNOWN_REASONS = frozenset(
    {"API_AttrNotFound", "API_AttrNotAllowed", "API_CommandNotFound"}
)
_ACCESS_REASONS = frozenset(
    {"API_AttrNotWritable", "API_WAttrNotAllowed", "API_CommandNotAllowed"}
)
_TYPE_REASONS = frozenset({"API_IncompatibleCmdArgumentType"})


class WriteTypeError(ValueError):
    """A put value that cannot become the attribute's type."""


def coerce(value: Any, meta: dict[str, Any]) -> Any:
    """Convert a put value to what ``write_attribute`` needs for an attribute with
    bus metadata ``meta`` (``dt``, ``shape``, ``labels``); raise
    :class:`WriteTypeError` saying why not."""
    dt = meta["dt"]
    if meta["shape"]:
        if not isinstance(value, list | tuple | np.ndarray):
            raise WriteTypeError(f"expected an array for a {dt} array attribute")
        if dt == "str":
            return [str(item) for item in value]
        try:
            return np.asarray([_scalar(item, dt, meta) for item in value])
        except WriteTypeError as exc:
            raise WriteTypeError(f"array element: {exc}") from None
    return _scalar(value, dt, meta)


def _scalar(value: Any, dt: str, meta: dict[str, Any]) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if dt == "str":
        if isinstance(value, str | int | float | bool):
            return str(value)
        raise WriteTypeError(f"cannot write {type(value).__name__} as a string")
    if dt == "bool":
        return _boolean(value)
    if dt == "enum":
        return _enum_index(value, meta.get("labels", []))
    if dt == "state":
        raise WriteTypeError("DevState attributes cannot be written")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise WriteTypeError(f"cannot write {value!r} as a number")
    if dt in ("f4", "f8"):
        try:
            return float(value)
        except ValueError:
            raise WriteTypeError(f"{value!r} is not a number") from None
    return _integer(value, dt)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    raise WriteTypeError(f"{value!r} is not a boolean")


def _enum_index(value: Any, labels: list[str]) -> int:
    if isinstance(value, str):
        folded = [label.lower() for label in labels]
        if value.lower() in folded:
            return folded.index(value.lower())
        if not value.strip().isdigit():
            raise WriteTypeError(f"{value!r} is not one of {labels}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WriteTypeError(f"{value!r} is not an enum index or label")
    if labels and not 0 <= value < len(labels):
        raise WriteTypeError(f"enum index {value} outside 0..{len(labels) - 1}")
    return value


def _integer(value: Any, dt: str) -> int:
    try:
        number = float(value) if isinstance(value, str) else value
    except ValueError:
        raise WriteTypeError(f"{value!r} is not a number") from None
    if isinstance(number, float):
        if not math.isfinite(number) or not number.is_integer():
            raise WriteTypeError(f"{value!r} is not an integer")
        number = int(number)
    low, high = _INT_RANGES.get(dt, (-(2**63), 2**64 - 1))
    if not low <= number <= high:
        raise WriteTypeError(f"{number} outside the {dt} range {low}..{high}")
    return number


def failure(exc: tango.DevFailed) -> tuple[str, str]:
    """The put error code and message of a DevFailed: ``reason: description``."""
    errors = exc.args
    reason = errors[0].reason if errors else "DevFailed"
    desc = " / ".join(e.desc.strip() for e in errors[:3]) if errors else str(exc)
    if reason in _TIMEOUT_REASONS:
        code = PutError.TIMEOUT
    elif reason in _DISCONNECTED_REASONS:
        code = PutError.DISCONNECTED
    elif reason in _UNKNOWN_REASONS:
        code = PutError.UNKNOWN
    elif reason in _ACCESS_REASONS:
        code = PutError.ACCESS
    elif reason in _TYPE_REASONS:
        code = PutError.TYPE
    else:
        code = PutError.FAILED
    return code, f"{reason}: {desc}"
