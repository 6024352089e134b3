"""Cutting each channel's values into history blocks (``synoptic_schemas.blocks``):
pure bookkeeping, no I/O (the rollup service publishes what it returns).

Per channel one block grows at a time, covering a window of ``span`` seconds of
source time (windows aligned on multiples of ``span``). A block closes when a value
of a later window arrives, when it holds ``max_values``, or when the wall clock
passes its window's end by ``grace`` seconds. The next block of the channel starts
where the last one ended, so coverage is continuous; a channel's first block
covers from its window's start, or from ``grace`` after the cutter began when that
is later (values from before then may not have reached it), or from its first
value when that is earlier still. A value older than its block's window (out of
order) still goes into the growing block.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from synoptic_schemas.series import Columns

_S = 1_000_000_000


@dataclass
class _Growing:
    """One channel's block being filled."""

    a: int  # covered from (ns)
    end: int  # the window's end (ns)
    parts: list[Columns] = field(default_factory=list)
    n: int = 0
    last_t: int = 0
    #: changed since it was last published open
    dirty: bool = True

    def columns(self) -> Columns:
        return Columns.concat(self.parts) if len(self.parts) != 1 else self.parts[0]


@dataclass(frozen=True)
class Cut:
    """A block to publish: channel key, the covered window ``[a, b)``, its values."""

    key: str
    a: int
    b: int
    cols: Columns


class BlockCutter:
    """Values in (by channel key), closed and open blocks out."""

    def __init__(
        self, span: float, max_values: int, grace: float = 1.0,
        started_ns: int | None = None,
    ) -> None:  # fmt: skip
        self.span_ns = int(span * _S)
        self.max_values = max_values
        self.grace_ns = int(grace * _S)
        #: from when every value reaches the cutter
        self.sure_ns = (time.time_ns() if started_ns is None else started_ns) + (
            self.grace_ns
        )
        self._growing: dict[str, _Growing] = {}
        self._ended: dict[str, int] = {}  # key -> where its last block ended
        self._published: dict[str, int] = {}  # key -> when last published open
        self.closed = 0

    def __len__(self) -> int:
        return len(self._growing)

    def _start(self, key: str, t: int) -> _Growing:
        window = t // self.span_ns
        a = self._ended.get(key)
        if a is None:
            a = max(window * self.span_ns, self.sure_ns)
        grow = self._growing[key] = _Growing(min(a, t), (window + 1) * self.span_ns)
        return grow

    def _close(self, key: str, b: int) -> Cut:
        grow = self._growing.pop(key)
        self._ended[key] = b
        self.closed += 1
        return Cut(key, grow.a, b, grow.columns())

    def add(self, key: str, cols: Columns) -> list[Cut]:
        """Values of one channel (time order within ``cols``); returns the blocks
        they closed."""
        cut: list[Cut] = []
        t = cols.t
        i, n = 0, len(t)
        while i < n:
            grow = self._growing.get(key) or self._start(key, int(t[i]))
            # the values that belong to this block: before its window's end, and
            # no more than it has room for
            j = i + int(np.searchsorted(t[i:], grow.end, side="left"))
            j = min(j, i + self.max_values - grow.n)
            if j > i:
                grow.parts.append(Columns(t[i:j], cols.v[i:j], cols.sev[i:j]))
                grow.n += j - i
                grow.last_t = max(grow.last_t, int(t[j - 1]))
                grow.dirty = True
            if grow.n >= self.max_values:
                cut.append(self._close(key, min(grow.last_t + 1, grow.end)))
            elif j < n:  # the next value is of a later window
                cut.append(self._close(key, grow.end))
            i = j
        return cut

    def interrupt(self, now_ns: int) -> list[Cut]:
        """The connection dropped: values from now on may be missed. Every growing
        block closes, covering up to ``grace`` before now (or its last value), and
        the next blocks of every channel cover only from what arrives after
        :meth:`resume` (the raw history fills the gap)."""
        cut = [
            self._close(k, max(g.last_t + 1, min(now_ns - self.grace_ns, g.end), g.a))
            for k, g in list(self._growing.items())
        ]
        self._ended.clear()
        self.sure_ns = 2**63 - 1  # (until resumed: from each channel's first value)
        return cut

    def resume(self, now_ns: int) -> None:
        """The connection is back: every value from ``grace`` after now arrives."""
        self.sure_ns = now_ns + self.grace_ns

    def expire(self, now_ns: int) -> list[Cut]:
        """Blocks whose window ended more than ``grace`` ago."""
        late = [k for k, g in self._growing.items() if g.end + self.grace_ns < now_ns]
        return [self._close(k, self._growing[k].end) for k in late]

    def open_blocks(self, now_ns: int, quiet_every: float) -> list[Cut]:
        """The growing blocks to publish open: those changed since last time, and
        every ``quiet_every`` seconds the others (a channel quiet since its last
        block closed gets an empty one); each covers up to its last value or, if
        later, up to ``grace`` before now (nothing older can still arrive)."""
        out = []
        quiet_ns = int(quiet_every * _S)
        horizon = now_ns - self.grace_ns
        for key, g in self._growing.items():
            if g.dirty or now_ns - self._published.get(key, 0) >= quiet_ns:
                b = max(g.last_t + 1, min(horizon, g.end))
                out.append(Cut(key, g.a, b, g.columns()))
                g.dirty = False
                self._published[key] = now_ns
        for key, ended in self._ended.items():
            if key in self._growing or ended >= horizon:
                continue
            if now_ns - self._published.get(key, 0) >= quiet_ns:
                out.append(Cut(key, ended, horizon, Columns.empty()))
                self._published[key] = now_ns
        return out
