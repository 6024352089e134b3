"""The gateway client's requests (subscribe, put, command, history, watch) and
the dispatch of the frames that answer them (:class:`GatewayClient`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synoptic_gateway.client.errors import GatewayError
from synoptic_gateway.client.link import Link
from synoptic_gateway.client.subscription import Subscription, UpdateCallback
from synoptic_gateway.client.trace import Trace, typed
from synoptic_gateway.tokens import RENEW_AHEAD, TokenSource
from synoptic_schemas import frames
from synoptic_schemas.frames import Op


class GatewayClient(Link):
    """A connection to a gateway tier that survives the loss of any one gateway:
    subscriptions, writes, commands, history, screen watching."""

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
        super().__init__(
            urls, token=token, json_mode=json_mode, backoff_base=backoff_base,
            backoff_max=backoff_max, open_timeout=open_timeout, max_queue=max_queue,
            shuffle=shuffle, ping_interval=ping_interval, ping_timeout=ping_timeout,
        )  # fmt: skip
        self.on_frame = on_frame
        self.auth: dict[str, Any] = {}  # the last ``auth`` frame (renewals)
        self._renewer: asyncio.Task[None] | None = None
        self.hello: dict[str, Any] = {}
        self.bus_up = True
        self._bus_changed = asyncio.Event()
        self.errors: list[dict[str, Any]] = []  # err frames not tied to a request
        self._new_error = asyncio.Event()
        self._subs: list[Subscription] = []
        #: ``screen`` frames received (a watched screen's new revisions), in order
        self.screens: list[dict[str, Any]] = []
        self._new_screen = asyncio.Event()
        self._watched: list[str] | None = None
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._pending_subs: dict[Any, Subscription] = {}
        self._ids = itertools.count(1)

    async def __aenter__(self) -> GatewayClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def gateway_id(self) -> str | None:
        return self.hello.get("gw")

    async def close(self) -> None:
        """Close for good (no reconnect)."""
        await super().close()
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(BaseException):
                await self._renewer

    # ------------------------------------------------------------ link hooks

    def _opened(self) -> None:
        if self.tokens is not None and self._renewer is None:
            self._renewer = asyncio.create_task(self._keep_token(), name="gw-renew")

    def _lost(self, code: int | None) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(f"connection closed ({code})"))
        self._pending.clear()
        self._pending_subs.clear()

    async def _resume(self) -> None:
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
            self.pace.limit(frame.get("limits") or {})
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
        await self.pace.wait()
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
            uri: Trace(typed(t), typed(v), typed(sev), err, src)
            for uri, t, v, sev, err, src in zip(
                frame["ch"], frame["t"], frame["v"], frame["sev"], frame["err"],
                frame["src"], strict=True,
            )
        }  # fmt: skip

    async def at(
        self,
        uris: Sequence[str],
        t_ms: float,
        timeout: float = 60.0,
        *,
        points: Mapping[str, int] | None = None,
    ) -> dict[str, Any]:
        """The ``at`` answer: the channels' values and metadata as they were at
        ``t_ms`` (ms since the epoch); ``points`` as :meth:`subscribe`'s (arrays
        of those channels reduced). Raises :class:`GatewayError` when the
        request is refused as a whole."""
        return await self._request(
            frames.at(next(self._ids), list(uris), t_ms, points), timeout
        )

    async def play(
        self,
        uris: Sequence[str],
        t_ms: float,
        speed: float,
        timeout: float = 60.0,
        *,
        points: Mapping[str, int] | None = None,
    ) -> dict[str, Any]:
        """Play the channels back from ``t_ms`` at ``speed`` times real time:
        returns the ``at`` answer (its ``id`` is the playback's); the ``pb``
        frames that follow reach ``on_frame``; ``points`` as :meth:`subscribe`'s.
        Raises :class:`GatewayError`."""
        frame = frames.play(next(self._ids), list(uris), t_ms, speed, points)
        return await self._request(frame, timeout)

    async def step(
        self, uri: str, t_ms: float, direction: int, timeout: float = 30.0
    ) -> float | None:
        """When ``uri`` changed last before ``t_ms`` (``direction`` -1) or first
        after it (1), in ms; None: no such change kept."""
        frame = frames.step(next(self._ids), uri, t_ms, direction)
        return (await self._request(frame, timeout))["t"]

    async def halt(self, play_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Stop the playback ``play_id``; returns the acknowledgement."""
        return await self._request(frames.halt(next(self._ids), play_id), timeout)

    async def ping(self, timeout: float = 10.0) -> float:
        """Round-trip time of an application ping, in seconds."""
        started = time.perf_counter()
        await self._request(frames.ping(next(self._ids)), timeout)
        return time.perf_counter() - started
