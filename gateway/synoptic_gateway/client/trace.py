"""One channel's history as a ``hist`` answer gives it."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Trace:
    """One channel's history as answered: times (float64 ms since the epoch),
    values (float64) and severities (uint8), or None; an error ``{"code", "msg"}``
    or None; where it came from (``bus``, ``archive``, ``archive+bus``)."""

    t: np.ndarray | None
    v: np.ndarray | None
    sev: np.ndarray | None
    err: dict[str, str] | None
    src: str | None


def typed(obj: Any) -> np.ndarray | None:
    """A typed array of a msgpack answer, or of the JSON view."""
    if obj is None or isinstance(obj, np.ndarray):
        return obj
    dtype = np.dtype(obj["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(obj["b64"]), dtype).reshape(obj["shape"])
