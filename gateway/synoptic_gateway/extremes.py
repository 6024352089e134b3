"""The min/max kernel shared by the live arrays' envelope (:mod:`.decimate`) and
the history's reduction (:mod:`.history.reduce`). Pure numpy."""

from __future__ import annotations

import numpy as np


def extreme_indexes(v: np.ndarray, starts: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Per segment the index of its first minimum and first maximum (NaN ignored;
    an all-NaN segment gives its first point). ``seg`` (each point's segment) is
    in ascending order, as ``starts`` are."""
    finite = np.where(np.isnan(v), np.inf, v)
    lo = np.minimum.reduceat(finite, starts)
    finite_hi = np.where(np.isnan(v), -np.inf, v)
    hi = np.maximum.reduceat(finite_hi, starts)
    out = []
    for target, values in ((lo, finite), (hi, finite_hi)):
        hits = np.flatnonzero(values == target[seg])
        # segments are in order: each one's first hit is where the segment changes
        hit_seg = seg[hits]
        first = np.flatnonzero(np.concatenate(([True], hit_seg[1:] != hit_seg[:-1])))
        out.append(hits[first])
    return np.concatenate(out)
