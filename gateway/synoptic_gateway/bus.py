"""The gateway's NATS connection: live subscriptions, batched last-value reads,
put requests and announcements, with up/down notifications.

Connecting runs in the background so that the HTTP side (``/healthz``) is served
while NATS is away; ``/readyz`` reports :attr:`Bus.up`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.store import Snapshot, StoreConfig, ensure_store, fetch_last

log = logging.getLogger(__name__)

Handler = Callable[[Msg], Awaitable[None]]
Notify = Callable[[], Awaitable[None]]


class Bus:
    """One NATS connection shared by the whole gateway."""

    def __init__(
        self, url: str, prefix: str, name: str, on_down: Notify, on_up: Notify
    ) -> None:
        self._url = url
        self._store = StoreConfig(prefix)
        self._name = name
        self._on_down = on_down
        self._on_up = on_up
        self._nc: NatsClient | None = None
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        """Whether NATS is connected now."""
        return self._nc is not None and self._nc.is_connected

    def start(self) -> None:
        """Begin connecting (endless retries) in the background."""
        self._task = asyncio.create_task(self._connect(), name="nats-connect")

    async def wait_connected(self, timeout: float) -> None:
        await asyncio.wait_for(self._connected.wait(), timeout)

    async def _connect(self) -> None:
        self._nc = await connect(
            self._url,
            name=self._name,
            on_disconnect=self._disconnected,
            on_reconnect=self._reconnected,
        )
        await self._prepare_store()
        self._connected.set()
        log.info("NATS connected to %s", self._url)

    async def _prepare_store(self) -> None:
        try:  # memory streams vanish with a restarted server: recreate (idempotent)
            await ensure_store(self.nc, self._store)
        except Exception as exc:
            log.warning("last-value stream not available: %s", exc)

    async def _disconnected(self) -> None:
        await self._on_down()

    async def _reconnected(self) -> None:
        await self._prepare_store()
        await self._on_up()

    @property
    def nc(self) -> NatsClient:
        if self._nc is None:
            raise RuntimeError("NATS is not connected yet")
        return self._nc

    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """A live subscription (nats-py resubscribes it after a reconnect)."""
        return await self.nc.subscribe(
            subject, cb=handler, pending_msgs_limit=1_000_000
        )

    async def flush(self, timeout: float = 5.0) -> None:
        """Round trip to the server: every subscription sent so far is active."""
        await self.nc.flush(timeout)

    async def fetch(self, subjects: Sequence[str], timeout: float) -> Snapshot:
        """Last messages of many subjects (batched Direct Get)."""
        return await fetch_last(
            self.nc, subjects, stream=self._store.stream, timeout=timeout
        )

    async def publish(self, subject: str, data: bytes) -> None:
        await self.nc.publish(subject, data)

    async def request(self, subject: str, data: bytes, timeout: float) -> Any:
        return await self.nc.request(subject, data, timeout=timeout)

    async def close(self) -> None:
        if self._task and not self._task.done():
            self._task.cancel()
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.close()
