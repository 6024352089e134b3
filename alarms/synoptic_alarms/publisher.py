"""Alarm states to the bus, stored before anyone is told they are.

Guarantees:

- Each state is published once on ``cs.alarm.st.<tail>`` with a message id
  (``Nats-Msg-Id``: the channel and the state's revision ``n``) and then
  confirmed stored by a barrier: a JetStream publish on ``cs.alarm.sync`` whose
  acknowledgement proves the ``CS_ALARM`` stream has ingested everything this
  connection published before it. One barrier confirms a whole batch.
- :meth:`StatePublisher.commit` returns once every state added before the call is
  stored; requests are answered and transitions acknowledged only then, so a
  service killed in between loses nothing (the request was not answered, the
  transition is delivered again).
- A batch whose barrier fails (NATS away) is published again, unchanged, until
  one succeeds: the stream drops the copies it already holds by message id, so
  its history holds each state once (consumers drop a repeated ``n``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NatsClient

from synoptic_alarms.model import Alarm
from synoptic_bus.store import store_barrier
from synoptic_schemas import Subjects, encode, parse_channel

log = logging.getLogger(__name__)

#: Batches written whose barrier has not come back yet, at most.
IN_FLIGHT = 8
#: The header that records which source transition a state reflects:
#: ``<stream seq of the transition> <adapter epoch> <seq>`` (read back at start).
SOURCE_HEADER = "Synoptic-Source"
MSG_ID = "Nats-Msg-Id"
#: The header block of a state: its message id and the source transition.
_HEAD = (b"NATS/1.0\r\n" + MSG_ID.encode() + b": %s#%d\r\n"
         + SOURCE_HEADER.encode() + b": %d %d %d\r\n\r\n")  # fmt: skip


@dataclass
class PublisherStats:
    published: int = 0  # states published (first time)
    stored: int = 0  # states confirmed stored
    retried: int = 0  # states published again after a failed barrier
    barriers: int = 0


class StatePublisher:
    """Publishes alarm states and confirms them stored (see module doc)."""

    def __init__(
        self,
        nc: NatsClient,
        subjects: Subjects,
        *,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.nc = nc
        self.subjects = subjects
        self.clock = clock
        self.stats = PublisherStats()
        self._pending: list[bytes] = []  # HPUB commands
        self._added = 0  # generations: states added so far
        self._stored = 0  # states confirmed stored so far
        self._changed = asyncio.Condition()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._sync = f"{subjects.prefix}.alarm.sync"

    def add(self, alarm: Alarm, ev: str, who: str = "", why: str = "") -> None:
        """Queue ``alarm``'s state as its next revision (the alarm counts it as
        published from now on: a later change is compared against it)."""
        msg = alarm.message(ev, self.clock(), who, why)
        n = msg["n"]
        alarm.mark_published(n)
        subject = alarm.subject
        if not subject:
            subject = alarm.subject = self.subjects.alarm(parse_channel(alarm.ch))
        payload = encode(msg)
        head = _HEAD % (alarm.ch.encode(), n, alarm.sseq, alarm.ep, alarm.seq)
        self._pending.append(b"HPUB %s %d %d\r\n%s%s\r\n" % (
            subject.encode(), len(head), len(head) + len(payload), head, payload,
        ))  # fmt: skip
        self._added += 1
        if not self._wake.is_set():
            self._wake.set()

    @property
    def pending(self) -> int:
        return self._added - self._stored

    @property
    def added(self) -> int:
        """States added so far (a position :meth:`commit` can wait for)."""
        return self._added

    async def commit(
        self, timeout: float | None = None, target: int | None = None
    ) -> None:
        """Return once everything added so far (or up to ``target``) is stored."""
        target = self._added if target is None else target
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: self._stored >= target)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="alarm-publisher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        """Send batches as they come, each followed by its barrier, without
        waiting for the previous barrier (up to :data:`IN_FLIGHT` batches);
        barriers are settled in order. A failed one sends its batch and every
        later one again (the stream drops the copies by message id)."""
        inflight: deque[_Sent] = deque()
        delay = 0.1
        while True:
            if not inflight or (self._pending and len(inflight) < IN_FLIGHT):
                if not self._pending:
                    await self._wake.wait()
                self._wake.clear()
                batch, self._pending = self._pending, []
                if batch:
                    inflight.append(await self._send(batch, again=False))
                continue
            head = inflight[0]
            waits = [head.barrier]
            if len(inflight) < IN_FLIGHT:
                waits.append(asyncio.ensure_future(self._wake.wait()))
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for extra in waits[1:]:
                extra.cancel()
            while inflight and inflight[0].barrier.done():
                done = inflight.popleft()
                if done.barrier.cancelled() or done.barrier.exception() is not None:
                    error = (
                        "cancelled"
                        if done.barrier.cancelled()
                        else done.barrier.exception()
                    )
                    log.warning("alarm states not confirmed stored (%s): publishing "
                                "them again", error)  # fmt: skip
                    again = [done, *inflight]
                    inflight.clear()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    for sent in again:
                        inflight.append(await self._resend(sent))
                    break
                delay = 0.1
                async with self._changed:
                    self._stored += len(done.commands)
                    self.stats.stored += len(done.commands)
                    self._changed.notify_all()

    async def _resend(self, sent: _Sent) -> _Sent:
        try:
            return await self._send(sent.commands, again=True)
        except Exception as exc:  # still away: a failed barrier, tried again later
            future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            future.set_exception(ConnectionError(str(exc)))
            return _Sent(sent.commands, future)

    async def _send(self, batch: list[bytes], again: bool) -> _Sent:
        """Write a batch and its barrier request (not awaited)."""
        if not self.nc.is_connected:
            future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            future.set_exception(ConnectionError("NATS is not connected"))
            return _Sent(batch, future)
        # the commands are written as nats-py's publish would, less its per
        # message checks and header encoding (done once, in add); pinned to
        # nats-py 2.16 like synoptic_bus.store's raw reads
        send = self.nc._send_command
        for i, command in enumerate(batch):
            await send(command)
            if i % 1000 == 999:
                await self.nc._flush_pending()
                await asyncio.sleep(0)
        if again:
            self.stats.retried += len(batch)
        else:
            self.stats.published += len(batch)
        self.stats.barriers += 1
        barrier = asyncio.ensure_future(store_barrier(self.nc, self._sync, timeout=5.0))
        return _Sent(batch, barrier)


@dataclass
class _Sent:
    """A batch written, and the barrier that confirms it stored."""

    commands: list[bytes]
    barrier: asyncio.Future[int]


def source_of(headers: Any) -> tuple[int, int, int]:
    """``(stream seq, ep, seq)`` from a stored state's headers (zeros if absent)."""
    raw = headers.get(SOURCE_HEADER) if headers else None
    if not raw:
        return 0, 0, 0
    try:
        sseq, ep, seq = (int(x) for x in raw.split())
    except ValueError:
        return 0, 0, 0
    return sseq, ep, seq
