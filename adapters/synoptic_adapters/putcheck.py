"""Put values checked before anything is sent, shared by the EPICS adapters (CA
and PVA): the error they raise and the number check against a numeric type."""

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
