"""The gateway's NATS connection: live subscriptions, batched last-value reads,
put requests and announcements, with up/down notifications.

Connecting runs in the background so that the HTTP side (``/healthz``) is served
while NATS is away; ``/readyz`` reports :attr:`Bus.up`. The gateway only reads the
last-value stream: adapters and ``synoptic bus init`` create and configure it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from nats.protocol.command import sub_cmd, unsub_cmd

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.store import Snapshot, StoreConfig, fetch_last, store_barrier
from synoptic_gateway.wire import FastParser

log = logging.getLogger(__name__)

#: A live-message handler: ``(subject, payload)``, called synchronously.
Handler = Callable[[bytes, bytes], None]
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
        self._live: dict[int, tuple[str, Handler]] = {}  # sid -> (subject, handler)

    @property
    def up(self) -> bool:
        """Whether NATS is connected now."""
        return self._nc is not None and self._nc.is_connected

    @property
    def clustered(self) -> bool:
        """Whether the NATS server we are connected to is part of a cluster (its
        ``INFO`` names one)."""
        info = getattr(self._nc, "_server_info", None) or {}
        return bool(info.get("cluster"))

    def start(self) -> None:
        """Begin connecting (endless retries) in the background."""
        self._task = asyncio.create_task(self._connect(), name="nats-connect")

    async def wait_connected(self, timeout: float | None) -> None:
        await asyncio.wait_for(self._connected.wait(), timeout)

    async def _connect(self) -> None:
        nc = await connect(
            self._url,
            name=self._name,
            on_disconnect=self._disconnected,
            on_reconnect=self._reconnected,
        )
        self._install_fast_path(nc)
        self._nc = nc
        self._connected.set()
        log.info("NATS connected to %s", self._url)

    async def _disconnected(self) -> None:
        await self._on_down()

    async def _reconnected(self) -> None:
        nc = self.nc
        try:  # nats-py replays only its own subscriptions
            for sid, (subject, _) in list(self._live.items()):
                await nc._send_command(sub_cmd(subject, "", sid))
            await nc.flush()
        except Exception as exc:  # slow, or dropped again (then replayed next time)
            log.warning("replaying subscriptions after reconnect: %s", exc)
        await self._on_up()

    def _install_fast_path(self, nc: NatsClient) -> None:
        """Dispatch live messages of :meth:`subscribe` straight from the protocol
        parser: no message object, queue or task per message (nats-py's own
        subscriptions cost ~3x more CPU per message and one loop turn per
        subscribe), and read their ``MSG`` lines with :class:`FastParser` instead
        of nats-py's parser (~4x less CPU per message; yields to the loop during a
        long burst). Uses nats-py internals (``_process_msg``, ``_sid``,
        ``_send_command``, ``_ps``), pinned to nats-py 2.16 and covered by the
        system tests."""
        original = nc._process_msg
        live = self._live

        async def process_msg(
            sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
        ) -> None:
            entry = live.get(sid)
            if entry is None:
                await original(sid, subject, reply, data, headers)
            else:
                entry[1](subject, data)

        nc._process_msg = process_msg  # type: ignore[method-assign]
        FastParser(nc, live).install()  # MSG lines of live subscriptions: no await

    @property
    def nc(self) -> NatsClient:
        if self._nc is None:
            raise RuntimeError("NATS is not connected yet")
        return self._nc

    async def subscribe(self, subject: str, handler: Handler) -> int:
        """A live subscription whose messages go to ``handler(subject, payload)``;
        returns its id. Active on the server after the next :meth:`flush`."""
        nc = self.nc
        nc._sid += 1
        sid = nc._sid
        self._live[sid] = (subject, handler)
        await nc._send_command(sub_cmd(subject, "", sid))
        return sid

    async def subscribe_many(self, entries: Sequence[tuple[str, Handler]]) -> list[int]:
        """Live subscriptions like :meth:`subscribe`, sent in one write (in this
        order, before anything sent after this call); returns their ids."""
        nc = self.nc
        sids: list[int] = []
        commands: list[bytes] = []
        for subject, handler in entries:
            nc._sid += 1
            sid = nc._sid
            self._live[sid] = (subject, handler)
            sids.append(sid)
            commands.append(sub_cmd(subject, "", sid))
        await nc._send_command(b"".join(commands))
        return sids

    async def unsubscribe_many(self, sids: Sequence[int]) -> None:
        """Drop live subscriptions in one write."""
        commands = [unsub_cmd(sid, 0) for sid in sids if self._live.pop(sid, None)]
        if commands and self.up:
            await self.nc._send_command(b"".join(commands))
            await self.nc._flush_pending()

    async def unsubscribe(self, sid: int) -> None:
        if self._live.pop(sid, None) is not None and self.up:
            await self.nc._send_command(unsub_cmd(sid, 0))
            await self.nc._flush_pending()

    async def flush(self, timeout: float = 5.0) -> None:
        """Round trip to the server: every subscription sent so far is active."""
        await self.nc.flush(timeout)

    async def fetch(self, subjects: Sequence[str], timeout: float) -> Snapshot:
        """Last messages of many subjects (batched Direct Get)."""
        return await fetch_last(
            self.nc, subjects, stream=self._store.stream, timeout=timeout
        )

    @property
    def barrier_subject(self) -> str:
        return self._store.barrier_subject

    async def barrier(self, timeout: float) -> int:
        """An acknowledged publish into the last-value stream (after every command
        sent so far, e.g. new subscriptions): its stream sequence. See
        :func:`synoptic_bus.store.store_barrier`."""
        return await store_barrier(self.nc, self._store.barrier_subject, timeout)

    async def publish(self, subject: str, data: bytes) -> None:
        await self.nc.publish(subject, data)

    async def request(self, subject: str, data: bytes, timeout: float) -> Any:
        return await self.nc.request(subject, data, timeout=timeout)

    async def close(self) -> None:
        if self._task and not self._task.done():
            self._task.cancel()
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.close()
