"""Put values checked before anything is sent, shared by the EPICS adapters (CA
and PVA): the error they raise and the number and array checks against a numeric
type."""

from __future__ import annotations

from typing import Any

import numpy as np


class PutValueError(ValueError):
    """A put value that does not fit the channel's type; the message says why."""


def checked_number(value: Any, dtype: np.dtype, type_name: str) -> int | float:
    """``value`` (a number or a numeric string) as a number of ``dtype``: a float
    for a float type, else an integer within the type's range;
    :class:`PutValueError` naming ``type_name`` when it is not one."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise PutValueError(f"{value!r} is not a number") from None
    if not isinstance(value, int | float):
        raise PutValueError(f"expected a number, got {type(value).__name__}")
    if dtype.kind not in "iu":
        return float(value)
    if isinstance(value, float) and not value.is_integer():
        raise PutValueError(f"{value} is not an integer ({type_name})")
    info = np.iinfo(dtype)
    if not info.min <= int(value) <= info.max:
        raise PutValueError(f"{value} is out of range for {type_name}")
    return int(value)


def checked_array(value: Any, dtype: np.dtype, type_name: str) -> np.ndarray:
    """``value`` (a sequence of numbers) as a 1-D array of ``dtype``: for an
    integer type, whole numbers within the type's range (never wrapped);
    :class:`PutValueError` naming ``type_name`` when it is not one."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise PutValueError(f"not a numeric array: {exc}") from None
    if array.dtype.kind not in "iufb" or array.ndim != 1:
        raise PutValueError(
            f"not a numeric array: expected 1-D numbers, got {array.dtype} "
            f"{list(array.shape)}"
        )
    if dtype.kind in "iu" and array.size:
        if array.dtype.kind == "f" and not np.all(np.mod(array, 1) == 0):
            raise PutValueError(f"not all elements are integers ({type_name})")
        info = np.iinfo(dtype)
        lo, hi = array.min(), array.max()
        if lo < info.min or hi > info.max:
            raise PutValueError(f"elements {lo}..{hi} are out of range for {type_name}")
    return array.astype(dtype)
