"""Demand leases: monitor a channel on first demand, release it when nobody wants it.

Consumers (gateways) announce on ``cs.want.<proto>`` the channels they need and for
how long (a :class:`~synoptic_schemas.messages.WantMsg` lease) and renew before the
lease ends. Guarantees:

- A wanted channel that this instance owns is monitored at once (one bulk
  ``Source.monitor`` per announcement) and kept while any lease on it is running.
- A demanded channel whose lease lapsed with no renewal is released within one sweep
  period; its last state on the bus becomes "disconnected: released" so the
  last-value store never shows it as live while nobody updates it.
- Channels from the configuration are always monitored and never released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.subscription import Subscription

from synoptic_adapters.publisher import Publisher
from synoptic_adapters.source import Source
from synoptic_schemas import Channel, ChannelError, DecodeError, Subjects, parse_channel
from synoptic_schemas.codec import decode_want

log = logging.getLogger(__name__)

RELEASED_STATUS = "released: no demand"


class Demand:
    """Tracks leases of demanded channels for one protocol and one shard."""

    def __init__(
        self,
        nc: NatsClient,
        subjects: Subjects,
        source: Source,
        publisher: Publisher,
        *,
        configured: Iterable[Channel] = (),
        owns: Callable[[Channel], bool] = lambda _channel: True,
        max_lease: float = 600.0,
        sweep_period: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.nc = nc
        self.subjects = subjects
        self.source = source
        self.publisher = publisher
        self.proto = source.proto
        self.configured = frozenset(configured)
        self.owns = owns
        self.max_lease = max_lease
        self.sweep_period = sweep_period
        self.clock = clock
        self.leases: dict[Channel, float] = {}  # channel -> monotonic expiry
        self.bad_announcements = 0
        self._sub: Subscription | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # monitor/release in announcement order

    @property
    def monitored(self) -> set[Channel]:
        """Configured plus demanded channels."""
        return set(self.configured) | set(self.leases)

    async def start(self) -> None:
        """Subscribe to announcements and start releasing lapsed leases."""
        self._sub = await self.nc.subscribe(
            self.subjects.want(self.proto), cb=self._on_want
        )
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="demand-sweep")

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def _on_want(self, msg: Any) -> None:
        try:
            want = decode_want(msg.data)
        except DecodeError as exc:
            self.bad_announcements += 1
            log.warning("ignoring bad want announcement: %s", exc)
            return
        channels = []
        for uri in want["ch"]:
            try:
                channel = parse_channel(uri)
            except ChannelError as exc:
                self.bad_announcements += 1
                log.warning("want from %s: %s", want["by"], exc)
                continue
            if channel.proto == self.proto and self.owns(channel):
                channels.append(channel)
        await self.want(channels, float(want["lease"]))

    async def want(self, channels: Iterable[Channel], lease: float) -> None:
        """Take or renew a lease of ``lease`` seconds on owned ``channels``."""
        until = self.clock() + min(max(lease, 0.0), self.max_lease)
        new: list[Channel] = []
        for channel in channels:
            if channel in self.configured:
                continue
            if channel not in self.leases:
                new.append(channel)
                self.leases[channel] = until
            elif until > self.leases[channel]:
                self.leases[channel] = until
        if new:
            async with self._lock:
                log.info("demand: monitoring %d new channels", len(new))
                await self.source.monitor(new)

    async def sweep(self) -> list[Channel]:
        """Release every demanded channel whose lease has lapsed; return them."""
        now = self.clock()
        lapsed = [ch for ch, until in self.leases.items() if until <= now]
        if not lapsed:
            return []
        for channel in lapsed:
            del self.leases[channel]
        async with self._lock:
            await self.source.release(lapsed)
        for channel in lapsed:
            self.publisher.disconnected(channel, RELEASED_STATUS)
            self.publisher.forget(channel)
        log.info("demand: released %d channels (lease lapsed)", len(lapsed))
        return lapsed

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_period)
            try:
                await self.sweep()
            except Exception:
                log.exception("demand sweep failed")
