"""Bus put values → PV Access fields: a pure function checked against the PV's type.

The put path fetches the PV's current structure first (p4p's put with ``get``),
so the value is checked against what the server serves now, not what was seen at
subscription time; a mismatch is answered with the reason before anything is sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synoptic_adapters.putcheck import PutValueError, checked_array, checked_number
from synoptic_adapters.pva.convert import layout_of

#: Bus dtypes of numeric scalars → numpy dtypes (range checks).
_NUMPY = {
    "i1": np.int8, "u1": np.uint8, "i2": np.int16, "u2": np.uint16, "i4": np.int32,
    "u4": np.uint32, "i8": np.int64, "u8": np.uint64, "f4": np.float32,
    "f8": np.float64,
}  # fmt: skip


def put_fields(current: Any, value: Any) -> dict[str, Any]:
    """The fields to write for ``value`` into a PV whose current structure is
    ``current`` (a p4p ``Value``); :class:`PutValueError` naming the mismatch."""
    layout = layout_of(current)
    if layout.kind == "enum":
        return {"value.index": _enum_index(value, list(current["value.choices"]))}
    if layout.kind == "scalar":
        return {"value": _scalar(value, layout.dt)}
    if layout.kind == "array":
        return {"value": _array(value, layout.dt)}
    raise PutValueError(f"writing {layout.type_id} values is not supported")


def _enum_index(value: Any, choices: list[str]) -> int:
    if isinstance(value, str):
        if value in choices:
            return choices.index(value)
        raise PutValueError(f"{value!r} is not one of the choices {choices}")
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < max(len(choices), 1):
            return value
        raise PutValueError(f"enum index {value} is beyond {len(choices)} choices")
    raise PutValueError(f"expected an enum index or choice, got {value!r}")


def _scalar(value: Any, dt: str) -> Any:
    if dt == "str":
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        raise PutValueError(f"expected a string, got {type(value).__name__}")
    if dt == "bool":
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
        raise PutValueError(f"expected a boolean, got {value!r}")
    if isinstance(value, bool):
        value = int(value)
    return checked_number(value, np.dtype(_NUMPY[dt]), dt)


def _array(value: Any, dt: str) -> Any:
    if not isinstance(value, list | tuple | np.ndarray):
        value = [value]
    if dt == "str":
        if all(isinstance(v, str) for v in value):
            return list(value)
        raise PutValueError("expected a list of strings")
    if dt == "bool":
        return checked_array(value, np.dtype(np.bool_), dt)
    return checked_array(value, np.dtype(_NUMPY[dt]), dt)
