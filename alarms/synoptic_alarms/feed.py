"""The severity transitions, in order, through a durable consumer of ``CS_SEV``.

The consumer (``alarms`` by default) acknowledges cumulatively (ack policy
``all``): a batch is acknowledged by its last message, and only once the states
it produced are stored (:meth:`Feed.ack`). So a service that stops, is killed or
loses NATS gets every transition it had not finished with again, in order, from
the server's copy of where it was. A consumer that does not exist yet (the
service's first start, or someone deleted it) starts with new transitions: the
service reads the current state of its channels at start anyway.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from synoptic_bus.connect import NatsClient

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Transition:
    """One message of ``CS_SEV``: its subject, payload and stream sequence."""

    subject: str
    data: bytes
    sseq: int


def stream_seq(reply: str) -> int:
    """The stream sequence of a delivered message, from its reply subject
    (``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>``, or
    the longer form with domain and account hash)."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5])
    if len(tokens) >= 12:
        return int(tokens[7])
    raise ValueError(f"not a JetStream reply subject: {reply[:80]!r}")


class Feed:
    """Batches of transitions from the durable consumer."""

    def __init__(self, nc: NatsClient, stream: str, durable: str, filter_: str) -> None:
        self.nc = nc
        self.stream = stream
        self.durable = durable
        self.filter = filter_
        self._sub: Any = None
        self.created = False  # the consumer was created by this start

    async def open(self) -> None:
        """Bind to the durable consumer, creating it when missing."""
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
        self._sub = await js.pull_subscribe_bind(self.durable, self.stream)

    async def next_batch(
        self, size: int, timeout: float
    ) -> list[tuple[Transition, Any]]:
        """Up to ``size`` transitions (waits at most ``timeout`` for the first);
        empty when none came. Each comes with its message, to acknowledge."""
        if self._sub is None:
            await self.open()
        try:
            msgs = await self._sub.fetch(size, timeout=timeout)
        except (TimeoutError, NatsTimeoutError):
            return []
        out = []
        for msg in msgs:
            try:
                out.append(
                    (Transition(msg.subject, msg.data, stream_seq(msg.reply)), msg)
                )
            except ValueError as exc:
                log.warning("dropping a message of %s: %s", self.stream, exc)
        return out

    async def ack(self, msg: Any) -> None:
        """Acknowledge ``msg`` and everything delivered before it."""
        await msg.ack()

    async def reset(self) -> None:
        """Forget the subscription (it is bound again on the next batch)."""
        if self._sub is not None:
            try:
                await self._sub.unsubscribe()
            except Exception as exc:
                log.debug("unsubscribe: %s", exc)
        self._sub = None
