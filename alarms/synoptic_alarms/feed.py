"""The severity transitions, in order, through a durable consumer of ``CS_SEV``.

The consumer (``alarms`` by default) acknowledges cumulatively (ack policy
``all``): a batch is acknowledged by its last message, and only once the states
it produced are stored (:meth:`Feed.ack`). So a service that stops, is killed or
loses NATS gets every transition it had not finished with again, in order, from
the server's copy of where it was. A consumer that does not exist yet (the
service's first start, or someone deleted it) starts with new transitions: the
service reads the current state of its channels at start anyway.

Pulls are kept outstanding (``MSG.NEXT`` requests of :data:`PULL` messages that
expire after :data:`EXPIRES_S`) and messages are handed over as they arrive, raw
from the protocol parser (no message object per transition): a trickle of
transitions is handled at once, a storm in batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from synoptic_bus.connect import NatsClient
from synoptic_bus.store import _header, _raw_subscriptions, _status

log = logging.getLogger(__name__)

#: Messages asked per pull request, and when a request expires on the server.
PULL = 2000
EXPIRES_S = 5.0


#: One message of ``CS_SEV`` as it came: subject, payload and the reply subject
#: that acknowledges it (and everything before it) and names its stream
#: sequence (:func:`stream_seq`). A plain tuple: one is made per transition.
Transition = tuple[bytes, bytes, bytes]


def stream_seq(reply: bytes) -> int:
    """The stream sequence of a delivered message, from its reply subject
    (``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>``, or
    the longer form with domain and account hash)."""
    tokens = reply.split(b".")
    if len(tokens) == 9:
        return int(tokens[5])
    if len(tokens) >= 12:
        return int(tokens[7])
    raise ValueError(f"not a JetStream reply subject: {reply[:80]!r}")


class Feed:
    """Transitions from the durable consumer, as they come."""

    def __init__(self, nc: NatsClient, stream: str, durable: str, filter_: str) -> None:
        self.nc = nc
        self.stream = stream
        self.durable = durable
        self.filter = filter_
        self.created = False  # the consumer was created by this start
        self._inbox = ""
        self._sub: Any = None
        self._sid = 0
        self._queue: deque[Transition] = deque()
        self._arrived = asyncio.Event()
        self._credit = 0  # messages asked for and not delivered yet
        self._last_pull = 0.0

    async def open(self) -> None:
        """Bind to the durable consumer (created when missing)."""
        js = self.nc.jetstream()
        try:
            await js.consumer_info(self.stream, self.durable)
        except NotFoundError:
            config = ConsumerConfig(
                durable_name=self.durable,
                ack_policy=AckPolicy.ALL,
                deliver_policy=DeliverPolicy.NEW,
                filter_subject=self.filter,
                max_ack_pending=-1,
                ack_wait=60.0,
                description="the alarm service's severity transitions",
            )
            await js.add_consumer(self.stream, config)
            self.created = True
            log.info("created consumer %s on %s", self.durable, self.stream)
        # a client subscription (renewed by the client after a reconnect) whose
        # messages go raw to _on_raw (nats-py internals, as synoptic_bus.store)
        self._inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(self._inbox)
        self._sid = self._sub._id
        _raw_subscriptions(self.nc)[self._sid] = self._on_raw
        self._credit = 0

    def _on_raw(self, subject: bytes, reply: bytes, data: bytes,
                headers: bytes | None) -> None:  # fmt: skip
        if headers and not headers.startswith(b"NATS/1.0\r\n"):
            status = _status(headers)
            if status in (b"404", b"408", b"409"):
                left = _header(headers, b"Nats-Pending-Messages")
                self._credit = max(0, self._credit - int(left)) if left else 0
                self._arrived.set()
            return
        if not reply:
            return
        self._credit -= 1
        self._queue.append((subject, data, reply))
        if not self._arrived.is_set():
            self._arrived.set()

    async def _pull(self) -> None:
        request = {"batch": PULL, "expires": int(EXPIRES_S * 1e9)}
        await self.nc.publish(
            f"$JS.API.CONSUMER.MSG.NEXT.{self.stream}.{self.durable}",
            json.dumps(request).encode(), reply=self._inbox,
        )  # fmt: skip
        self._credit += PULL
        self._last_pull = asyncio.get_running_loop().time()

    async def next_batch(self, size: int, timeout: float) -> list[Transition]:
        """Up to ``size`` transitions, handed over as soon as any arrived (waits
        at most ``timeout`` for the first); empty when none came."""
        if not self._sid:
            await self.open()
        loop = asyncio.get_running_loop()
        if not self._queue:
            stale = loop.time() - self._last_pull > EXPIRES_S + 2.0
            if self._credit < PULL // 2 or stale:  # a request lost in a reconnect
                self._credit = 0 if stale else self._credit
                await self._pull()
            self._arrived.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._arrived.wait()
            except TimeoutError:
                return []
        out: list[Transition] = []
        queue = self._queue
        while queue and len(out) < size:
            out.append(queue.popleft())
        if self._credit < PULL // 2:
            await self._pull()
        return out

    async def ack(self, transition: Transition) -> None:
        """Acknowledge ``transition`` and everything delivered before it."""
        await self.nc.publish(transition[2].decode(), b"+ACK")

    async def reset(self) -> None:
        """Forget the subscription (it is bound again on the next batch)."""
        if self._sid:
            _raw_subscriptions(self.nc).pop(self._sid, None)
            try:
                await self._sub.unsubscribe()
            except Exception as exc:
                log.debug("unsubscribe: %s", exc)
        self._sid = 0
        self._queue.clear()
        self._credit = 0

    def reconnected(self) -> None:
        """NATS is back: outstanding pulls are gone with the old connection."""
        self._credit = 0
        self._last_pull = 0.0


_LAST_BATCH = 10_000
#: ``(subject, payload, raw header block or None, stream sequence)``
Last = Callable[[str, bytes, "bytes | None", int], None]


async def read_last(
    nc: NatsClient, stream: str, filter_subject: str, on_message: Last,
    timeout: float = 600.0,
) -> int:  # fmt: skip
    """Hand ``on_message`` the last message of every subject of ``stream`` that
    matches ``filter_subject`` (an ephemeral consumer, ``last per subject``,
    pulled raw: 100 000 subjects in a few seconds, without one request per 1024
    subjects); returns how many. Messages published meanwhile may come too."""
    js = nc.jetstream()
    info = await js.add_consumer(stream, ConsumerConfig(
        ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
        filter_subject=filter_subject, inactive_threshold=60.0, mem_storage=True,
    ))  # fmt: skip
    name = info.name or ""
    if not info.num_pending:
        await _delete_consumer(js, stream, name)
        return 0
    done = asyncio.Event()
    count = 0
    in_pull = 0

    def on_raw(
        subject: bytes, reply: bytes, data: bytes, headers: bytes | None
    ) -> None:
        nonlocal count, in_pull
        if headers and not headers.startswith(b"NATS/1.0\r\n"):
            if _status(headers) in (b"404", b"408", b"409"):
                done.set()  # this pull ended: ask again (or finish)
            return
        tokens = reply.split(b".")
        sseq = int(tokens[5] if len(tokens) == 9 else tokens[7])
        on_message(subject.decode(), data, headers, sseq)
        count += 1
        in_pull += 1
        if in_pull >= _LAST_BATCH:
            done.set()
        if int(tokens[-1]) == 0:  # nothing pending after this one
            finished.set()
            done.set()

    finished = asyncio.Event()
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    table = _raw_subscriptions(nc)
    table[sub._id] = on_raw
    try:
        async with asyncio.timeout(timeout):
            while not finished.is_set():
                done.clear()
                in_pull = 0
                request = {"batch": _LAST_BATCH, "expires": int(EXPIRES_S * 1e9)}
                await nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{name}",
                                 json.dumps(request).encode(), reply=inbox)  # fmt: skip
                await done.wait()
    finally:
        table.pop(sub._id, None)
        with contextlib.suppress(Exception):
            await sub.unsubscribe()
        await _delete_consumer(js, stream, name)
    return count


async def _delete_consumer(js: Any, stream: str, name: str) -> None:
    with contextlib.suppress(Exception):
        await js.delete_consumer(stream, name)
