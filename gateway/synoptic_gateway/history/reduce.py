"""Reducing a channel's history to what a plot of some pixels can show.

At most ``2 * px`` points come out: the first and the last point of the range,
per time bucket (``px - 1`` equal buckets) the bucket's minimum and maximum in
time order, and the points where the severity changes while that budget allows
(the earliest first). A series that already fits is returned whole. Pure numpy,
no per-point Python.
"""

from __future__ import annotations

import numpy as np

from synoptic_gateway.extremes import extreme_indexes, kept
from synoptic_schemas.series import Columns


def reduce_columns(cols: Columns, t0_ns: int, t1_ns: int, px: int) -> Columns:
    """``cols`` (time-ordered) within ``[t0_ns, t1_ns]`` reduced to at most
    ``2 * px`` points (see the module's docstring)."""
    t, v, sev = cols.arrays()
    lo = np.searchsorted(t, t0_ns, side="left")
    hi = np.searchsorted(t, t1_ns, side="right")
    t, v, sev = t[lo:hi], v[lo:hi], sev[lo:hi]
    n = len(t)
    budget = 2 * px
    if n <= budget:
        return Columns(t, v, sev, cols.bad)
    buckets = px - 1  # 2 points each, and the first and the last
    ends = np.array([0, n - 1])
    if buckets == 0:
        keep = kept(n, ends)
    else:
        width = max((t1_ns - t0_ns) / buckets, 1.0)
        bucket = np.minimum(((t - t0_ns) / width).astype(np.int64), buckets - 1)
        starts = np.concatenate(([0], np.flatnonzero(bucket[1:] != bucket[:-1]) + 1))
        seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
        keep = kept(n, extreme_indexes(v, starts, seg), ends)
    room = budget - int(np.count_nonzero(keep))
    if room > 0:
        changes = np.flatnonzero(sev[1:] != sev[:-1]) + 1
        keep[changes[~keep[changes]][:room]] = True  # the earliest first
    index = np.flatnonzero(keep)
    return Columns(t[index], v[index], sev[index], cols.bad)
