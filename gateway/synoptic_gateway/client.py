"""Async Python client of the gateway protocol (tests, benchmarks, users' scripts).

::

    async with GatewayClient(["ws://gw1:8000/ws", "ws://gw2:8000/ws"]) as client:
        sub = await client.subscribe(["ca://SR:DCCT"], on_update=print_update)
        print(sub.value("ca://SR:DCCT"))

The client connects to one of several gateway URLs; when the connection drops (for
any close code but 4401) it reconnects with exponential backoff and full jitter,
trying the other URLs first, subscribes again and takes the fresh snapshots.

A gateway that hangs (process stopped, host frozen, a half-open TCP connection)
closes nothing: the client sends an application ``ping`` every ``ping_interval``
seconds and, if nothing at all (no ``pong``, no other frame) arrives within
``ping_timeout`` seconds of it, drops the connection and reconnects the same way.

:attr:`GatewayClient.received_ns` is the wall-clock time (ns) at which the frame
being dispatched reached this process: noted when the socket's bytes are parsed
into a message, before the message waits behind earlier ones, is decoded or handed
to callbacks (latency measurements: ``received_ns - value["t"]``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import Event

from synoptic_gateway.tokens import RENEW_AHEAD, StaticToken, TokenSource
from synoptic_schemas import frames, parse_channel
from synoptic_schemas.frames import CloseCode, Op

log = logging.getLogger(__name__)

UpdateCallback = Callable[["Subscription", list[int], list[Any]], None]


class GatewayError(Exception):
    """An ``err`` frame answering a request."""

    def __init__(self, frame: dict[str, Any]) -> None:
        super().__init__(f"{frame.get('code')}: {frame.get('msg')}")
        self.code: str = frame.get("code", "")
        self.frame = frame


class ArrivalStampedConnection(ClientConnection):
    """A client connection that notes when each data message starts to arrive
    (``time.time_ns()``, in :attr:`arrivals`, oldest first): when the event loop
    hands the socket's bytes to the protocol, before the message is queued behind
    others, decoded or handled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: arrival times of the data messages not yet taken by the reader
        self.arrivals: deque[int] = deque()

    def process_event(self, event: Event) -> None:
        if type(event) is Frame and event.opcode in _MESSAGE_STARTS:
            self.arrivals.append(time.time_ns())
        super().process_event(event)


_MESSAGE_STARTS = frozenset({Opcode.BINARY, Opcode.TEXT})


#: Seconds between two fresh snapshots asked for shift updates whose base is not held.
RESYNC_S = 3.0


