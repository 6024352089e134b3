"""The client's connection to a gateway tier: it connects to one of several URLs,
pings to find a hung gateway, and reconnects with exponential backoff and full
jitter when the connection drops (for any close code but 4401)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from synoptic_gateway.client.arrival import ArrivalStampedConnection
from synoptic_gateway.client.pace import Pace
from synoptic_gateway.tokens import StaticToken, TokenSource
from synoptic_schemas import frames
from synoptic_schemas.frames import CloseCode

log = logging.getLogger(__name__)


class Link:
    """A connection that survives the loss of any one gateway (the base of
    :class:`~synoptic_gateway.client.GatewayClient`, which gives it
    :meth:`_dispatch`, :meth:`_lost`, :meth:`_resume` and :meth:`_opened`)."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        token: str | TokenSource | None,
        json_mode: bool,
        backoff_base: float,
        backoff_max: float,
        open_timeout: float,
        max_queue: int | None,
        shuffle: bool,
        ping_interval: float | None,
        ping_timeout: float,
    ) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        #: where tokens come from (a string is taken as it is, never renewed)
        self.tokens: TokenSource | None = (
            StaticToken(token) if isinstance(token, str) else token
        )
        self.json_mode = json_mode
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.open_timeout = open_timeout
        self.max_queue = max_queue
        #: seconds between application pings (None: no pings, no hang detection)
        self.ping_interval = ping_interval
        #: seconds of silence after a ping that mark the gateway as hung
        self.ping_timeout = ping_timeout
        self.hung_closes = 0  # connections dropped because the gateway went silent
        self.url: str | None = None
        #: wall-clock ns at which the frame being dispatched reached this process
        #: (before it was decoded; see :class:`ArrivalStampedConnection`)
        self.received_ns = 0
        self.connects = 0
        self.close_codes: list[int | None] = []
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._received = asyncio.Event()  # set by every frame received
        self._reconnecting: asyncio.Task[None] | None = None
        self._closing = False
        self._connected = asyncio.Event()
        self._hello = asyncio.Event()  # set by the dispatch of ``hello``
        #: frames leave at the rate the gateway announced (``hello``'s limits)
        self.pace = Pace()
        # spread clients over the URLs; ``shuffle=False`` tries them in order
        self._next_url = random.randrange(len(self.urls)) if shuffle else 0

    # ------------------------------------------------------------ hooks

    def _dispatch(self, frame: dict[str, Any]) -> None:
        """Handle one decoded frame (sets ``_hello`` on ``hello``)."""
        raise NotImplementedError

    def _lost(self, code: int | None) -> None:
        """The connection closed with ``code``: fail what waits for an answer."""

    async def _resume(self) -> None:
        """Connected again: ask again what the last connection held."""

    def _opened(self) -> None:
        """A connection is open and greeted."""

    # ------------------------------------------------------------ connection

    def _full_url(self, url: str) -> str:
        if not self.json_mode:
            return url
        return url + ("&" if "?" in url else "?") + "format=json"

    async def _open(self, url: str) -> None:
        self._hello.clear()
        headers = {}
        if self.tokens is not None:  # a header, never the URL
            headers["Authorization"] = f"Bearer {await self.tokens.token()}"
        self._ws = await connect(
            self._full_url(url),
            additional_headers=headers,
            open_timeout=self.open_timeout,
            max_size=None,
            compression=None,
            max_queue=self.max_queue,
            ping_interval=None,
            create_connection=ArrivalStampedConnection,
        )
        self.url = url
        self.connects += 1
        self._reader = asyncio.create_task(self._read(self._ws), name="gw-client-read")
        await asyncio.wait_for(self._hello.wait(), self.open_timeout)
        self._connected.set()
        if self.ping_interval:
            self._pinger = asyncio.create_task(
                self._keepalive(self._ws), name="gw-client-ping"
            )
        self._opened()

    async def _keepalive(self, ws: ClientConnection) -> None:
        """Ping every ``ping_interval``; abort the connection when nothing arrives
        within ``ping_timeout`` of a ping (the reader then reconnects). Any frame
        counts as an answer: on a busy socket the ``pong`` queues behind data."""
        assert self.ping_interval
        loop = asyncio.get_running_loop()
        ping = frames.ping(None)
        data = frames.to_json(ping) if self.json_mode else frames.pack(ping)
        while True:
            await asyncio.sleep(self.ping_interval)
            sent = loop.time()
            self._received.clear()
            try:
                async with asyncio.timeout(self.ping_timeout):
                    await self.pace.wait()
                    await ws.send(data)
                    await self._received.wait()
            except TimeoutError:
                log.warning(
                    "gateway %s silent for %.1f s after a ping: reconnecting",
                    self.url, loop.time() - sent,
                )  # fmt: skip
                self.hung_closes += 1
                ws.transport.abort()
                return
            except ConnectionClosed:
                return

    async def connect(self, timeout: float = 30.0) -> None:
        """Connect to one of the URLs (retrying with backoff up to ``timeout``)."""
        async with asyncio.timeout(timeout):
            await self._connect_loop()

    async def _connect_loop(self) -> None:
        for attempt in itertools.count():
            url = self.urls[self._next_url % len(self.urls)]
            self._next_url += 1
            try:
                await self._open(url)
                return
            except (OSError, TimeoutError, ConnectionClosed, Exception) as exc:
                if isinstance(exc, asyncio.CancelledError):
                    raise
                log.info("connect to %s failed: %s", url, exc)
                if self._ws is not None:
                    with contextlib.suppress(Exception):
                        await self._ws.close()
            cap = min(self.backoff_max, self.backoff_base * 2**attempt)
            await asyncio.sleep(random.uniform(0, cap))

    async def close(self) -> None:
        """Close for good (no reconnect)."""
        self._closing = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._pinger is not None:
            self._pinger.cancel()
            with contextlib.suppress(BaseException):
                await self._pinger

    async def _read(self, ws: ClientConnection) -> None:
        unpack = frames.from_json if self.json_mode else frames.unpack
        received = self._received
        arrivals: deque[int] = getattr(ws, "arrivals", deque())
        try:
            async for data in ws:
                self.received_ns = arrivals.popleft() if arrivals else time.time_ns()
                received.set()
                self._dispatch(unpack(data))
        except ConnectionClosed:
            pass
        if self._pinger is not None:
            self._pinger.cancel()
        code = ws.close_code
        self.close_codes.append(code)
        self._connected.clear()
        self._lost(code)
        if self._closing or code == CloseCode.UNAUTHORIZED:
            return
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        await self._connect_loop()
        await self._resume()

    async def wait_connected(self, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self._connected.wait(), timeout)
