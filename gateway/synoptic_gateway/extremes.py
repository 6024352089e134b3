"""The min/max kernel shared by the live arrays' envelope (:mod:`.decimate`) and
the history's reduction (:mod:`.history.reduce`). Pure numpy."""

from __future__ import annotations

import numpy as np


def extreme_indexes(v: np.ndarray, starts: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Per segment the index of its first minimum and first maximum (NaN ignored;
    an all-NaN segment gives its first point). ``seg`` (each point's segment) is
    in ascending order, as ``starts`` are."""
    nan = np.isnan(v)
    if nan.any():
        low, high = np.where(nan, np.inf, v), np.where(nan, -np.inf, v)
    else:  # the usual case: no copies
        low = high = v
    out = []
    for values, ufunc in ((low, np.minimum), (high, np.maximum)):
        target = ufunc.reduceat(values, starts)
        hits = np.flatnonzero(values == target[seg])
        # segments are in order: each one's first hit is where the segment changes
        hit_seg = seg[hits]
        first = np.flatnonzero(np.concatenate(([True], hit_seg[1:] != hit_seg[:-1])))
        out.append(hits[first])
    return np.concatenate(out)


def kept(n: int, *indexes: np.ndarray) -> np.ndarray:
    """A mask of ``n`` points with ``indexes`` set (cheaper than a union of sorted
    index sets: no sort)."""
    mask = np.zeros(n, dtype=bool)
    for index in indexes:
        mask[index] = True
    return mask
