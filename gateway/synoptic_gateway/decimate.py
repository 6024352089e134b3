"""Arrays and images at the resolution a widget draws them (``sub.pts``).

A value whose ``v`` is a 1-D numeric array longer than the requested points is
sent as its min/max envelope: the array's first and last element and, per bucket
(``points / 2 - 1`` equal runs of indexes), its minimum and maximum in index order.
The value keeps its other keys and gains ``x`` (``u4``: the index of each point
kept in the full array) and ``n`` (the full array's length), so a plot drawn from
it spans the same range and, at that width, looks the same as the full array.

An image (a numeric array ``[h, w]`` or ``[h, w, 3]``) wider or taller than the
points is binned by the smallest integer factor ``f`` that fits it: each pixel of
the result is the **maximum** of an ``f × f`` block (per colour), in the same
dtype; it gains ``bin`` (``f``) and ``n`` (the full image's shape).

Any other value (a scalar, a string, an array that already fits) is sent as it
is. Reduced once per (channel, points) and value, whatever the viewers. Values
shown at a moment or played back (``at.pts``, ``play.pts``) go through the same
:func:`reduce_map`, in the history service.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synoptic_gateway.extremes import extreme_indexes, kept
from synoptic_schemas.codec import decode, encode


def envelope_indexes(v: np.ndarray, points: int) -> np.ndarray:
    """Sorted indexes of ``v`` to keep: at most ``points`` (first, last, and each
    bucket's minimum and maximum; NaN ignored)."""
    n = len(v)
    buckets = max(points // 2 - 1, 1)
    starts = np.unique((np.arange(buckets, dtype=np.int64) * n) // buckets)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    extremes = extreme_indexes(v.astype(np.float64, copy=False), starts, seg)
    return np.flatnonzero(kept(n, extremes, np.array([0, n - 1])))


def bin_max(image: np.ndarray, factor: int) -> np.ndarray:
    """``image`` (``[h, w]`` or ``[h, w, c]``) binned by ``factor``: each pixel the
    maximum of its ``factor × factor`` block (edge blocks are partial; NaN ignored
    unless a whole block is NaN), same dtype."""
    h, w = image.shape[:2]
    bh, bw = -(-h // factor), -(-w // factor)
    if (bh * factor, bw * factor) != (h, w):  # pad the edge blocks with what never wins
        fill = np.nan if image.dtype.kind == "f" else np.iinfo(image.dtype).min
        pad = [(0, bh * factor - h), (0, bw * factor - w)] + [(0, 0)] * (image.ndim - 2)
        image = np.pad(image, pad, constant_values=fill)
    # one strided view per position in the block: f² passes over 1/f² of the image
    out = image[::factor, ::factor].copy()
    for dy in range(factor):
        for dx in range(factor):
            if dy or dx:
                np.fmax(out, image[dy::factor, dx::factor], out=out)
    return out


def reduce_value(raw: bytes, points: int) -> bytes:
    """The msgpack value payload ``raw`` with a 1-D numeric array of more than
    ``points`` elements reduced to its envelope, or an image wider or taller than
    ``points`` binned to fit; else ``raw`` itself."""
    try:
        msg = decode(raw)
    except Exception:  # not ours to judge: forwarded as it came
        return raw
    reduced = reduce_map(msg, points) if isinstance(msg, dict) else None
    return raw if reduced is None else encode(reduced)


def reduce_map(msg: dict[str, Any], points: int) -> dict[str, Any] | None:
    """A decoded value map reduced as :func:`reduce_value` does (a new map, its
    other keys kept), or ``None`` when it is sent as it is."""
    v = msg.get("v")
    if not isinstance(v, np.ndarray) or v.dtype.kind not in "iuf":
        return None
    image = v.ndim == 2 or (v.ndim == 3 and v.shape[2] == 3)
    if image and max(v.shape[:2]) > points:
        factor = -(-max(v.shape[:2]) // points)
        return {**msg, "v": bin_max(v, factor), "bin": factor, "n": list(v.shape)}
    if v.ndim != 1 or len(v) <= points:
        return None
    keep = envelope_indexes(v, points)
    return {**msg, "v": np.ascontiguousarray(v[keep]), "x": keep.astype("<u4"),
            "n": len(v)}  # fmt: skip
