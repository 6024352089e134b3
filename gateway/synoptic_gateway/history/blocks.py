"""Reading history as blocks (``CS_ROLL``, written by ``synoptic rollup``) with the
raw history (``CS_HIST``) for what no block covers.

Per request: the closed blocks of the range (a batched Direct Get per channel of
a trend's request, one pull consumer over the channels' ``roll.0`` subjects for
larger ones), the growing blocks (one batched Direct Get of their ``open``
subjects), then, per channel, the parts of the range that no block covers (the
last second or so; all of it where no rollup ran) from the raw history in one
more read. Each block is a few typed arrays: 15 minutes of a 10 Hz channel is 15
messages, not 9 000.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import STREAM_LAG_NS, read_range
from synoptic_bus.moment import read_run
from synoptic_bus.rollup import MAX_SPAN_S, open_stream_name
from synoptic_bus.store import fetch_last
from synoptic_schemas.blocks import Block, decode_block
from synoptic_schemas.errors import ContractError
from synoptic_schemas.series import Columns, decode_columns

_S = 1_000_000_000
#: A block is stored at most this long after its window ends (the rollup's grace
#: and tick, and some slack).
_CLOSE_LAG_NS = 5 * _S
#: Seconds a growing block read is used again (:class:`ClosedBlocks`): the
#: rollup rewrites it every tick (1 s by default), so it is no older than one
#: published then.
GROWING_KEPT_S = 1.0
#: Up to this many channels a read asks the streams by Direct Gets (a trend's
#: request); more go through one consumer.
DIRECT_CHANNELS = 16


@dataclass
class Coverage:
    """One channel's blocks and the windows they cover (merged, in order)."""

    parts: list[Columns] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    bad: int = 0

    def add(self, block: Block) -> None:
        self.parts.append(block.cols)
        self.starts.append(block.a)
        self.ends.append(block.b)

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """The covered windows as merged ``[start, end)`` arrays."""
        if not self.starts:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        order = np.argsort(self.starts)
        a = np.asarray(self.starts, np.int64)[order]
        b = np.asarray(self.ends, np.int64)[order]
        b = np.maximum.accumulate(b)
        new = np.concatenate(([True], a[1:] > b[:-1]))
        idx = np.flatnonzero(new)
        return a[idx], np.maximum.reduceat(b, idx)

    def gaps(self, t0: int, t1: int) -> list[tuple[int, int]]:
        """The parts of ``[t0, t1]`` no block covers."""
        a, b = self.merged()
        out, at = [], t0
        for s, e in zip(a.tolist(), b.tolist(), strict=True):
            if e <= at:
                continue
            if s > t1:
                break
            if s > at:
                out.append((at, s))
            at = max(at, e)
        if at <= t1:
            out.append((at, t1 + 1))
        return out


