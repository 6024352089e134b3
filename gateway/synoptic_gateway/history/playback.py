"""One stretch of a playback: the changes of a screen's channels stored in a span
of bus time, cut into the frames the socket will show.

A playback (:mod:`synoptic_gateway.playback`) asks for one stretch per second of
wall time; this reads the span's values (``CS_HIST`` and the large values of
``CS_ARRAYS``) and metadata (``CS_META``) by store time, as ``at`` does, and cuts
it into frames ``step`` ms of bus time apart. Each frame holds, per channel that
changed within it, only its last value (what a viewer could see at that frame
rate) and the metadata that changed; a value of a channel in the playback's
``pts`` reduced as a live subscription's, once. The frames come back encoded for
the socket, with the moment each shows: ``[[t_ms, frame], …]`` as msgpack.

A fast playback's stretch holds far more values than it shows (60 s of 100
channels at 10 Hz: 60 000 values for 30 frames of 100): where the raw history
holds more values in the span than a quarter of channels times frames (the
messages a read of every value takes before it gives up), the stretch is dense.
Its numbers come from the history blocks (``CS_ROLL``, a block or two per
channel, by source time) where they show what the raw history would: a channel
whose values shown are numbers of no severity (its status text and type are
those of its value at the span's start, read raw). The other channels' values
are read as an ``at`` reads them, each channel's last value at each frame's end
(one batched Direct Get per frame, a backward scan per subject in nats-server),
those that changed since the frame before shown: the same frames for a
twentieth of the messages. A playback found dense goes on so without trying the
whole read first: on the blocks while they show it, however quiet its stretches
become; else sampled, trying a whole read every eighth stretch. Metadata and
large values, which change seldom, are read only for the channels that stored
one in the span: known from when each one's newest was stored, as last asked
(:class:`LatestStored`: no request for a span before then), no consumer where
none changed.

The part of a span older than the raw history's oldest value (its byte budget or
max age) is read from the rollup's history blocks instead (``CS_ROLL``: numbers
and severities by source time, as an ``at`` of such a moment answers).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import msgpack
import numpy as np

from synoptic_bus.arrays import arrays_stream_name
from synoptic_bus.connect import NatsClient
from synoptic_bus.history import read_range
from synoptic_bus.metahistory import meta_stream_name
from synoptic_bus.moment import Stored, first_kept, last_at
from synoptic_bus.rollup import rollup_stream_name
from synoptic_bus.store import StoreError, history_stream_name
from synoptic_gateway.history.blocks import ClosedBlocks, read_blocks
from synoptic_gateway.history.latest import LatestStored
from synoptic_gateway.history.moment import is_newer, ns_of_ms, points_of, reduced
from synoptic_gateway.history.older import Point, value_map
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_schemas import ChannelError, DecodeError, Subjects, frames, parse_channel
from synoptic_schemas.codec import decode
from synoptic_schemas.frames.order import value_order
from synoptic_schemas.subjects import subject_tail

_MS = 1_000_000
#: Large values (arrays, images) read per stretch at most: a second of wall time
#: at 600× spans ten minutes, over which the thinned stream keeps a few each.
MAX_LARGE_PER_STRETCH = 64
#: Frames' ends read at once from the raw history (one Direct Get each) where a
#: stretch holds more values than channels times frames.
SAMPLES_AT_ONCE = 4
#: A playback sampled once (and not shown from the history blocks) samples its
#: next stretches at once, but for every this many, which try a whole read again
#: (its channels may have quietened).
SAMPLED_RETRY = 8
#: Playbacks (channels and frame step) remembered as sampled, at most.
DENSE_KEPT = 256
#: Channels whose status text and number type are remembered, at most.
MAKERS_KEPT = 65_536


@dataclass(frozen=True)
class Span:
    """A stretch's times (ns): from ``t0`` (excluded) to ``t1``, cut into frames
    ``step`` apart (the last one ends at ``t1``)."""

    t0: int
    t1: int
    step: int

    @cached_property
    def n(self) -> int:
        """How many frames."""
        return max((self.t1 - self.t0 + self.step - 1) // self.step, 1)

    @cached_property
    def ends(self) -> list[int]:
        """Where each frame ends."""
        return [min(self.t0 + (k + 1) * self.step, self.t1) for k in range(self.n)]

    def frame_of(self, t: int) -> int:
        """The frame a time in the span falls in."""
        return min((t - self.t0 - 1) // self.step, self.n - 1)


class StretchReader:
    """Answers the gateway's internal ``pbread`` requests."""

    def __init__(self, settings: Settings, connection: Any) -> None:
        self._settings = settings
        self._connection = connection
        self._subjects = Subjects(settings.prefix)
        self._raw = history_stream_name(settings.prefix)
        self._arrays = arrays_stream_name(settings.prefix)
        self._meta = meta_stream_name(settings.prefix)
        self._roll = rollup_stream_name(settings.prefix)
        #: values read, in all
        self.values_in = 0
        #: stretches too dense to read whole (more values than a quarter of frames ×
        #: channels): read from the blocks, or at their frames' ends
        self.sampled = 0
        #: whole reads of a stretch tried (a dense one gives up)
        self.read_whole = 0
        #: of the sampled, stretches whose channels the history blocks showed
        self.from_blocks = 0
        #: False: every stretch read whole (the reference its frames equal)
        self.sampling = True
        #: False: dense stretches read from the raw history alone
        self.blocks = True
        #: raw subject -> how a block's point of it becomes a value map (its
        #: status text of no severity and its number's type), as last found
        self._makers: OrderedDict[str, Callable[[float, int], dict[str, Any]]] = (
            OrderedDict()
        )
        #: closed history blocks read before (they never change)
        self._closed = ClosedBlocks()
        #: when each channel's metadata and large value were last stored
        self._latest = LatestStored()
        #: playbacks (raw subjects, span in ms) last sampled -> stretches sampled since
        #: their last whole read was tried
        self._dense: OrderedDict[tuple[tuple[str, ...], int], int] = OrderedDict()

    async def answer(self, frame: dict[str, Any], principal: Principal) -> bytes:
        """The frames of ``frame["t0"]`` < stored ≤ ``frame["t1"]`` (ms), each
        ``frame["step"]`` ms, for ``frame["ch"]`` (the playback's channels, in the
        order its ``at`` answer gave); raises :class:`StoreError`."""
        span = Span(
            ns_of_ms(frame["t0"]),
            min(ns_of_ms(frame["t1"]), time.time_ns()),
            max(ns_of_ms(frame["step"]), 1),
        )
        t0_ns, t1_ns, n = span.t0, span.t1, span.n
        index: dict[str, int] = {}
        tails: dict[str, int] = {}
        s = self._subjects
        for i, uri in enumerate(frame["ch"]):
            try:
                channel = parse_channel(uri)
            except ChannelError:
                continue
            if principal.may_read(channel.uri):
                for subject in (s.hist(channel), s.hist_large(channel),
                                s.hist_meta(channel)):  # fmt: skip
                    index[subject] = i
                tails[subject_tail(channel)] = i
        # per frame, channel index -> its last value in the frame (a payload, or
        # a value map made from a block)
        values: list[dict[int, bytes | dict[str, Any]]] = [{} for _ in range(n)]
        metas: list[dict[int, bytes]] = [{} for _ in range(n)]
        meta_head = f"{self._settings.prefix}.hist.meta."

        found: list[tuple[int, int, bool, bytes]] = []

        def on_stored(subject: str, stored: int, data: bytes) -> None:
            i = index.get(subject)
            if i is not None and t0_ns < stored <= t1_ns:
                found.append((stored, i, subject.startswith(meta_head), data))

        nc: NatsClient = self._connection()
        timeout = self._settings.hist_timeout
        subjects = [x for x in index if x.startswith(f"{self._settings.prefix}.hist.")]
        raw = [x for x in subjects if ".hist.val." in x]
        # every value of the span where there are fewer than one per channel and
        # four frames; else each channel's last value at each frame's end (a fast
        # playback: 60 s of 100 channels at 10 Hz are 60 000 values for 30 frames)
        samples = max((n + 1) * len(raw) // 4, 1)
        raw_found: list[tuple[int, int, bool, bytes]] = []

        def on_raw(subject: str, stored: int, data: bytes) -> None:
            if t0_ns < stored <= t1_ns:
                raw_found.append((stored, index[subject], False, data))

        # a playback whose stretches were too dense to read whole stays so: its
        # next stretches are sampled at once (every SAMPLED_RETRY-th tries again)
        # (by the span, not the frame step: that moves with the playbacks at once)
        key = (tuple(raw), round(frame["t1"] - frame["t0"]))
        dense = self._dense.get(key)
        if dense is not None and dense % SAMPLED_RETRY and self.sampling:
            truncated = True
        else:
            self.read_whole += 1
            read = await read_range(
                nc, self._raw, raw, t0_ns + 1, t1_ns,
                max_msgs=min(samples if self.sampling else 1 << 62,
                             self._settings.hist_max_points),
                timeout=timeout, on_stored=on_raw,
            )  # fmt: skip
            self.values_in += read.count
            truncated = read.truncated
        exact = raw  # the channels whose values come from the raw history
        if not (truncated and self.sampling):
            self._dense.pop(key, None)
        else:
            self.sampled += 1
            # known dense at once: the playback's other stretches, read meanwhile
            # (and other viewers' playbacks of the same channels), try no whole read
            self._dense[key] = (dense or 0) + 1
            self._dense.move_to_end(key)
            while len(self._dense) > DENSE_KEPT:
                self._dense.popitem(last=False)
            if self.blocks:
                exact, counted = await self._from_blocks(nc, raw, index, span, values)
                # a playback the blocks show stays on them, however few values
                # its next stretches hold (a whole read costs the bus server a
                # consumer over every channel: more than reading the growing
                # blocks); one they do not show stays sampled while its
                # stretches are too dense to read whole
                if counted is not None and (counted > samples or exact != raw):
                    self._dense[key] = 1
                elif counted is not None:
                    self._dense.pop(key, None)
            raw_found = await self._sampled(nc, exact, index, span)
        found.extend(raw_found)
        by_stream = {
            self._arrays: ([x for x in subjects if ".hist.arr." in x],
                           MAX_LARGE_PER_STRETCH),
            self._meta: ([x for x in subjects if ".hist.meta." in x], 10_000),
        }  # fmt: skip
        for stream, (wanted, limit) in by_stream.items():
            try:
                changed = await self._latest.stored_in(
                    nc, stream, wanted, t0_ns, t1_ns, timeout=timeout
                )
                if not changed:
                    continue
                read = await read_range(
                    nc, stream, changed, t0_ns + 1, t1_ns, max_msgs=limit,
                    timeout=timeout, on_stored=on_stored,
                )  # fmt: skip
            except StoreError:
                continue  # no rollup (no large values) or no metadata history
            self.values_in += read.count
        if exact is not raw:
            head = f"{self._settings.prefix}.hist.val."
            tails = {x[len(head) :]: index[x] for x in exact}
        await self._older(nc, tails, span, values)
        # in store order; a large value stored (by the rollup, at its tick) after
        # a newer value of its channel is not shown after it
        found.sort(key=lambda x: x[0])
        newest: dict[int, tuple[int, int, int]] = {}
        for stored, i, is_meta, data in found:
            k = span.frame_of(stored)
            if is_meta:
                metas[k][i] = data
                continue
            try:
                order = value_order(data)
            except DecodeError:
                continue
            if i in newest and not is_newer(order, newest[i]):
                continue
            newest[i] = order
            values[k][i] = data
        json_mode = bool(frame.get("json"))
        points = points_of(frame)
        at_points = [points.get(uri) for uri in frame["ch"]]
        out = []
        for k, end in enumerate(span.ends):
            t_ms = end / _MS
            changed = sorted(values[k])
            meta_changed = sorted(metas[k])
            shown = [reduced(_shown(values[k][i]), at_points[i]) for i in changed]
            reply = frames.pb(
                frame["id"], t_ms, changed, shown,
                meta_indexes=meta_changed,
                metas=[_decoded(metas[k][i]) for i in meta_changed],
            )  # fmt: skip
            out.append(
                [t_ms, frames.to_json(reply) if json_mode else frames.pack(reply)]
            )
        return msgpack.packb(out, use_bin_type=True)

    async def _from_blocks(
        self,
        nc: NatsClient,
        subjects: list[str],
        index: dict[str, int],
        span: Span,
        values: list[dict[int, bytes | dict[str, Any]]],
    ) -> tuple[list[str], int | None]:
        """Each frame's last value of the channels the history blocks can show
        into ``values``; returns the raw subjects of the others, and how many
        values the span holds (none where the blocks were not read). A stretch of 100
        channels at 10 Hz is then a read of a block or two per channel instead of
        a batched Direct Get per frame (each a backward scan per subject in
        nats-server).

        Blocks keep numbers and severities by source time: they show a channel
        whose values shown in the span are numbers of no severity, and whose
        value at the span's start (read raw, once per channel) is one too, for its
        status text and its number's type; where the raw history does not reach
        back to it, as :mod:`~synoptic_gateway.history.older` shows them.
        Closed blocks read once are kept (:class:`ClosedBlocks`): viewers
        replaying the same minutes read only the growing blocks again."""
        head = f"{self._settings.prefix}.hist.val."
        t0_ns, t1_ns = span.t0, span.t1
        timeout = self._settings.hist_timeout
        # the channels whose status text and type no earlier stretch told
        unknown = [x for x in subjects if x not in self._makers]
        try:
            read, *told = await asyncio.gather(
                read_blocks(
                    nc, self._roll, self._raw, self._settings.prefix,
                    [x[len(head) :] for x in subjects], t0_ns + 1, t1_ns,
                    max_values=self._settings.hist_max_points,
                    # no more raw messages than sampling the span would read
                    max_raw=(span.n + 1) * len(subjects), timeout=timeout,
                    cache=self._closed,
                ),
                *((last_at(nc, self._raw, unknown, t0_ns, timeout=timeout),
                   first_kept(nc, self._raw, f"{head}>", timeout=timeout))
                  if unknown else ()),
            )  # fmt: skip
        except (StoreError, TimeoutError):
            return subjects, None  # no rollup
        if read.truncated:
            return subjects, None
        self.values_in += read.values
        counted = 0
        before, first = told if told else ({}, None)
        older = first is None or t0_ns < first.stored_ns  # than the raw history
        ends = np.array(span.ends, np.int64)
        exact: list[str] = []
        for subject in subjects:
            cols = read.columns.get(subject[len(head) :])
            if cols is None:
                exact.append(subject)
                continue
            t, v, sev = cols.t, cols.v, cols.sev
            last = np.searchsorted(t, ends, side="right") - 1
            prev = np.concatenate(
                ([np.searchsorted(t, t0_ns, side="right") - 1], last[:-1])
            )
            counted += int(last[-1] - prev[0])
            made = self._maker_of(subject, before.get(subject), older)
            if made is None or cols.bad:
                exact.append(subject)
                continue
            frames_changed = np.flatnonzero(last != prev)
            picked = last[frames_changed]
            if sev[picked].any() or np.isnan(v[picked]).any():
                exact.append(subject)  # a status text or a non-number: raw
                continue
            i = index[subject]
            for k, j in zip(frames_changed.tolist(), picked.tolist(), strict=True):
                values[k][i] = made(float(v[j]), int(t[j]))
        if len(exact) < len(subjects):
            self.from_blocks += 1
        return exact, counted

    def _maker_of(
        self, subject: str, stored: Stored | None, older: bool
    ) -> Callable[[float, int], dict[str, Any]] | None:
        """The value maker of ``subject``: the one an earlier stretch found, else
        from its value at the stretch's start (``stored``; where the raw history
        does not reach back that far, a block's point as the older history
        shows it)."""
        made = self._makers.get(subject)
        if made is not None:
            self._makers.move_to_end(subject)
            return made
        if stored is None:
            return _kept if older else None
        made = _maker(stored)
        if made is not None:
            self._makers[subject] = made
            while len(self._makers) > MAKERS_KEPT:
                self._makers.popitem(last=False)
        return made

    async def _sampled(
        self,
        nc: NatsClient,
        subjects: list[str],
        index: dict[str, int],
        span: Span,
    ) -> list[tuple[int, int, bool, bytes]]:
        """The raw history's values at the span's start and at the end of each
        of its frames (one batched Direct Get each): those that changed from one
        frame's end to the next, as ``(stored, channel index, False, payload)``,
        ``stored`` the end of the frame it changed in (its own store time is not
        parsed: that cost more than the rest of the stretch)."""
        ends = [span.t0, *span.ends]
        slots = asyncio.Semaphore(SAMPLES_AT_ONCE)
        timeout = self._settings.hist_timeout

        async def at(end: int) -> dict[str, Stored]:
            async with slots:
                return await last_at(nc, self._raw, subjects, end, timeout=timeout)

        states = await asyncio.gather(*(at(end) for end in ends))
        out: list[tuple[int, int, bool, bytes]] = []
        for end, (before, after) in zip(
            ends[1:], itertools.pairwise(states), strict=True
        ):
            self.values_in += len(after)
            for subject, stored in after.items():
                was = before.get(subject)
                if was is None or was.seq != stored.seq:
                    out.append((end, index[subject], False, stored.data))
        return out

    async def _older(
        self,
        nc: NatsClient,
        tails: dict[str, int],
        span: Span,
        values: list[dict[int, bytes | dict[str, Any]]],
    ) -> None:
        """The part of the span older than the raw history's oldest value, from
        the blocks: per frame and channel its last value (a frame the raw history
        also has values in takes those after)."""
        if not tails:
            return
        timeout = self._settings.hist_timeout
        try:
            first = await first_kept(
                nc, self._raw, f"{self._settings.prefix}.hist.val.>", timeout=timeout
            )
        except (StoreError, TimeoutError):
            return
        t0_ns = span.t0
        end = min(span.t1, first.stored_ns - 1) if first is not None else span.t1
        if end <= t0_ns:
            return
        try:
            read = await read_blocks(
                nc, self._roll, self._raw, self._settings.prefix, list(tails),
                t0_ns + 1, end, max_values=self._settings.hist_max_points,
                timeout=timeout,
            )  # fmt: skip
        except (StoreError, TimeoutError):
            return  # no rollup: nothing older than the raw history
        for tail, cols in read.columns.items():
            i = tails[tail]
            self.values_in += len(cols)
            for t, v, sev in zip(
                cols.t.tolist(), cols.v.tolist(), cols.sev.tolist(), strict=True
            ):
                if t0_ns < t <= end and v == v:  # NaN: not a number, not shown
                    values[span.frame_of(t)][i] = value_map(Point(t, v, sev), None)


def _shown(value: bytes | dict[str, Any]) -> dict[str, Any] | None:
    """A frame's value as a map (a payload decoded; none where it is not one)."""
    if isinstance(value, dict):
        return value
    return _decoded(value)


def _decoded(data: bytes) -> dict[str, Any] | None:
    try:
        return decode(data)
    except DecodeError:
        return None


def _maker(stored: Stored | None) -> Callable[[float, int], dict[str, Any]] | None:
    """What makes a value map of a block's number and source time for a channel
    whose value at the stretch's start is ``stored``: with its status text (of
    no severity) and its number's type (bool, integer or float). None where that
    value is not a connected number of no severity (a block's point would lose
    what it shows)."""
    msg = _decoded(stored.data) if stored is not None else None
    if msg is None or msg.get("sev") or not msg.get("c"):
        return None
    v, st = msg.get("v"), msg.get("st", "")
    typed: Callable[[float], Any]
    if isinstance(v, bool):
        typed = bool
    elif isinstance(v, int):
        typed = _whole
    elif isinstance(v, float):
        typed = float
    else:
        return None

    def made(x: float, t: int) -> dict[str, Any]:
        return {"ver": 1, "v": typed(x), "t": t, "sev": 0, "st": st, "c": True}

    return made


def _kept(x: float, t: int) -> dict[str, Any]:
    """A block's point as a value map where no value of the raw history tells
    its status text and type."""
    return value_map(Point(t, x, 0), None)


def _whole(x: float) -> int | float:
    return int(x) if x.is_integer() else x
