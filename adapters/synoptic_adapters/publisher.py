"""The publisher: turns a source's channel events into bus messages.

Guarantees:

- Calls from a source (:meth:`Publisher.value`, ``meta``, ``disconnected``) never
  block and never await: they stamp the per-channel ``seq`` and append to a bounded
  queue that one flusher task drains into core-NATS publishes (the JetStream stream
  ``CS_LAST`` captures ``val``/``meta`` subjects by itself; no acks are awaited).
- ``seq`` starts at 1 for every channel in each adapter epoch and counts source
  events, so a consumer that sees a ``seq`` gap knows updates were lost (queue
  overflow, NATS away), never a replay.
- The latest value and metadata of every channel are kept; when the queue is full
  an update is dropped and counted, but the channel's latest value is still
  published afterwards (the bus never ends on an older value than the source's).
- After a NATS reconnect every kept value and metadata message is published again
  unchanged (same ``seq``), so the last-value store holds the latest state even
  if the server lost it.
- A value whose severity, status text or connection differs from the channel's
  previous one (and a channel's first value) is also published on ``cs.sev.<tail>``
  with the same ``seq`` and ``ep``, before queued values: the alarm service reads
  these transitions, never every value. Transitions are queued apart from values
  and never dropped in favour of them; after a reconnect each channel's latest one
  is published again (a duplicate by ``(ep, seq)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.errors import MaxPayloadError

from synoptic_bus.prereq import payload_too_small
from synoptic_schemas import SCHEMA_VERSION, Channel, Severity, Subjects, encode
from synoptic_schemas.codec import encode_sev, encode_value

log = logging.getLogger(__name__)

#: Source events waiting to be published before updates are dropped (and counted).
DEFAULT_MAX_QUEUE = 500_000
#: Publishes between yields to the event loop while draining a burst.
_YIELD_EVERY = 2000


#: The latest state of one channel, unencoded: (seq, v, t, sev, st, c). A plain
#: tuple: it is built once per source event, on the hot path.
_Last = tuple[int, Any, int, int, str, bool]
_SEQ, _SEV, _STATUS, _CONNECTED = 0, 3, 4, 5


@dataclass
class PublisherStats:
    """Counters since the publisher started."""

    received: int = 0  # source events (values and disconnects)
    published: int = 0  # value messages sent to NATS
    meta_published: int = 0
    sev_published: int = 0  # severity transitions sent to NATS
    dropped: int = 0  # value events dropped because the queue was full
    sev_dropped: int = 0  # transitions not queued (full): the latest still follows
    offline_dropped: int = 0  # value events not sent while NATS was away
    republished: int = 0  # messages sent again after reconnects
    errors: int = 0  # publishes that failed (encoding, NATS limits)


class Publisher:
    """A :class:`~synoptic_adapters.source.ChannelSink` that publishes to NATS."""

    def __init__(
        self,
        nc: NatsClient,
        subjects: Subjects,
        adapter_id: str,
        epoch_ms: int,
        *,
        max_queue: int = DEFAULT_MAX_QUEUE,
    ) -> None:
        self.nc = nc
        self.subjects = subjects
        self.adapter_id = adapter_id
        self.epoch_ms = epoch_ms
        self.max_queue = max_queue
        self.stats = PublisherStats()
        self._last: dict[Channel, _Last] = {}
        self._meta: dict[Channel, dict[str, Any]] = {}
        self._forgotten_seq: dict[Channel, int] = {}
        self._val_subject: dict[Channel, str] = {}
        self._sev_subject: dict[Channel, str] = {}
        self._queue: deque[tuple[Channel, _Last]] = deque()
        self._sev_queue: deque[tuple[Channel, _Last]] = deque()
        self._sev_dirty: set[Channel] = set()  # latest transition not queued
        self._dirty: set[Channel] = set()  # latest value not queued (overflow)
        self._meta_pending: set[Channel] = set()
        self._republish = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._oversized: set[str] = set()  # subjects told to be over max_payload

    # -- ChannelSink -------------------------------------------------------------

    def value(self, channel: Channel, v: Any, *, t: int, sev: int, st: str) -> None:
        """A connected channel's new value (never blocks)."""
        self._push(channel, v, t, sev, st, True)

    def disconnected(self, channel: Channel, reason: str) -> None:
        """The channel's source is gone: publish ``v`` None, sev 3, ``c`` False."""
        self._push(channel, None, time.time_ns(), int(Severity.INVALID), reason, False)

    def meta(self, channel: Channel, meta: dict[str, Any]) -> None:
        """A channel's complete metadata (published before its next value)."""
        self._meta[channel] = meta
        self._meta_pending.add(channel)
        self._wake.set()

    def _push(
        self, channel: Channel, v: Any, t: int, sev: int, st: str, c: bool
    ) -> None:
        last = self._last.get(channel)
        seq = last[0] + 1 if last else self._forgotten_seq.pop(channel, 0) + 1
        state = (seq, v, t, sev, st, c)
        self._last[channel] = state
        self.stats.received += 1
        if (
            last is None
            or last[_SEV] != sev
            or last[_CONNECTED] != c
            or (last[_STATUS] != st)
        ):
            if len(self._sev_queue) >= self.max_queue:
                self.stats.sev_dropped += 1
                self._sev_dirty.add(channel)
            else:
                self._sev_queue.append((channel, state))
        if len(self._queue) >= self.max_queue:
            self.stats.dropped += 1
            self._dirty.add(channel)
        else:
            self._queue.append((channel, state))
        if not self._wake.is_set():
            self._wake.set()

    # -- what the runner and heartbeat need ----------------------------------------

    @property
    def channel_count(self) -> int:
        """Channels that have reported anything."""
        return len(self._last)

    @property
    def connected_count(self) -> int:
        """Channels whose latest state is connected."""
        return sum(1 for last in self._last.values() if last[_CONNECTED])

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def max_payload(self) -> int:
        """The largest message the bus accepts, bytes (the server's limit)."""
        return int(self.nc.max_payload)

    def last_value(self, channel: Channel) -> dict[str, Any] | None:
        """The latest value message of a channel as published (or to be)."""
        last = self._last.get(channel)
        return self._message(last) if last else None

    def last_meta(self, channel: Channel) -> dict[str, Any] | None:
        return self._meta.get(channel)

    def forget(self, channel: Channel) -> None:
        """Drop a released channel's kept state so it is no longer republished.
        Its ``seq`` is remembered: monitored again, it continues the sequence."""
        last = self._last.pop(channel, None)
        if last is not None:
            self._forgotten_seq[channel] = last[_SEQ]
        self._meta.pop(channel, None)
        self._meta_pending.discard(channel)
        self._dirty.discard(channel)
        self._sev_dirty.discard(channel)

    def disconnect_all(self, reason: str) -> None:
        """Publish every connected channel as disconnected (e.g. on shutdown)."""
        for channel, last in list(self._last.items()):
            if last[_CONNECTED]:
                self.disconnected(channel, reason)

    def republish_all(self) -> None:
        """Publish every kept value and metadata again (after a NATS reconnect)."""
        self._republish = True
        self._wake.set()

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Start the flusher task."""
        if self._task is None:
            self._task = asyncio.create_task(self._flusher(), name="publisher")

    async def stop(self, timeout: float = 5.0) -> None:
        """Publish what is queued (within ``timeout``), then stop."""
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while (
                    self._queue or self._dirty or self._meta_pending or self._sev_queue
                ) and self.nc.is_connected:
                    self._wake.set()
                    await asyncio.sleep(0.01)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    # -- the flusher -----------------------------------------------------------------

    def _message(self, last: _Last) -> dict[str, Any]:
        seq, v, t, sev, st, c = last
        return {
            "ver": SCHEMA_VERSION, "v": v, "t": t, "sev": sev, "st": st, "seq": seq,
            "ep": self.epoch_ms, "c": c,
        }  # fmt: skip

    def _sev_message(self, last: _Last) -> bytes:
        seq, v, t, sev, st, c = last
        return encode_sev(v, t, sev, st, seq, self.epoch_ms, c)

    def _sev_subject_of(self, channel: Channel) -> str:
        subject = self._sev_subject.get(channel)
        if subject is None:
            subject = self._sev_subject[channel] = self.subjects.sev(channel)
        return subject

    def _subject(self, channel: Channel) -> str:
        subject = self._val_subject.get(channel)
        if subject is None:
            subject = self._val_subject[channel] = self.subjects.val(channel)
        return subject

    async def _publish(self, subject: str, message: dict[str, Any]) -> bool:
        try:
            data = encode(message)
            await self.nc.publish(subject, data)
        except MaxPayloadError:
            self.stats.errors += 1
            if "v" in message:  # a value: say why it cannot be shown instead
                await self._publish(
                    subject, self._oversize(subject, len(data), message)
                )
            return False
        except Exception as exc:  # encoding, buffer full
            self.stats.errors += 1
            log.warning("publish on %s failed: %s", subject, exc)
            return False
        return True

    def _oversize(
        self, subject: str, size: int, message: dict[str, Any]
    ) -> dict[str, Any]:
        """The value published instead of one over the bus's ``max_payload``: no
        value, sev 3 (invalid), the reason and what to do as its status (logged
        once per channel)."""
        status = payload_too_small(size, self.max_payload)
        if subject not in self._oversized:
            self._oversized.add(subject)
            log.error("%s: %s", subject, status)
        return {**message, "v": None, "sev": int(Severity.INVALID), "st": status}

    async def _flusher(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._flush_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # keep publishing whatever one message did
                log.exception("publisher flush failed")

    async def _flush_once(self) -> None:
        if not self.nc.is_connected:
            # Values sent now would only pile up in the client's buffer; the
            # reconnect republishes the latest of each channel instead.
            self.stats.offline_dropped += len(self._queue)
            self._queue.clear()
            self._dirty.clear()
            self._sev_queue.clear()  # the reconnect republishes the latest ones
            self._sev_dirty.clear()
            return
        if self._republish:
            self._republish = False
            await self._republish_now()
        for channel in list(self._meta_pending):
            self._meta_pending.discard(channel)
            await self._publish_meta(channel)
        if self._sev_queue or self._sev_dirty:
            await self._publish_transitions()
        queue, publish, subjects = self._queue, self.nc.publish, self._val_subject
        popleft, ep = queue.popleft, self.epoch_ms
        sent = 0
        while queue:
            channel, (seq, v, t, sev, st, c) = popleft()
            subject = subjects.get(channel) or self._subject(channel)
            try:
                await publish(subject, encode_value(v, t, sev, st, seq, ep, c))
            except MaxPayloadError:
                message = self._message((seq, v, t, sev, st, c))
                await self._publish(subject, message)  # says why, once logged
            except Exception as exc:
                self.stats.errors += 1
                log.warning("publish on %s failed: %s", subject, exc)
            sent += 1
            if sent % _YIELD_EVERY == 0:
                self.stats.published += _YIELD_EVERY
                await asyncio.sleep(0)
                if self._sev_queue:  # transitions never wait behind a backlog
                    await self._publish_transitions()
                if self._meta_pending:  # metadata first: it is small and rare
                    for meta_channel in list(self._meta_pending):
                        self._meta_pending.discard(meta_channel)
                        await self._publish_meta(meta_channel)
        self.stats.published += sent % _YIELD_EVERY
        if self._dirty:
            dirty, self._dirty = self._dirty, set()
            for channel in dirty:
                last = self._last.get(channel)
                if last is not None:
                    await self._publish(self._subject(channel), self._message(last))
                    self.stats.published += 1

    async def _publish_transitions(self) -> None:
        """Every queued severity transition, then the latest state of channels
        whose transition did not fit the queue."""
        queue, publish = self._sev_queue, self.nc.publish
        sent = 0
        while queue:
            channel, last = queue.popleft()
            subject = self._sev_subject_of(channel)
            try:
                await publish(subject, self._sev_message(last))
            except Exception as exc:
                self.stats.errors += 1
                log.warning("publish on %s failed: %s", subject, exc)
            sent += 1
            if sent % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
        if self._sev_dirty:
            dirty, self._sev_dirty = self._sev_dirty, set()
            for channel in dirty:
                last = self._last.get(channel)
                if last is not None:
                    await self._publish_raw(
                        self._sev_subject_of(channel), self._sev_message(last)
                    )
                    sent += 1
        self.stats.sev_published += sent

    async def _publish_raw(self, subject: str, payload: bytes) -> bool:
        try:
            await self.nc.publish(subject, payload)
        except Exception as exc:  # payload too large, buffer full
            self.stats.errors += 1
            log.warning("publish on %s failed: %s", subject, exc)
            return False
        return True

    async def _publish_meta(self, channel: Channel) -> None:
        meta = self._meta.get(channel)
        if meta is None:
            return
        message = {
            "ver": SCHEMA_VERSION,
            **meta,
            "t": time.time_ns(),
            "ep": self.epoch_ms,
        }
        if await self._publish(self.subjects.meta(channel), message):
            self.stats.meta_published += 1

    async def _republish_now(self) -> None:
        count = 0
        for channel in list(self._meta):
            await self._publish_meta(channel)
            count += 1
        for channel, last in list(self._last.items()):
            await self._publish(self._subject(channel), self._message(last))
            await self._publish_raw(
                self._sev_subject_of(channel), self._sev_message(last)
            )
            count += 2
            if count % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
        self.stats.republished += count
        log.info("republished %d last values and metadata", count)