def covered(t: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which times ``t`` lie in one of the merged windows."""
    if len(starts) == 0:
        return np.zeros(len(t), bool)
    i = np.searchsorted(starts, t, side="right") - 1
    return (i >= 0) & (t < ends[np.maximum(i, 0)])


@dataclass
class BlockRead:
    """What one read found, per channel subject tail key."""

    columns: dict[str, Columns]
    values: int = 0
    truncated: bool = False
    #: messages read (blocks, growing blocks, raw values)
    messages: int = 0
    #: of which raw values
    raw_messages: int = 0
    #: per channel, the parts of the range no block covers (read from the raw
    #: history, which may not reach back that far)
    gaps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


async def read_blocks(
    nc: NatsClient,
    roll_stream: str,
    hist_stream: str,
    prefix: str,
    tails: Sequence[str],
    t0: int,
    t1: int,
    *,
    max_values: int,
    timeout: float,
    max_raw: int | None = None,
    cache: ClosedBlocks | None = None,
) -> BlockRead:
    """Each channel's values from ``t0`` to ``t1`` (ns) from blocks, and from the
    raw history where no block covers; at most ``max_values`` values in all, and
    at most ``max_raw`` messages of the raw history (more: ``truncated``). With
    ``cache``, closed blocks it holds are not read again (the growing blocks are
    read first, to tell). Raises :class:`~synoptic_bus.store.StoreError` and
    :class:`TimeoutError`."""
    cover = {tail: Coverage() for tail in tails}
    state = BlockRead({})
    closed_head, open_head = f"{prefix}.roll.0.", f"{prefix}.roll.open."

    def on_blocks(payloads: dict[str, list[bytes]]) -> None:
        for subject, batch in payloads.items():
            c = cover.get(subject[len(closed_head) :])
            if c is None:
                continue
            state.messages += len(batch)
            for data in batch:
                _take(c, data, t0, t1, state, max_values)

    until = t1 + int(MAX_SPAN_S * _S) + _CLOSE_LAG_NS  # closed blocks stored by
    max_msgs = max(max_values // 8, 1000)
    if cache is None:
        opened = fetch_last(nc, [open_head + t for t in tails],
                            stream=open_stream_name(prefix), timeout=timeout)  # fmt: skip
        # the growing blocks are read at the same time as the closed ones: one
        # that closes meanwhile leaves a gap, read raw below
        _, growing = await asyncio.gather(
            _read_each(
                nc, roll_stream, [closed_head + t for t in tails], t0, until,
                max_msgs=max_msgs, timeout=timeout, on_batch=on_blocks,
            ),
            opened,
        )  # fmt: skip
        newest = {
            subject[len(open_head) :]: _decoded(data)
            for subject, data in growing.messages.items()
        }
        state.messages += len(newest)
    else:
        newest, fetched = await _growing_kept(
            nc, open_head, open_stream_name(prefix), cache, tails, timeout
        )
        closed, state.messages = await _closed_kept(
            nc, roll_stream, closed_head, cache, newest, t0, until,
            max_msgs=max_msgs, timeout=timeout,
        )  # fmt: skip
        for tail, blocks in closed.items():
            for block in blocks:
                _take_block(cover[tail], block, t0, t1, state, max_values)
        state.messages += fetched
    for tail, block in newest.items():
        c = cover.get(tail)
        if c is not None:
            _take_block(c, block, t0, t1, state, max_values, growing=True)
    gaps = state.gaps = {tail: c.gaps(t0, t1) for tail, c in cover.items()}
    need = {tail: g for tail, g in gaps.items() if g}
    if need:
        await _raw(nc, hist_stream, prefix, need, cover, state, max_values, timeout,
                   max_values if max_raw is None else max_raw)  # fmt: skip
    for tail, c in cover.items():
        cols = Columns.concat(c.parts)
        cols.bad += c.bad
        state.columns[tail] = cols
    return state


async def _growing_kept(
    nc: NatsClient,
    open_head: str,
    open_stream: str,
    cache: ClosedBlocks,
    tails: Sequence[str],
    timeout: float,
) -> tuple[dict[str, Block | None], int]:
    """Each channel's growing block (None: one that did not decode; none: the
    channel has none), from ``cache`` where it read it within the rollup's tick,
    the others' in one batched Direct Get, then kept; and how many were read."""
    newest, stale = cache.growing(tails)
    if stale:
        found = await fetch_last(
            nc, [open_head + t for t in stale], stream=open_stream, timeout=timeout
        )
        read = {
            subject[len(open_head) :]: _decoded(data)
            for subject, data in found.messages.items()
        }
        cache.add_growing(stale, read)
        newest.update(read)
        return newest, len(read)
    return newest, 0


async def _closed_kept(
    nc: NatsClient,
    roll_stream: str,
    closed_head: str,
    cache: ClosedBlocks,
    growing: dict[str, Block | None],
    since: int,
    until: int,
    *,
    max_msgs: int,
    timeout: float,
) -> tuple[dict[str, list[Block | None]], int]:
    """Per channel of ``growing`` (its growing block by tail), its closed blocks
    stored from ``since`` to ``until`` (None: one that did not decode), and the
    messages read: from ``cache`` where it holds them all (the growing block
    starts where the newest one held ends), the others' from the stream in one
    read, then kept."""
    out: dict[str, list[Block | None]] = {}
    for tail, block in growing.items():
        held = cache.blocks(tail, since, until, block)
        if held is not None:
            out[tail] = list(held)
    rest = [tail for tail in growing if tail not in out]
    if not rest:
        return out, 0
    found: dict[str, dict[int, Block]] = {tail: {} for tail in rest}
    for tail in rest:
        out[tail] = []

    def on_stored(subject: str, stored: int, data: bytes) -> None:
        tail = subject[len(closed_head) :]
        if tail not in found:
            return
        block = _decoded(data)
        out[tail].append(block)
        if block is not None:
            found[tail][stored] = block

    started = time.time_ns()
    read = await read_range(
        nc, roll_stream, [closed_head + t for t in rest], since, until,
        max_msgs=max_msgs, timeout=timeout, on_stored=on_stored,
    )  # fmt: skip
    if not read.truncated:
        # every block stored then is in: up to the read's start (less the hosts'
        # clocks' difference) or to its end
        for tail, blocks in found.items():
            cache.add(tail, since, min(until, started - STREAM_LAG_NS), blocks)
    return out, read.count


