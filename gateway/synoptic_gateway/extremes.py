"""The min/max kernel shared by the live arrays' envelope (:mod:`.decimate`) and
the history's reduction (:mod:`.history.reduce`). Pure numpy."""

from __future__ import annotations

import numpy as np


def extreme_indexes(v: np.ndarray, starts: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Per segment the index of its first minimum and first maximum (NaN ignored;
    an all-NaN segment gives its first point)."""
    finite = np.where(np.isnan(v), np.inf, v)
    lo = np.minimum.reduceat(finite, starts)
    finite_hi = np.where(np.isnan(v), -np.inf, v)
    hi = np.maximum.reduceat(finite_hi, starts)
    out = []
    for target, values in ((lo, finite), (hi, finite_hi)):
        hits = np.flatnonzero(values == target[seg])
        _, first = np.unique(seg[hits], return_index=True)
        out.append(hits[first])
    return np.concatenate(out)
