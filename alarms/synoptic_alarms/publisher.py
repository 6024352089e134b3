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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NatsClient

from synoptic_alarms.model import Alarm
from synoptic_bus.store import StoreError, store_barrier
from synoptic_schemas import Subjects, encode, parse_channel

log = logging.getLogger(__name__)

#: The header that records which source transition a state reflects:
#: ``<stream seq of the transition> <adapter epoch> <seq>`` (read back at start).
SOURCE_HEADER = "Synoptic-Source"
MSG_ID = "Nats-Msg-Id"


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
        self._subject_of: dict[str, str] = {}
        self._pending: list[tuple[str, bytes, dict[str, str]]] = []
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
        alarm.mark_published(msg["n"])
        subject = self._subject_of.get(alarm.ch)
        if subject is None:
            subject = self.subjects.alarm(parse_channel(alarm.ch))
            self._subject_of[alarm.ch] = subject
        headers = {
            MSG_ID: f"{alarm.ch}#{msg['n']}",
            SOURCE_HEADER: f"{alarm.sseq} {alarm.ep} {alarm.seq}",
        }
        self._pending.append((subject, encode(msg), headers))
        self._added += 1
        self._wake.set()

    @property
    def pending(self) -> int:
        return self._added - self._stored

    async def commit(self, timeout: float | None = None) -> None:
        """Return once everything added so far is stored."""
        target = self._added
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
        delay = 0.1
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, []
            if not batch:
                continue
            first = True
            while True:
                try:
                    await self._send(batch, again=not first)
                    break
                except asyncio.CancelledError:
                    self._pending[:0] = batch
                    raise
                except Exception as exc:
                    log.warning("alarm states not confirmed stored (%s): "
                                "publishing them again", exc)  # fmt: skip
                    first = False
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
            delay = 0.1
            async with self._changed:
                self._stored += len(batch)
                self.stats.stored += len(batch)
                self._changed.notify_all()

    async def _send(self, batch: list[tuple[str, bytes, dict[str, str]]],
                    again: bool) -> None:  # fmt: skip
        if not self.nc.is_connected:
            raise ConnectionError("NATS is not connected")
        publish = self.nc.publish
        for i, (subject, data, headers) in enumerate(batch):
            await publish(subject, data, headers=headers)
            if i % 1000 == 999:
                await asyncio.sleep(0)
        if again:
            self.stats.retried += len(batch)
        else:
            self.stats.published += len(batch)
        try:
            await store_barrier(self.nc, self._sync, timeout=5.0)
        except StoreError as exc:
            raise ConnectionError(str(exc)) from None
        self.stats.barriers += 1


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