class Subscription:
    """The live state of one subscribed channel set.

    ``channels`` is the gateway's group order (sorted normalised URIs); ``values``
    and ``metas`` hold the latest payload of each (``None`` until known);
    ``stale`` the indexes of channels with no live source (their adapter stopped
    beating: from ``src`` up false or ``snap.stale`` until an update of the
    channel or ``src`` up true).
    """

    def __init__(
        self, client: GatewayClient, uris: list[str], on_update: UpdateCallback | None
    ) -> None:
        self.client = client
        self.requested = uris
        #: channel -> most points drawn (``sub.pts``; empty: full arrays)
        self.points: dict[str, int] = {}
        #: whether it accepts array updates in the shift form (``sub.shift``)
        self.shift = False
        #: shift-form updates whose base it did not hold (each asks a snapshot)
        self.shift_misses = 0
        self._resync_at = float("-inf")
        self._resync: asyncio.Task[None] | None = None
        self.on_update = on_update
        self.sid: int | None = None
        self.channels: list[str] = []
        self.index: dict[str, int] = {}
        self.values: list[Any] = []
        self.metas: list[Any] = []
        self.stale: set[int] = set()
        #: indexes whose large values the last snapshot said follow (``snap.more``)
        self.following: set[int] = set()
        self.snapshots = 0  # snapshots received (a reconnect adds one)
        self.updates = 0
        self.missed = 0
        self.conflated = 0
        self._changed = asyncio.Event()

    def value(self, uri: str) -> Any:
        """The latest value payload of a channel (``None`` if none yet)."""
        return self.values[self.index[parse_channel(uri).uri]]

    def meta(self, uri: str) -> Any:
        return self.metas[self.index[parse_channel(uri).uri]]

    def is_stale(self, uri: str) -> bool:
        """Whether a channel's value has no live source now."""
        return self.index[parse_channel(uri).uri] in self.stale

    @property
    def stale_channels(self) -> list[str]:
        """URIs of the channels with no live source now (group order)."""
        return [self.channels[i] for i in sorted(self.stale)]

    async def wait_snapshot(self, count: int = 1, timeout: float = 10.0) -> None:
        """Wait until ``count`` snapshots have arrived."""
        async with asyncio.timeout(timeout):
            while self.snapshots < count:
                self._changed.clear()
                await self._changed.wait()

    async def wait_for(
        self, predicate: Callable[[Subscription], bool], timeout: float = 10.0
    ) -> None:
        """Wait until ``predicate(self)`` holds (checked after each frame)."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                self._changed.clear()
                await self._changed.wait()

    def _apply_snap(self, frame: dict[str, Any]) -> None:
        self.sid = frame["sid"]
        self.channels = frame["ch"]
        self.index = {uri: i for i, uri in enumerate(self.channels)}
        self.values = list(frame["val"])
        self.metas = list(frame["meta"])
        self.stale = set(frame.get("stale") or ())
        self.following = set(frame.get("more") or ())
        self.snapshots += 1
        self._changed.set()

    def _apply_upd(self, frame: dict[str, Any]) -> None:
        indexes, values = frame["i"], frame["val"]
        if self.following:
            self.following.difference_update(indexes)
        if self.shift:  # the full values, of those to apply only, in order
            kept_i, kept_v = [], []
            for i, v in zip(indexes, values, strict=False):
                full = self._unshifted(i, v)
                if full is not None:
                    self.values[i] = full
                    kept_i.append(i)
                    kept_v.append(full)
            indexes, values = kept_i, kept_v
        for i, v in zip(indexes, values, strict=False):
            self.values[i] = v
        if self.stale:  # a value clears the mark
            self.stale.difference_update(indexes)
        self.updates += len(indexes)
        if self.on_update is not None:
            self.on_update(self, indexes, values)
        self._changed.set()

    def _unshifted(self, i: int, value: dict[str, Any]) -> dict[str, Any] | None:
        """The full value of an update (``None``: not to apply): an update not
        newer in (ep, seq) than the one held is ignored; a shift form applies to
        its base only, else it is counted and a fresh snapshot asked (at most
        once per :data:`RESYNC_S`)."""
        held = self.values[i]
        if held is not None and (held["ep"], held["seq"]) >= (
            value["ep"],
            value["seq"],
        ):
            return None
        if not frames.is_shifted(value):
            return value
        full = frames.unshift(held, value)
        if full is None:
            self.shift_misses += 1
            now = time.monotonic()
            if now - self._resync_at >= RESYNC_S:
                self._resync_at = now
                self._resync = asyncio.get_running_loop().create_task(
                    self.client._send_sub(self)
                )
        return full

    def _apply_src(self, frame: dict[str, Any]) -> None:
        if frame["up"]:
            self.stale.difference_update(frame["i"])
        else:
            self.stale.update(frame["i"])
        self._changed.set()

    def _apply_meta(self, frame: dict[str, Any]) -> None:
        for i, m in zip(frame["i"], frame["meta"], strict=False):
            self.metas[i] = m
        self._changed.set()

    async def close(self) -> None:
        """Unsubscribe."""
        await self.client.unsubscribe(self)


@dataclass
class Trace:
    """One channel's history as answered: times (float64 ms since the epoch),
    values (float64) and severities (uint8), or None; an error ``{"code", "msg"}``
    or None; where it came from (``bus``, ``archive``, ``archive+bus``)."""

    t: np.ndarray | None
    v: np.ndarray | None
    sev: np.ndarray | None
    err: dict[str, str] | None
    src: str | None


def _typed(obj: Any) -> np.ndarray | None:
    """A typed array of a msgpack answer, or of the JSON view."""
    if obj is None or isinstance(obj, np.ndarray):
        return obj
    dtype = np.dtype(obj["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(obj["b64"]), dtype).reshape(obj["shape"])


class GatewayClient:
    """A connection to a gateway tier that survives the loss of any one gateway."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        token: str | TokenSource | None = None,
        json_mode: bool = False,
        backoff_base: float = 0.1,
        backoff_max: float = 5.0,
        open_timeout: float = 5.0,
        max_queue: int | None = 64,
        on_frame: Callable[[dict[str, Any]], None] | None = None,
        shuffle: bool = True,
        ping_interval: float | None = 3.0,
        ping_timeout: float = 6.0,
    ) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        #: where tokens come from (a string is taken as it is, never renewed)
        self.tokens: TokenSource | None = (
            StaticToken(token) if isinstance(token, str) else token
        )
        self.auth: dict[str, Any] = {}  # the last ``auth`` frame (renewals)
        self._renewer: asyncio.Task[None] | None = None
        self.json_mode = json_mode
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.open_timeout = open_timeout
        self.max_queue = max_queue
        self.on_frame = on_frame
        #: seconds between application pings (None: no pings, no hang detection)
        self.ping_interval = ping_interval
        #: seconds of silence after a ping that mark the gateway as hung
        self.ping_timeout = ping_timeout
        self.hung_closes = 0  # connections dropped because the gateway went silent
        self.hello: dict[str, Any] = {}
        self.url: str | None = None
        #: wall-clock ns at which the frame being dispatched reached this process
        #: (before it was decoded; see :class:`ArrivalStampedConnection`)
        self.received_ns = 0
        self.connects = 0
        self.bus_up = True
        self._bus_changed = asyncio.Event()
        self.close_codes: list[int | None] = []
        self.errors: list[dict[str, Any]] = []  # err frames not tied to a request
        self._new_error = asyncio.Event()
        self._ws: ClientConnection | None = None
        self._subs: list[Subscription] = []
        #: ``screen`` frames received (a watched screen's new revisions), in order
        self.screens: list[dict[str, Any]] = []
        self._new_screen = asyncio.Event()
        self._watched: list[str] | None = None
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._pending_subs: dict[Any, Subscription] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._received = asyncio.Event()  # set by every frame received
        self._reconnecting: asyncio.Task[None] | None = None
        self._closing = False
        self._connected = asyncio.Event()
        self._hello = asyncio.Event()
        # spread clients over the URLs; ``shuffle=False`` tries them in order
        self._next_url = random.randrange(len(self.urls)) if shuffle else 0

    async def __aenter__(self) -> GatewayClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def gateway_id(self) -> str | None:
        return self.hello.get("gw")

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
        if self.tokens is not None and self._renewer is None:
            self._renewer = asyncio.create_task(self._keep_token(), name="gw-renew")

    async def renew(self, token: str | None = None, timeout: float = 10.0) -> dict:
        """Hand the socket a new token (``token``, else a fresh one of the token
        source) in an ``auth`` frame; returns the gateway's ``auth`` answer
        (:class:`GatewayError` ``unauthorized`` if refused: the socket keeps its
        grants). No reconnect: the subscriptions go on."""
        if token is None:
            if self.tokens is None:
                raise ValueError("no token source to renew from")
            token = await self.tokens.token()
        answer = await self._request(frames.auth(next(self._ids), token), timeout)
        self.auth = answer
        return answer

    async def _keep_token(self) -> None:
        """Renew the socket's token shortly before it expires."""
        assert self.tokens is not None
        while not self._closing:
            expires = self.tokens.expires
            if expires is None:
                return
            await asyncio.sleep(max(1.0, expires - time.time() - RENEW_AHEAD / 2))
            with contextlib.suppress(Exception):  # next try on the next round
                await self.wait_connected()
                await self.renew()

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
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(BaseException):
                await self._renewer

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
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(f"connection closed ({code})"))
        self._pending.clear()
        self._pending_subs.clear()
        if self._closing or code == CloseCode.UNAUTHORIZED:
            return
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        await self._connect_loop()
        for sub in list(self._subs):
            with contextlib.suppress(Exception):
                await self._send_sub(sub)
        if self._watched:
            with contextlib.suppress(Exception):
                await self.watch(self._watched)

    async def wait_for_bus(self, up: bool, timeout: float = 30.0) -> None:
        """Wait until the gateway says the bus is ``up`` (or down)."""
        async with asyncio.timeout(timeout):
            while self.bus_up is not up:
                self._bus_changed.clear()
                await self._bus_changed.wait()

    async def wait_errors(self, count: int, timeout: float = 10.0) -> list[dict]:
        """Wait until ``count`` unsolicited ``err`` frames have arrived."""
        async with asyncio.timeout(timeout):
            while len(self.errors) < count:
                self._new_error.clear()
                await self._new_error.wait()
        return self.errors

    async def wait_connected(self, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self._connected.wait(), timeout)

    # ------------------------------------------------------------ frames

    def _dispatch(self, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        if self.on_frame is not None:
            self.on_frame(frame)
        if op == Op.UPD:
            for sub in self._subs:
                if sub.sid == frame["sid"]:
                    sub._apply_upd(frame)
        elif op == Op.SNAP:
            sub = self._pending_subs.pop(frame.get("id"), None)
            targets = [sub] if sub else [s for s in self._subs if s.sid == frame["sid"]]
            for target in targets:
                target._apply_snap(frame)
            self._resolve(frame)
        elif op == Op.META:
            for sub in self._subs:
                if sub.sid == frame["sid"]:
                    sub._apply_meta(frame)
        elif op == Op.SRC:
            for sub in self._subs:
                if sub.sid == frame["sid"]:
                    sub._apply_src(frame)
        elif op == Op.STATS:
            for sub in self._subs:
                if sub.sid == frame["sid"]:
                    sub.missed += frame["missed"]
                    sub.conflated += frame["conflated"]
        elif op == Op.HELLO:
            self.hello = frame
            self.bus_up = True
            self._hello.set()
        elif op == Op.BUS:
            self.bus_up = bool(frame["up"])
            self._bus_changed.set()
        elif op == Op.SCREEN:
            self.screens.append(frame)
            self._new_screen.set()
        elif op == Op.AUTH and frame.get("id") is None:  # the token expired
            self.auth = frame
        elif op == Op.ERR:
            if frame.get("id") is None or frame.get("id") not in self._pending:
                self.errors.append(frame)
                self._new_error.set()
            self._pending_subs.pop(frame.get("id"), None)
            self._resolve(frame)
        else:  # put, pong, unsub, watch
            self._resolve(frame)

    def _resolve(self, frame: dict[str, Any]) -> None:
        future = self._pending.pop(frame.get("id"), None)
        if future is not None and not future.done():
            if frame.get("op") == Op.ERR:
                future.set_exception(GatewayError(frame))
            else:
                future.set_result(frame)

    async def _request(self, frame: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self._ws is None:
            raise ConnectionError("not connected")
        future = asyncio.get_running_loop().create_future()
        self._pending[frame["id"]] = future
        data = frames.to_json(frame) if self.json_mode else frames.pack(frame)
        await self._ws.send(data)
        return await asyncio.wait_for(future, timeout)

    async def send_raw(self, data: bytes | str) -> None:
        """Send bytes as they are (tests of malformed frames)."""
        assert self._ws is not None
        await self._ws.send(data)

    # ------------------------------------------------------------ requests

    async def _send_sub(self, sub: Subscription, timeout: float = 30.0) -> None:
        req_id = next(self._ids)
        self._pending_subs[req_id] = sub
        await self._request(
            frames.sub(req_id, sub.requested, sub.points, sub.shift), timeout
        )

    async def subscribe(
        self,
        uris: Sequence[str],
        on_update: UpdateCallback | None = None,
        timeout: float = 30.0,
        points: Mapping[str, int] | None = None,
        shift: bool = False,
    ) -> Subscription:
        """Subscribe a channel set; returns once its snapshot has arrived, the
        large values that follow it (``snap.more``) included.

        ``points`` maps channels (of ``uris``) whose arrays you draw to the most
        points you draw of them (e.g. twice the plot's width in pixels): their 1-D
        arrays arrive as a min/max envelope of at most that many points, with the
        value keys ``x`` (the kept indexes) and ``n`` (the full length). For an
        image channel, the most pixels you draw across: an image wider or taller
        arrives binned (each pixel its block's maximum, same dtype) with ``bin``
        (the factor) and ``n`` (the full shape); leave it out for full resolution.

        ``shift``: full-resolution 1-D arrays that are the previous value shifted
        (a circular buffer) arrive as their new samples only; the subscription
        rebuilds the full values (``values`` and ``on_update`` see full values)."""
        sub = Subscription(self, list(uris), on_update)
        sub.points = dict(points or {})
        sub.shift = shift
        self._subs.append(sub)  # before the snap: updates may follow it at once
        try:
            async with asyncio.timeout(timeout):
                await self._send_sub(sub, timeout)
                await sub.wait_for(lambda s: not s.following, timeout)
        except BaseException:
            self._subs.remove(sub)
            raise
        return sub

    async def unsubscribe(self, sub: Subscription, timeout: float = 10.0) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
        if sub.sid is not None and all(s.sid != sub.sid for s in self._subs):
            await self._request(frames.unsub(next(self._ids), sub.sid), timeout)

    async def watch(self, names: Sequence[str], timeout: float = 10.0) -> None:
        """Watch these screens (replacing the watched set; kept across reconnects):
        their new revisions arrive as ``screen`` frames in :attr:`screens`."""
        self._watched = list(names)
        await self._request(frames.watch(next(self._ids), self._watched), timeout)

    async def wait_screen(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """The first ``screen`` frame (received so far or later) that matches."""
        async with asyncio.timeout(timeout):
            while True:
                for frame in self.screens:
                    if predicate(frame):
                        return frame
                self._new_screen.clear()
                await self._new_screen.wait()

    async def put(self, uri: str, value: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Write a value; returns the ``put`` reply (``ok``, ``err``, ``msg``)."""
        return await self._request(frames.put(next(self._ids), uri, value), timeout)

    async def command(
        self, uri: str, arg: Any = None, timeout: float = 10.0
    ) -> dict[str, Any]:
        """Run a Tango command (``tango://…/device/Command``, ``arg`` None: no
        argument); returns the ``cmd`` reply (``ok``, ``v``, ``err``, ``msg``)."""
        frame = frames.cmd(next(self._ids), uri, arg)
        return await self._request(frame, timeout)

    async def history(
        self,
        uris: Sequence[str],
        t0_ms: float,
        t1_ms: float,
        px: int = 1000,
        timeout: float = 60.0,
    ) -> dict[str, Trace]:
        """History of channels from ``t0_ms`` to ``t1_ms`` (ms since the epoch),
        reduced for a plot ``px`` pixels wide, by URI as asked. Raises
        :class:`GatewayError` when the request is refused as a whole."""
        frame = await self._request(
            frames.hist(next(self._ids), list(uris), t0_ms, t1_ms, px), timeout
        )
        return {
            uri: Trace(_typed(t), _typed(v), _typed(sev), err, src)
            for uri, t, v, sev, err, src in zip(
                frame["ch"], frame["t"], frame["v"], frame["sev"], frame["err"],
                frame["src"], strict=True,
            )
        }  # fmt: skip

    async def ping(self, timeout: float = 10.0) -> float:
        """Round-trip time of an application ping, in seconds."""
        started = time.perf_counter()
        await self._request(frames.ping(next(self._ids)), timeout)
        return time.perf_counter() - started
