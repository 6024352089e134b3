"""The shift form of an array update (``sub.shift``): a circular buffer's new
samples against the value the client holds."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from synoptic_schemas.codec import to_json_view

#: Keys of an ``upd`` value in the shift form (``sub.shift``): it has no ``v``;
#: ``v`` is the value of seq ``base`` (same ``ep``) without its first ``sh``
#: elements, followed by ``tail``.
SHIFT: Final = "sh"
SHIFT_TAIL: Final = "tail"
SHIFT_BASE: Final = "base"


def is_shifted(value: Mapping[str, Any]) -> bool:
    """Whether an ``upd`` value is in the shift form."""
    return SHIFT in value


def unshift(held: Mapping[str, Any] | None, value: Mapping[str, Any]) -> Any:
    """The full value payload of the shift-form ``value``, given the payload the
    client holds for that channel; ``None`` when ``held`` is not its base (another
    ``ep`` or ``seq``, or not an array): the client then asks a fresh snapshot."""
    if (
        held is None
        or held.get("ep") != value.get("ep")
        or held.get("seq") != value.get(SHIFT_BASE)
    ):
        return None
    prev = held.get("v")
    tail = value[SHIFT_TAIL]
    json_view = isinstance(prev, Mapping)
    if json_view:  # the JSON view of typed arrays
        prev, tail = _typed_array(prev), _typed_array(tail)
    k = value[SHIFT]
    if (
        not isinstance(prev, np.ndarray)
        or not isinstance(tail, np.ndarray)
        or prev.ndim != 1
        or prev.dtype != tail.dtype
        or not isinstance(k, int)
        or not 0 <= k <= len(prev)
    ):
        return None
    full = {key: v for key, v in value.items() if key not in _SHIFT_KEYS}
    v = np.concatenate((prev[k:], tail))
    full["v"] = to_json_view(v) if json_view else v
    return full


def _typed_array(view: Any) -> np.ndarray | None:
    """The numpy array of a typed array's JSON view (``{"dtype", "shape", "b64"}``)."""
    try:
        dtype = np.dtype(view["dtype"]).newbyteorder("<")
        data = base64.b64decode(view["b64"])
        return np.frombuffer(data, dtype).reshape(view["shape"])
    except (KeyError, TypeError, ValueError):
        return None


_SHIFT_KEYS = frozenset({SHIFT, SHIFT_TAIL, SHIFT_BASE})
