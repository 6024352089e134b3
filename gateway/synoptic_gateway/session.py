"""One WebSocket connection: its life, and the requests it reads.

States: ``OPEN`` (serving) → ``CLOSING`` (closing, nothing more is queued) →
``CLOSED``. What leaves the socket (the bounded mailbox, conflation of a slow
reader, the 4001 close) is :mod:`synoptic_gateway.mailbox`; writes and commands
are :mod:`synoptic_gateway.writes`. A session reads frames, subject to a rate
limit and a size limit, and answers each: ``sub``/``unsub`` through the hub,
``hist`` through the history worker, ``watch`` through the screen watchers,
``put``/``cmd`` through its writes, ``auth`` (a renewed token) through its
credentials (:mod:`synoptic_gateway.credentials`), ``ping`` with ``pong``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket

from synoptic_gateway.auth import AuthError
from synoptic_gateway.credentials import Credentials
from synoptic_gateway.limits import TokenBucket
from synoptic_gateway.mailbox import Mailbox, State
from synoptic_gateway.playback import Playback, PlaybackShare
from synoptic_gateway.principal import Principal
from synoptic_gateway.writes import Writes
from synoptic_schemas import ChannelError, frames, parse_channel
from synoptic_schemas.channels import Channel
from synoptic_schemas.frames import CloseCode, ErrorCode, FrameError, Op

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from synoptic_gateway.alarm_feed import AlarmFeed
    from synoptic_gateway.auth import Authenticator
    from synoptic_gateway.group import Points
    from synoptic_gateway.history.process import HistoryProcess
    from synoptic_gateway.history.worker import HistoryWorker
    from synoptic_gateway.hub import Hub
    from synoptic_gateway.screens import ScreenWatchers

log = logging.getLogger(__name__)

__all__ = ["Session", "State"]


class Session(Mailbox):
    """The server side of one ``/ws`` connection."""

    def __init__(
        self,
        ws: WebSocket,
        hub: Hub,
        principal: Principal,
        *,
        json_mode: bool,
        history: HistoryWorker | HistoryProcess | None = None,
        watchers: ScreenWatchers | None = None,
        alarms: AlarmFeed | None = None,
        auth: Authenticator | None = None,
        refused: Callable[..., Awaitable[None]] | None = None,
        playbacks: PlaybackShare | None = None,
    ) -> None:
        super().__init__(ws, hub, json_mode=json_mode)
        self.history = history
        #: the gateway's playbacks (their frame rate shared)
        self._playbacks = playbacks or PlaybackShare(
            hub.settings.play_fps, hub.settings.play_fps_total
        )
        self._watchers = watchers
        self._alarms = alarms
        self._hist: set[asyncio.Task[None]] = set()
        self._playback: Playback | None = None
        self._refused = refused
        self.credentials = Credentials(
            principal, auth, send=self.send_frame,
            close_unauthorized=self._close_unauthorized,
            anonymous_allowed=hub.settings.anonymous_allowed,
            auth_timeout=hub.settings.auth_timeout,
        )  # fmt: skip
        self._bucket = TokenBucket(self._settings.rate, self._settings.burst)
        self._limited_notice = 0.0
        self._writes = Writes(hub, lambda: self.principal, self.send_frame)

    @property
    def principal(self) -> Principal:
        """Who the socket is now (renewed, reduced at expiry, re-granted)."""
        return self.credentials.principal

    # ------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Serve the accepted socket until it closes."""
        self.hub.sessions.add(self)
        self.send_frame(
            frames.hello(
                self.hub.gateway_id,
                self.principal.name,
                self.principal.can_write,
                self._settings.limits(),
                self.principal.expires,
            )
        )
        if not self.hub.bus.up:
            self.send_frame(frames.bus(False))
        self._start_sender()
        self.credentials.start()
        try:
            while self.state is State.OPEN:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                if data is None:
                    data = message.get("text")
                if data is not None:
                    await self._handle(data)
        except (RuntimeError, OSError) as exc:  # receive after the close
            log.debug("socket ended: %s", exc)
        finally:
            self.credentials.stop()
            await self._cleanup()

    def _close_unauthorized(self, reason: str) -> None:
        log.info("closing the socket of %r: %s", self.principal.name, reason)
        if self.state is not State.OPEN:
            return
        self.send_frame(frames.err(None, ErrorCode.UNAUTHORIZED, reason))
        self.state = State.CLOSING
        self._spawn_close(CloseCode.UNAUTHORIZED, after_queue=True)

    def regrant(self) -> None:
        """The role file changed: take the grants it gives now (told by ``auth``)."""
        if self.state is State.OPEN and self.credentials.regrant():
            self.send_frame(self.credentials.state(None))

    async def _renew(self, frame: dict[str, Any]) -> None:
        """An ``auth`` frame: the socket's (renewed) token, checked before the
        frames after it are read."""
        token = frame["token"]
        try:
            await self.credentials.renew(token)
        except AuthError as exc:
            if self._refused is not None:
                peer = self.ws.client.host if self.ws.client else ""
                await self._refused("renew", str(exc), token, peer, self.principal.name)
            raise FrameError(
                ErrorCode.UNAUTHORIZED, str(exc), req_id=frame["id"]
            ) from None
        self.send_frame(self.credentials.state(frame["id"]))

    async def _cleanup(self) -> None:
        self.state = State.CLOSED
        if self._watchers is not None:
            self._watchers.drop(self)
        if self._alarms is not None:
            self._alarms.drop(self)
        self.hub.sessions.discard(self)
        for group in list(self._groups.values()):
            self.hub.leave(self, group)
        self._groups.clear()
        self._stop_sending()
        self._writes.cancel()
        for task in list(self._hist):
            task.cancel()
        if self._playback is not None:
            self._playback.halt()

    # ------------------------------------------------------------ incoming

    async def _handle(self, data: bytes | str) -> None:
        if not self._bucket.take():
            now = self._loop.time()
            if now - self._limited_notice >= 1.0:  # one notice per second
                self._limited_notice = now
                self._send_error(
                    FrameError(
                        ErrorCode.RATE_LIMITED,
                        f"more than {self._settings.rate:g} frames/s: frames dropped",
                    )
                )
            return
        size = len(data) if isinstance(data, bytes) else len(data.encode())
        if size > self._settings.max_frame_bytes:
            self._send_error(
                FrameError(
                    ErrorCode.FRAME_TOO_BIG,
                    f"frame of {size} bytes exceeds {self._settings.max_frame_bytes}",
                )
            )
            return
        try:
            raw = (
                frames.unpack(data)
                if isinstance(data, bytes)
                else frames.from_json(data)
            )
            frame = frames.validate_client_frame(raw)
            op = frame["op"]
            if op == Op.SUB:
                await self._subscribe(frame)
            elif op == Op.UNSUB:
                self._unsubscribe(frame)
            elif op in (Op.PUT, Op.CMD):
                self._writes.start(frame)
            elif op in (Op.HIST, Op.AT, Op.STEP):
                self._start_history(frame)
            elif op == Op.PLAY:
                self._start_playback(frame)
            elif op == Op.HALT:
                self._halt(frame)
            elif op == Op.WATCH:
                self._watch(frame)
            elif op == Op.ALARMS:
                self._follow_alarms(frame)
            elif op == Op.AUTH:
                await self._renew(frame)
            else:
                self.send_frame(frames.pong(frame.get("id")))
        except FrameError as exc:
            self._send_error(exc)
        except Exception:  # a bug must not end the connection: answer and log it
            log.exception("request failed")
            self._send_error(FrameError(ErrorCode.INTERNAL, "the request failed"))

    # ------------------------------------------------------------ subscriptions

    async def _subscribe(self, frame: dict[str, Any]) -> None:
        from synoptic_gateway.hub import UnavailableError

        req_id = frame["id"]
        channels: dict[str, Channel] = {}  # normalised URI -> parsed (parsed once)
        for raw_uri in frame["ch"]:
            try:
                channel = parse_channel(raw_uri)
            except ChannelError as exc:
                raise FrameError(
                    ErrorCode.BAD_CHANNEL, str(exc), req_id=req_id, ch=raw_uri[:200]
                ) from None
            uri = channel.uri
            if not self.principal.may_read(uri):
                raise FrameError(
                    ErrorCode.FORBIDDEN,
                    f"{self.principal.name} may not read {uri}",
                    req_id=req_id,
                    ch=uri,
                )
            channels[uri] = channel
        key = tuple(sorted(channels))
        points = self._points(frame, key)
        shift = frame.get("shift", False)
        for group in self._groups.values():
            if group.key == key and group.points_key == points and group.shift == shift:
                group.flush()  # the same again: a fresh snapshot of the same sid
                group.push_snap((self,), req_id)
                return
        if len(self._groups) >= self._settings.max_subs:
            raise FrameError(
                ErrorCode.TOO_MANY_SUBS,
                f"this connection holds {len(self._groups)} subscriptions, the "
                f"limit (unsubscribe one first)",
                req_id=req_id,
            )
        held: set[str] = set()
        for group in self._groups.values():
            held.update(group.key)
        total = len(held.union(channels))
        if total > self._settings.max_channels:
            raise FrameError(
                ErrorCode.TOO_MANY_CHANNELS,
                f"{total} channels on this connection would exceed the limit of "
                f"{self._settings.max_channels}",
                req_id=req_id,
            )
        try:
            group = await self.hub.join(self, key, req_id, channels, points, shift)
        except UnavailableError as exc:
            raise FrameError(ErrorCode.UNAVAILABLE, str(exc), req_id=req_id) from None
        if self.state is not State.OPEN:
            self.hub.leave(self, group)
            return
        self._groups[group.sid] = group

    @staticmethod
    def _points(frame: dict[str, Any], key: tuple[str, ...]) -> Points:
        """``sub.pts`` (validated) as (index in ``key``, points rounded up)."""
        pts = frame.get("pts")
        if not pts:
            return ()
        index = {uri: i for i, uri in enumerate(key)}
        chosen: dict[int, int] = {}  # two spellings of one channel: the fewer points
        for uri, n in pts.items():
            i = index[parse_channel(uri).uri]
            chosen[i] = min(chosen.get(i, n), n)
        return tuple(sorted((i, frames.round_points(n)) for i, n in chosen.items()))

    def _unsubscribe(self, frame: dict[str, Any]) -> None:
        group = self._groups.pop(frame["sid"], None)
        if group is None:
            raise FrameError(
                ErrorCode.UNKNOWN_SID,
                f"no subscription {frame['sid']} on this connection",
                req_id=frame["id"],
            )
        self._conflating.pop(group.sid, None)
        self.hub.leave(self, group)
        self.send_frame(frames.unsub_ack(frame["id"], group.sid))

    # ------------------------------------------------------------ screens

    def _follow_alarms(self, frame: dict[str, Any]) -> None:
        """This socket follows the alarms (the list, the counts, or none)."""
        if self._alarms is None:
            raise FrameError(ErrorCode.BAD_FRAME, "this gateway has no alarms",
                             req_id=frame["id"])  # fmt: skip
        if frame.get("off"):
            self._alarms.drop(self)
            self.send_frame({"op": Op.ALARMS, "id": frame["id"],
                             **self._alarms.counts.as_dict()})  # fmt: skip
            return
        first = self._alarms.follow(self, bool(frame.get("full")))
        self.send_frame({**first, "id": frame["id"]})

    def _watch(self, frame: dict[str, Any]) -> None:
        """This socket's watched screens become ``frame["screens"]``."""
        if self._watchers is None:
            raise FrameError(
                ErrorCode.UNAVAILABLE, "no screens here", req_id=frame["id"]
            )
        self._watchers.set(self, frozenset(frame["screens"]))
        self.send_frame(frames.watch_ack(frame["id"]))

    # ------------------------------------------------------------ history

    def _start_history(self, frame: dict[str, Any]) -> None:
        if self.history is None:
            raise FrameError(
                ErrorCode.UNAVAILABLE, "no history here", req_id=frame["id"]
            )
        if len(self._hist) >= self._settings.hist_per_socket:
            raise FrameError(
                ErrorCode.RATE_LIMITED,
                f"more than {self._settings.hist_per_socket} history requests in "
                "flight on this connection",
                req_id=frame["id"],
            )
        task = asyncio.create_task(self._history(self.history, frame))
        self._hist.add(task)
        task.add_done_callback(self._hist.discard)

    async def _history(
        self, history: HistoryWorker | HistoryProcess, frame: dict[str, Any]
    ) -> None:
        try:
            reply = await history.answer(frame, self.principal, json_mode=self.json)
        except FrameError as exc:
            self._send_error(exc)
            return
        except Exception:  # a bug must not end the connection: answer and log it
            log.exception("history request failed")
            self._send_error(
                FrameError(ErrorCode.INTERNAL, "the request failed", req_id=frame["id"])
            )
            return
        self.push_control(reply)  # encoded once, on the history thread

    # ------------------------------------------------------------ playback

    def _start_playback(self, frame: dict[str, Any]) -> None:
        """One playback per socket: a new ``play`` halts the one before."""
        if self.history is None:
            raise FrameError(
                ErrorCode.UNAVAILABLE, "no history here", req_id=frame["id"]
            )
        if len(frame["ch"]) > self._settings.at_max_channels:
            raise FrameError(
                ErrorCode.TOO_MANY_CHANNELS,
                f"{len(frame['ch'])} channels in one playback exceed the limit of "
                f"{self._settings.at_max_channels}",
                req_id=frame["id"],
            )
        if self._playback is not None:
            self._playback.halt()
        playback = Playback(
            frame, self.history, lambda: self.principal, json_mode=self.json,
            share=self._playbacks, push=self.push_control, send=self.send_frame,
            backlog=lambda: self._queued_bytes >= self._settings.mailbox_bytes,
            drained=lambda: self._drained,
        )  # fmt: skip
        self._playback = playback
        playback.start(self._playback_done)

    def _playback_done(self, playback: Playback) -> None:
        if self._playback is playback:
            self._playback = None

    def _halt(self, frame: dict[str, Any]) -> None:
        playback = self._playback
        if playback is not None and playback.id == frame["play"]:
            playback.halt()
        self.send_frame(frames.halt_ack(frame["id"], frame["play"]))
