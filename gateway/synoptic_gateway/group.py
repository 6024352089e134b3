"""A group: the sockets of this gateway that watch one channel set (a dashboard),
and the batching of that set's updates.

Guarantees:
- a batch is encoded once (:class:`~synoptic_gateway.batch.Batch`) and the same
  bytes go to every member;
- batches leave at most every ``batch_s``, an idle group's update at once, a batch
  that reaches ``batch_max`` updates (a burst) at once; a burst lasts until one
  window has passed since its last full batch, and meanwhile what the group holds
  leaves at the first turn of the event loop that brings it nothing new (the
  reader has read what there was), however many reads NATS splits the burst into;
- handing a batch or a control frame to a member never awaits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from synoptic_gateway.batch import Batch
from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.member import Member
from synoptic_gateway.metrics import Stats
from synoptic_schemas import frames
from synoptic_schemas.codec import decode

#: A group's reduced arrays (``sub.pts``): (index in its channel list, points), sorted.
Points = tuple[tuple[int, int], ...]


class Group:
    """The sockets of this gateway that watch one channel set (a dashboard) with
    the same reduced arrays (``sub.pts``)."""

    #: whether its sockets accept updates in the shift form (``sub.shift``)
    shift = False

    def __init__(
        self,
        sid: int,
        key: tuple[str, ...],
        states: list[ChannelState],
        stats: Stats,
        batch_s: float,
        batch_max: int,
        large_value_bytes: int,
        points: Points = (),
    ) -> None:
        self.sid = sid
        self.key = key
        self.points_key = points
        #: index -> the points its arrays are reduced to
        self.points = dict(points)
        self.states = states
        self.members: dict[Member, None] = {}
        self.closed = False
        #: indexes its sockets were told have no live source (src up false, or
        #: snap.stale) and that no update or src up true has cleared since
        self.stale: set[int] = set()
        self._stats = stats
        self._batch_s = batch_s
        self._batch_max = batch_max
        self._large = large_value_bytes
        #: pending updates larger than ``_large`` (they leave after the small ones)
        self._large_n = 0
        self._val_i: list[int] = []
        self._val_raw: list[bytes] = []
        self._val_t: list[int] = []
        self._meta_i: list[int] = []
        self._meta_raw: list[bytes] = []
        self._handle: asyncio.Handle | None = None
        self._last_flush = 0.0
        self._loop = asyncio.get_running_loop()
        #: until when (loop time) the group is reading a burst: one window after its
        #: last full batch (``batch_max``)
        self._burst_until = float("-inf")

    # ----------------------------------------------------------- updates

    def push_value(self, index: int, raw: bytes, t: int) -> None:
        # (once per update and group: ~5 % of the gateway's CPU under a burst)
        points = self.points
        if points and index in points:  # the array this group's plots draw
            raw = self.states[index].reduced_to(raw, points[index])
        if self.stale:  # the update clears the mark on the clients (protocol rule)
            self.stale.discard(index)
        indexes = self._val_i
        indexes.append(index)
        self._val_raw.append(raw)
        if len(raw) > self._large:
            self._large_n += 1
        self._val_t.append(t)
        if len(indexes) >= self._batch_max:  # a burst: send what is in
            self.flush()
            self._burst_until = self._last_flush + self._batch_s
        elif self._handle is None:  # (else a flush is already due)
            self._schedule()

    def push_meta(self, index: int, raw: bytes) -> None:
        self._meta_i.append(index)
        self._meta_raw.append(raw)
        self._schedule()

    def _schedule(self) -> None:
        if self._handle is not None:
            return
        now = self._loop.time()
        delay = self._last_flush + self._batch_s - now
        if delay <= 0:  # idle group: out on the next loop turn
            self._handle = self._loop.call_soon(self.flush)
        elif now < self._burst_until:  # the rest of a burst: out once it is read
            pending = len(self._val_i) + len(self._meta_i)
            self._handle = self._loop.call_soon(self._flush_once_read, pending)
        else:
            self._handle = self._loop.call_later(delay, self.flush)

    def _flush_once_read(self, pending: int) -> None:
        """Inside a burst: flush when a turn of the loop brought the group nothing
        new (the reader has read what there was: the burst's end, or a pause in
        it), at the latest at the end of the batch window. A pause does not end
        the burst: what comes after it leaves the same way (ADR 0013)."""
        self._handle = None
        now_pending = len(self._val_i) + len(self._meta_i)
        if (
            now_pending == pending
            or self._loop.time() >= self._last_flush + self._batch_s
        ):
            self.flush()
        else:  # still reading: look again after the next turn
            self._handle = self._loop.call_soon(self._flush_once_read, now_pending)

    def flush(self) -> None:
        """Send what is pending to every member (never awaits)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if not self._val_i and not self._meta_i:
            return
        self._last_flush = self._loop.time()
        if self._val_i:
            self._stats.latency.observe_ages(time.time_ns(), self._val_t)
            if self._large_n:
                batches = self._small_first(self._val_i, self._val_raw)
                self._large_n = 0
            else:
                batches = [Batch(frames.Op.UPD, self.sid, self._val_i, self._val_raw)]
            self._val_i, self._val_raw, self._val_t = [], [], []
            for batch in batches:
                self._deliver(batch)
        if self._meta_i:
            batch = Batch(frames.Op.META, self.sid, self._meta_i, self._meta_raw)
            self._meta_i, self._meta_raw = [], []
            self._deliver(batch)

    def _small_first(self, indexes: list[int], raws: list[bytes]) -> list[Batch]:
        """A window's updates as frames, small values first: one batch of the
        updates of channels with no large value in the window, then the others in
        their order, one per frame (a channel's updates keep their order)."""
        large = self._large
        held = {i for i, raw in zip(indexes, raws, strict=True) if len(raw) > large}
        small_i: list[int] = []
        small_raw: list[bytes] = []
        rest: list[Batch] = []
        for i, raw in zip(indexes, raws, strict=True):
            if i in held:
                rest.append(Batch(frames.Op.UPD, self.sid, [i], [raw]))
            else:
                small_i.append(i)
                small_raw.append(raw)
        if small_i:
            rest.insert(0, Batch(frames.Op.UPD, self.sid, small_i, small_raw))
        return rest

    def _deliver(self, batch: Batch) -> None:
        for member in self.members:
            member.deliver(batch)

    # ----------------------------------------------------------- control frames

    def snap_frames(self, req_id: Any, json: bool) -> list[bytes | str]:
        """The group's state: a ``snap`` frame with every value of at most
        ``large_value_bytes``, then one ``upd`` frame per larger value (listed in
        ``snap.more``), so that no scalar of a screen waits behind its arrays."""
        large = self._large
        values = [s.value for s in self.states]
        for index, points in self.points.items():
            raw = values[index]
            if raw is not None:
                values[index] = self.states[index].reduced_to(raw, points)
        more = [i for i, v in enumerate(values) if v is not None and len(v) > large]
        held = [values[i] for i in more]
        for i in more:
            values[i] = None
        metas = [s.meta for s in self.states]
        stale = sorted(self.stale)
        if not json:
            snap = frames.pack_snap(
                req_id, self.sid, self.key, values, metas, stale, more
            )
            follow = [frames.pack_batch(frames.Op.UPD, self.sid, [i], [raw])
                      for i, raw in zip(more, held, strict=True)]  # fmt: skip
            return [snap, *follow]
        text = frames.to_json(
            frames.snap(req_id, self.sid, self.key,
                        [decode(v) if v else None for v in values],
                        [decode(m) if m else None for m in metas], stale, more)
        )  # fmt: skip
        return [text, *(frames.to_json(frames.upd(self.sid, [i], [decode(raw)]))
                        for i, raw in zip(more, held, strict=True))]  # fmt: skip

    def push_snap(self, members: Iterable[Member], req_id: Any) -> None:
        """Queue the group's state (:meth:`snap_frames`) on ``members``, encoded
        at most once per format."""
        encoded: dict[bool, list[bytes | str]] = {}
        for member in members:
            if member.json not in encoded:
                encoded[member.json] = self.snap_frames(req_id, member.json)
            for frame in encoded[member.json]:
                member.push_control(frame)

    def push_to_members(
        self, packed: Callable[[], bytes], text: Callable[[], str]
    ) -> None:
        """Queue one control frame for every member, encoded at most once per
        format (``packed()`` / ``text()`` are called only if a member needs it)."""
        packed_frame: bytes | None = None
        text_frame: str | None = None
        for member in self.members:
            if member.json:
                text_frame = text_frame or text()
                member.push_control(text_frame)
            else:
                packed_frame = packed_frame or packed()
                member.push_control(packed_frame)

    def send_src(self, indexes: list[int], up: bool) -> None:
        """Tell every member that these channels lost (or regained) their source:
        one frame encoded once (per format) for the whole group."""
        frame = frames.src(self.sid, indexes, up)
        self.push_to_members(lambda: frames.pack(frame), lambda: frames.to_json(frame))