def _decoded(data: bytes) -> Block | None:
    try:
        return decode_block(data)
    except ContractError:
        return None


@dataclass
class _Held:
    """One channel's closed blocks, each by its store time: all of those stored
    from ``since`` to ``until``."""

    since: int
    until: int
    blocks: dict[int, Block]
    nbytes: int

    @property
    def newest_end(self) -> int | None:
        """Where the block stored last ends (none held: None)."""
        return self.blocks[max(self.blocks)].b if self.blocks else None


class ClosedBlocks:
    """Closed history blocks read before, per channel (a closed block never
    changes): the blocks a read found stored over a span of store time, kept up to
    ``max_bytes`` of columns (the channels read least recently dropped first).
    A span that reaches the present still holds every closed block while the
    channel's growing block starts where the newest one held ends.

    Each channel's growing block, which the rollup rewrites every tick, is also
    used again for ``growing_s`` after it was read: 20 viewers playing back the
    same screen read it once a second, not at each of their stretches (each a
    batched Direct Get of the screen's blocks, megabytes for nats-server to
    send and the history service to decode)."""

    def __init__(
        self, max_bytes: int = 64 << 20, growing_s: float = GROWING_KEPT_S
    ) -> None:
        self.max_bytes = max_bytes
        self.growing_s = growing_s
        self.bytes = 0
        #: reads of a channel's closed blocks answered from here
        self.hits = 0
        self._held: OrderedDict[str, _Held] = OrderedDict()
        #: channel -> when its growing block was read (monotonic s) and the block
        #: (absent: it had none; None: it did not decode), oldest read first
        self._growing: OrderedDict[str, tuple[float, bool, Block | None]] = (
            OrderedDict()
        )

    def growing(
        self, tails: Sequence[str]
    ) -> tuple[dict[str, Block | None], list[str]]:
        """The growing blocks of ``tails`` read within ``growing_s`` (by tail:
        those that had one), and the tails to read again."""
        now = time.monotonic()
        while self._growing:  # forget the blocks read too long ago
            tail, (read_at, _, _) = next(iter(self._growing.items()))
            if now - read_at < self.growing_s:
                break
            del self._growing[tail]
        found: dict[str, Block | None] = {}
        stale: list[str] = []
        for tail in tails:
            kept = self._growing.get(tail)
            if kept is None:
                stale.append(tail)
            elif kept[1]:
                found[tail] = kept[2]
        return found, stale

    def add_growing(self, tails: Sequence[str], found: dict[str, Block | None]) -> None:
        """The growing blocks of ``tails`` just read (by tail: those that had
        one)."""
        now = time.monotonic()
        for tail in tails:
            self._growing.pop(tail, None)
            self._growing[tail] = (now, tail in found, found.get(tail))

    def blocks(
        self, tail: str, since: int, until: int, growing: Block | None
    ) -> list[Block] | None:
        """The closed blocks of ``tail`` stored from ``since`` to ``until`` (ns),
        or None where some may be missing (``growing``: its growing block now)."""
        held = self._held.get(tail)
        if held is None or held.since > since:
            return None
        if until > held.until and (
            growing is None or held.newest_end is None or growing.a != held.newest_end
        ):
            return None  # a block may have closed since
        self._held.move_to_end(tail)
        self.hits += 1
        return [b for stored, b in held.blocks.items() if since <= stored <= until]

    def add(self, tail: str, since: int, until: int, blocks: dict[int, Block]) -> None:
        """``tail``'s closed blocks stored from ``since`` to ``until``, all of them
        (by store time); joined to those held where the two spans meet."""
        held = self._held.pop(tail, None)
        if held is not None:
            self.bytes -= held.nbytes
            if held.since <= until and since <= held.until:
                blocks = {**held.blocks, **blocks}
                since, until = min(since, held.since), max(until, held.until)
        nbytes = sum(b.cols.t.nbytes + b.cols.v.nbytes + b.cols.sev.nbytes
                     for b in blocks.values())  # fmt: skip
        self._held[tail] = _Held(since, until, blocks, nbytes)
        self.bytes += nbytes
        while self.bytes > self.max_bytes and self._held:
            _, dropped = self._held.popitem(last=False)
            self.bytes -= dropped.nbytes


def _take(
    c: Coverage, data: bytes, t0: int, t1: int, state: BlockRead, max_values: int,
    *, growing: bool = False,
) -> None:  # fmt: skip
    """One block's payload into a channel's coverage (:func:`_take_block`)."""
    _take_block(c, _decoded(data), t0, t1, state, max_values, growing=growing)


