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
- People go first: a state added ``urgent`` (an acknowledge or shelve) is sent
  ahead of the bulk of states still waiting (a storm's), in a batch and barrier
  of its own, so its request waits for its own states only. A channel's states
  still keep their order: the waiting states of the same channel go with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NatsClient

from synoptic_alarms.model import Alarm
from synoptic_bus.store import store_barrier
from synoptic_schemas import Subjects, encode, parse_channel

log = logging.getLogger(__name__)

#: Batches written whose barrier has not come back yet, at most.
IN_FLIGHT = 8
#: Bulk states written and not confirmed stored, at most: a person's state waits
#: for the stream to store no more than these before its own.
IN_FLIGHT_STATES = 2000
#: The header that records which source transition a state reflects:
#: ``<stream seq of the transition> <adapter epoch> <seq>`` (read back at start).
SOURCE_HEADER = "Synoptic-Source"
MSG_ID = "Nats-Msg-Id"
#: The header block of a state: its message id and the source transition.
_HEAD = (b"NATS/1.0\r\n" + MSG_ID.encode() + b": %s#%d\r\n"
         + SOURCE_HEADER.encode() + b": %d %d %d\r\n\r\n")  # fmt: skip


#: A state to send: its generation, channel and HPUB command.
_Command = tuple[int, str, bytes]


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
        self._pending: list[_Command] = []  # bulk states waiting to be sent
        self._pending_chs: set[str] = set()  # their channels
        self._urgent: list[_Command] = []  # people's states: sent first
        self._added = 0  # states added so far (the next one's generation)
        self._low = 0  # every state of a lower generation is stored
        self._stored_above: set[int] = set()  # stored generations >= _low
        self._changed = asyncio.Condition()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._sync = f"{subjects.prefix}.alarm.sync"

    def add(
        self, alarm: Alarm, ev: str, who: str = "", why: str = "", urgent: bool = False
    ) -> int:
        """Queue ``alarm``'s state as its next revision (the alarm counts it as
        published from now on: a later change is compared against it); its
        generation (for :meth:`commit`). ``urgent``: sent ahead of the bulk."""
        msg = alarm.message(ev, self.clock(), who, why)
        n = msg["n"]
        alarm.mark_published(n)
        subject = alarm.subject
        if not subject:
            subject = alarm.subject = self.subjects.alarm(parse_channel(alarm.ch))
        payload = encode(msg)
        ch = alarm.ch
        head = _HEAD % (ch.encode(), n, alarm.sseq, alarm.ep, alarm.seq)
        gen = self._added
        command = (gen, ch, b"HPUB %s %d %d\r\n%s%s\r\n" % (
            subject.encode(), len(head), len(head) + len(payload), head, payload,
        ))  # fmt: skip
        if urgent:
            if ch in self._pending_chs:  # its earlier states go first, with it
                self._urgent += [c for c in self._pending if c[1] == ch]
                self._pending = [c for c in self._pending if c[1] != ch]
                self._pending_chs.discard(ch)
            self._urgent.append(command)
        else:
            self._pending.append(command)
            self._pending_chs.add(ch)
        self._added = gen + 1
        if not self._wake.is_set():
            self._wake.set()
        return gen

    @property
    def pending(self) -> int:
        """States added and not confirmed stored yet."""
        return self._added - self._low - len(self._stored_above)

    @property
    def added(self) -> int:
        """States added so far (a position :meth:`commit` can wait for)."""
        return self._added

    def is_stored(self, gen: int) -> bool:
        return gen < self._low or gen in self._stored_above

    async def commit(
        self,
        timeout: float | None = None,
        target: int | None = None,
        gens: Iterable[int] | None = None,
    ) -> None:
        """Return once every state added so far (or before ``target``, or the
        states of generations ``gens``) is stored."""
        async with asyncio.timeout(timeout), self._changed:
            if gens is not None:
                wanted = list(gens)
                await self._changed.wait_for(
                    lambda: all(self.is_stored(g) for g in wanted)
                )
                return
            target = self._added if target is None else target
            await self._changed.wait_for(lambda: self._low >= target)

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
        waiting for the previous barrier (up to :data:`IN_FLIGHT` batches and
        :data:`IN_FLIGHT_STATES` bulk states, and
        people's states beyond); barriers are settled in order. A failed one
        sends its batch and every later one again (the stream drops the copies
        by message id)."""
        inflight: deque[_Sent] = deque()
        delay = 0.1
        while True:
            self._wake.clear()
            room = IN_FLIGHT_STATES - sum(len(sent.commands) for sent in inflight)
            if self._urgent or (
                self._pending and len(inflight) < IN_FLIGHT and room > 0
            ):
                if self._urgent:
                    batch, self._urgent = self._urgent, []
                else:  # (the channels of what is left: a superset is fine)
                    batch, self._pending = self._pending[:room], self._pending[room:]
                    if not self._pending:
                        self._pending_chs.clear()
                inflight.append(await self._send(batch, again=False))
                continue
            if not inflight:
                await self._wake.wait()
                continue
            woken = asyncio.ensure_future(self._wake.wait())
            await asyncio.wait([inflight[0].barrier, woken],
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            woken.cancel()
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
                    self._settle(done.commands)
                    self._changed.notify_all()

    def _settle(self, commands: list[_Command]) -> None:
        """``commands`` are stored: move the low mark past them."""
        above = self._stored_above
        above.update(gen for gen, _, _ in commands)
        low = self._low
        while low in above:
            above.remove(low)
            low += 1
        self._low = low
        self.stats.stored += len(commands)

    async def _resend(self, sent: _Sent) -> _Sent:
        try:
            return await self._send(sent.commands, again=True)
        except Exception as exc:  # still away: a failed barrier, tried again later
            future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            future.set_exception(ConnectionError(str(exc)))
            return _Sent(sent.commands, future)

    async def _send(self, batch: list[_Command], again: bool) -> _Sent:
        """Write a batch and its barrier request (not awaited)."""
        if not self.nc.is_connected:
            future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            future.set_exception(ConnectionError("NATS is not connected"))
            return _Sent(batch, future)
        # the commands are written as nats-py's publish would, less its per
        # message checks and header encoding (done once, in add); pinned to
        # nats-py 2.16 like synoptic_bus.store's raw reads
        send = self.nc._send_command
        for i, (_, _, command) in enumerate(batch):
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

    commands: list[_Command]
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
