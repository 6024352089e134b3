"""Array updates as a shift of the previous one (``sub.shift``).

A circular buffer ("the last N samples") changes by a few samples at a time: each
update is the previous array without its first ``k`` elements, followed by a few
new ones (while it fills, ``k`` is 0 and the array grows). A group whose sockets
accept the shift form sends such an update as ``sh`` (``k``), ``tail`` (the new
elements) and ``base`` (the seq of the value it follows) in place of ``v``, when
the group's previous value of that channel (same ``ep``) is that base and the tail
is at most half the array. Computed once per group and update, never per socket.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synoptic_gateway.group import Group
from synoptic_schemas import frames
from synoptic_schemas.codec import decode, encode

#: Values of fewer bytes are sent as they are (scalars and short arrays: the shift
#: form would save little, and the group keeps no copy of them).
MIN_BYTES = 512
#: Candidate shifts verified per update, at most (each costs one comparison of
#: the overlap): a signal with many repeats of the new array's first element
#: (a flat line) is sent whole rather than searched.
MAX_CANDIDATES = 8

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def find_shift(prev: np.ndarray, new: np.ndarray, max_tail: int) -> int | None:
    """The smallest ``k`` such that ``new == concat(prev[k:], tail)`` with a tail
    of at most ``max_tail`` elements and at least one element in common, compared
    bit for bit (NaN equals the same NaN); ``None`` if there is none (other dtype,
    not 1-D, no overlap, or more than :data:`MAX_CANDIDATES` candidates tried)."""
    if (
        prev.dtype != new.dtype
        or prev.ndim != 1
        or new.ndim != 1
        or prev.dtype.kind not in "iuf"
        or prev.dtype.itemsize not in _UINT
    ):
        return None
    n_prev, n_new = len(prev), len(new)
    # the overlap m = n_prev - k: at most n_new, at least n_new - max_tail and 1
    k_min = max(n_prev - n_new, 0)
    k_max = min(n_prev - 1, n_prev - n_new + max_tail)
    if n_new == 0 or k_min > k_max:
        return None
    bits = _UINT[prev.dtype.itemsize]
    p, q = prev.view(bits), new.view(bits)
    candidates = np.flatnonzero(p[k_min : k_max + 1] == q[0])[:MAX_CANDIDATES]
    for k in (candidates + k_min).tolist():
        if np.array_equal(p[k:], q[: n_prev - k]):
            return k
    return None


class Shifts:
    """One group's last value of each channel it sent as a full-resolution array
    (``ep``, ``seq``, array), and the shift form of the next ones."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[int, tuple[Any, Any, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._last)

    def forget(self, index: int) -> None:
        """Channel ``index`` was sent otherwise (reduced): its next value is full."""
        self._last.pop(index, None)

    def shifted(self, index: int, raw: bytes) -> bytes:
        """The payload to send for the value ``raw`` of channel ``index``: its
        shift form when it is one of the last array sent, else ``raw``."""
        last = self._last
        if len(raw) < MIN_BYTES:
            if last:  # the next value must not shift against an older array
                last.pop(index, None)
            return raw
        try:
            msg = decode(raw)
        except Exception:  # not ours to judge: forwarded as it came
            last.pop(index, None)
            return raw
        v = msg.get("v")
        if not isinstance(v, np.ndarray) or v.ndim != 1 or v.dtype.kind not in "iuf":
            last.pop(index, None)
            return raw
        ep, seq = msg.get("ep"), msg.get("seq")
        before = last.get(index)
        last[index] = (ep, seq, v)
        if before is None or before[0] != ep:
            return raw
        k = find_shift(before[2], v, len(v) // 2)
        if k is None:
            return raw
        del msg["v"]
        msg[frames.SHIFT] = k
        msg[frames.SHIFT_TAIL] = np.ascontiguousarray(v[len(before[2]) - k :])
        msg[frames.SHIFT_BASE] = before[1]
        return encode(msg)


class ShiftGroup(Group):
    """A group whose sockets accept the shift form (``sub.shift``): never shared
    with sockets that do not. An array of a channel in its ``pts`` is shifted
    when it is sent at full resolution (it fits), never when it is reduced."""

    shift = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shifts = Shifts()
        for index, state in enumerate(self.states):  # what its snapshots hold
            if state.value is not None and self._full(index, state.value):
                self.shifts.shifted(index, state.value)

    def _full(self, index: int, raw: bytes) -> bool:
        """Whether the group sends ``raw`` at full resolution (not reduced)."""
        points = self.points.get(index)
        return points is None or self.states[index].reduced_to(raw, points) is raw

    def push_value(self, index: int, raw: bytes, t: int) -> None:
        if not self._full(index, raw):  # sent reduced (``sub.pts``)
            self.shifts.forget(index)
            super().push_value(index, raw, t)
            return
        out = self.shifts.shifted(index, raw)
        if out is raw or index not in self.points:
            super().push_value(index, out, t)
            return
        # a shift of an array that fits its points: sent as it is, not reduced
        # again (push_value never awaits: the group's points are back at once)
        points, self.points = self.points, {}
        try:
            super().push_value(index, out, t)
        finally:
            self.points = points