def _take_block(
    c: Coverage, block: Block | None, t0: int, t1: int, state: BlockRead,
    max_values: int, *, growing: bool = False,
) -> None:  # fmt: skip
    """One block into a channel's coverage (None: one that did not decode,
    counted bad). A growing block read after it closed
    (its window starts inside a closed block's) adds only what the closed ones do
    not cover; the current growing block adds all its values, late ones included
    (a value that reached the rollup after its own window closed is in the next
    block, with a time before that block's window)."""
    if block is None:
        c.bad += 1
        return
    if block.b <= t0 or block.a > t1:
        return
    if growing and len(c.starts):
        a, b = c.merged()
        stale = covered(np.array([block.a], np.int64), a, b)[0]
        keep = ~covered(block.cols.t, a, b) if stale else slice(None)
        cols = block.cols
        block = Block(
            block.a, block.b, Columns(cols.t[keep], cols.v[keep], cols.sev[keep])
        )
    if state.values + len(block.cols) > max_values:
        state.truncated = True
        return
    state.values += len(block.cols)
    c.add(block)


async def _raw(
    nc: NatsClient,
    hist_stream: str,
    prefix: str,
    need: dict[str, list[tuple[int, int]]],
    cover: dict[str, Coverage],
    state: BlockRead,
    max_values: int,
    timeout: float,
    max_raw: int,
) -> None:
    """The uncovered parts from the raw history: one read per cluster of gaps
    that overlap in time (typically two: before the channels' first blocks, and
    the last second or so), each filtered on the channels with a gap in it; at
    most ``max_raw`` messages in all."""
    head = f"{prefix}.hist.val."
    windows = {
        tail: (
            np.array([s for s, _ in g], np.int64),
            np.array([e for _, e in g], np.int64),
        )
        for tail, g in need.items()
    }

    def on_batch(payloads: dict[str, list[bytes]]) -> None:
        for subject, batch in payloads.items():
            tail = subject[len(head) :]
            w = windows.get(tail)
            if w is None:
                continue
            state.messages += len(batch)
            state.raw_messages += len(batch)
            cols = decode_columns(batch)
            keep = covered(cols.t, *w)
            if not keep.all():
                cols = Columns(cols.t[keep], cols.v[keep], cols.sev[keep], cols.bad)
            if state.values + len(cols) > max_values:
                state.truncated = True
                continue
            state.values += len(cols)
            cover[tail].parts.append(cols)

    for start, end, tails in _clusters(need):
        left = min(max_values - state.values, max_raw - state.raw_messages)
        if left <= 0:
            state.truncated = True
            return
        state.truncated |= await _read_each(
            nc, hist_stream, [head + t for t in sorted(tails)], start, end,
            max_msgs=left, timeout=timeout, on_batch=on_batch,
        )  # fmt: skip


async def _read_each(
    nc: NatsClient,
    stream: str,
    subjects: list[str],
    start: int,
    end: int,
    *,
    max_msgs: int,
    timeout: float,
    on_batch: Callable[[dict[str, list[bytes]]], None],
) -> bool:
    """The messages of ``subjects`` stored from ``start`` to ``end`` (ns) to
    ``on_batch``; returns whether ``max_msgs`` cut the read short. A few channels
    are read by Direct Gets, all at once (one round trip each); more through a
    consumer (create, pull, delete: three round trips, however many channels)."""
    if len(subjects) > DIRECT_CHANNELS:
        read = await read_range(nc, stream, subjects, start, end, max_msgs=max_msgs,
                                timeout=timeout, on_batch=on_batch)  # fmt: skip
        return read.truncated
    share = max(max_msgs // len(subjects), 1)
    runs = await asyncio.gather(*(
        read_run(nc, stream, subject, start, end + STREAM_LAG_NS, max_msgs=share,
                 timeout=timeout)
        for subject in subjects
    ))  # fmt: skip
    payloads = {
        s: [m.data for m in run]
        for s, (run, _) in zip(subjects, runs, strict=True)
        if run
    }
    if payloads:
        on_batch(payloads)
    return any(cut for _, cut in runs)


def _clusters(
    need: dict[str, list[tuple[int, int]]],
) -> list[tuple[int, int, set[str]]]:
    """Gaps of all channels merged where they overlap: ``(start, end, tails)``."""
    gaps = sorted((s, e, tail) for tail, g in need.items() for s, e in g)
    out: list[tuple[int, int, set[str]]] = []
    for s, e, tail in gaps:
        if out and s <= out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], e), last[2] | {tail})
        else:
            out.append((s, e, {tail}))
    return out
