"""One WebSocket connection: requests in, a bounded mailbox and a sender task out.

States: ``OPEN`` (serving) → ``CLOSING`` (closing, nothing more is queued) →
``CLOSED``. The hub delivers batches with :meth:`Session.deliver`, which never
awaits: a frame is queued if the mailbox has room and its oldest frame waited less
than ``mailbox_age``; otherwise the socket falls back to the latest value per
channel for that group (conflation) until the mailbox has drained, then gets a
fresh ``snap`` and a ``stats`` frame saying what it missed. An update frame that
waited longer than ``mailbox_age``, or whose group conflates, is not sent but
conflated the same way, so a slow reader never reads data older than that plus its
kernel buffers' worth, and never sees a gap before the catch-up ``snap``. Data
already written but not yet received by the peer counts too
(:mod:`synoptic_gateway.inflight`): while more than ``mailbox_age`` of the peer's
drain rate is in flight (a slow link), updates are conflated and the catch-up waits.
A send blocked, or a peer over that budget, for longer than ``stall_timeout``
closes the socket with 4001.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np
from starlette.websockets import WebSocket

from synoptic_gateway.auth import AuthError, Principal
from synoptic_gateway.credentials import Credentials
from synoptic_gateway.inflight import InflightBudget
from synoptic_gateway.limits import TokenBucket
from synoptic_schemas import (
    SCHEMA_VERSION,
    ChannelError,
    PutError,
    decode_cmd_reply,
    decode_put_reply,
    encode,
    frames,
    parse_channel,
)
from synoptic_schemas.channels import Channel
from synoptic_schemas.frames import CloseCode, ErrorCode, FrameError, Op

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from synoptic_gateway.auth import Authenticator
    from synoptic_gateway.batch import Batch
    from synoptic_gateway.group import Group, Points
    from synoptic_gateway.history.process import HistoryProcess
    from synoptic_gateway.history.worker import HistoryWorker
    from synoptic_gateway.hub import Hub
    from synoptic_gateway.screens import ScreenWatchers

log = logging.getLogger(__name__)
audit_log = logging.getLogger("synoptic_gateway.audit")

#: Writes a connection may have in flight at once.
MAX_PUTS_IN_FLIGHT = 16
#: Frames that are never conflated (snapshots, replies) may exceed the mailbox
#: bound, up to this many times ``mailbox_bytes``; beyond it the socket is closed
#: as a slow consumer (4001).
HARD_LIMIT_FACTOR = 4
#: Seconds between two looks at a behind socket's in-flight data before catching up.
INFLIGHT_POLL = 0.1
#: Bytes a socket may always have in flight, however slowly its peer reads.
INFLIGHT_FLOOR = 16 * 1024


class State(enum.Enum):
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


class _Conflation:
    """What a slow socket skipped in one group."""

    __slots__ = ("channels", "updates")

    def __init__(self) -> None:
        self.updates = 0
        self.channels: set[int] = set()


def _put_value_ok(value: Any) -> bool:
    if isinstance(value, bool | int | float | str | np.ndarray):
        return True
    if isinstance(value, list) and len(value) <= 1_000_000:
        return all(isinstance(v, bool | int | float | str) for v in value)
    return False


def _ws_header_bytes(payload: int) -> int:
    """Bytes of the (unmasked, server → client) WebSocket header of a frame."""
    return 2 if payload < 126 else 4 if payload < 65536 else 10


class Session:
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
        auth: Authenticator | None = None,
        refused: Callable[..., Awaitable[None]] | None = None,
    ) -> None:
        self.ws = ws
        self.history = history
        self._watchers = watchers
        self._hist: set[asyncio.Task[None]] = set()
        self.hub = hub
        self._refused = refused
        self.credentials = Credentials(
            principal, auth, send=self.send_frame,
            close_unauthorized=self._close_unauthorized,
            anonymous_allowed=hub.settings.anonymous_allowed,
            auth_timeout=hub.settings.auth_timeout,
        )  # fmt: skip
        self.json = json_mode
        self.state = State.OPEN
        self.sending_since: float | None = None
        settings = hub.settings
        self._settings = settings
        self._stats = hub.stats
        self._groups: dict[int, Group] = {}
        # (frame, its update batch or None, loop time it was queued)
        self._queue: deque[tuple[bytes | str, Batch | None, float]] = deque()
        self._queued_bytes = 0
        self._conflating: dict[int, _Conflation] = {}
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()  # set whenever the sender finds no work
        self._bucket = TokenBucket(settings.rate, settings.burst)
        self._limited_notice = 0.0
        self._puts: set[asyncio.Task[None]] = set()
        self._sender: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._inflight = InflightBudget(
            ws.scope.get("synoptic.transport"),
            horizon=settings.mailbox_age,
            floor=INFLIGHT_FLOOR,
            ceiling=4 * max(settings.ws_send_buffer, 256 * 1024),
        )

    # ------------------------------------------------------------ outgoing

    def _encode(self, frame: dict[str, Any]) -> bytes | str:
        return frames.to_json(frame) if self.json else frames.pack(frame)

    @property
    def conflating(self) -> bool:
        """Whether this socket is behind (latest value per channel for some group)."""
        return bool(self._conflating)

    def push_control(self, frame: bytes | str) -> None:
        """Queue a frame that must not be dropped (hello, snap, replies, bus)."""
        if self.state is not State.OPEN:
            return
        self._queue.append((frame, None, self._loop.time()))
        self._queued_bytes += len(frame)
        self._wake.set()
        if self._queued_bytes > HARD_LIMIT_FACTOR * self._settings.mailbox_bytes:
            self.close_slow()  # e.g. asks for snapshots faster than it reads them

    def send_frame(self, frame: dict[str, Any]) -> None:
        self.push_control(self._encode(frame))

    def _send_error(self, error: FrameError) -> None:
        self._stats.errors_sent += 1
        self.send_frame(error.frame())

    def deliver(self, batch: Batch) -> None:
        """Queue a group's batch, or conflate it when this socket is behind."""
        if self.state is not State.OPEN:
            return
        conflation = self._conflating.get(batch.sid)
        is_update = batch.kind == Op.UPD
        queue = self._queue
        now = self._loop.time()
        if (
            conflation is None
            and queue
            and (
                len(queue) >= self._settings.mailbox_frames
                or self._queued_bytes >= self._settings.mailbox_bytes
                or now - queue[0][2] > self._settings.mailbox_age  # old data waits
            )
        ):
            conflation = self._conflating[batch.sid] = _Conflation()
        if conflation is not None:
            if is_update:
                conflation.updates += len(batch.indexes)
                conflation.channels.update(batch.indexes)
            return
        frame = batch.json_text() if self.json else batch.packed
        self._queue.append((frame, batch if is_update else None, now))
        self._queued_bytes += len(frame)
        self._wake.set()

    def _skip_stale(self, batch: Batch) -> None:
        """Conflate an update frame instead of sending it: it waited too long, or
        its group already conflates (no update of a group is sent between its
        first skipped one and its catch-up ``snap``: no visible gap)."""
        conflation = self._conflating.get(batch.sid)
        if conflation is None:
            conflation = self._conflating[batch.sid] = _Conflation()
        conflation.updates += len(batch.indexes)
        conflation.channels.update(batch.indexes)

    def _catch_up(self) -> None:
        """The mailbox drained: send each conflated group's latest state."""
        for sid in list(self._conflating):
            group = self._groups.get(sid)
            if group is None:
                self._conflating.pop(sid, None)
                continue
            group.flush()  # still conflating: pending updates are absorbed here
            conflation = self._conflating.pop(sid)
            missed = conflation.updates - len(conflation.channels)
            self._stats.missed += missed
            self._stats.conflated += len(conflation.channels)
            group.push_snap((self,), None)
            self.send_frame(frames.stats(sid, missed, len(conflation.channels)))

    async def _send_loop(self) -> None:
        send = self.ws.send
        stats = self._stats
        max_age = self._settings.mailbox_age
        inflight = self._inflight
        behind_since: float | None = None
        while True:
            if not self._queue:
                if self._conflating:
                    now = self._loop.time()
                    if inflight.over(now):  # what is in flight must reach it first
                        if behind_since is None:
                            behind_since = now
                        elif now - behind_since > self._settings.stall_timeout:
                            self.close_slow()  # its peer took too little for too long
                            return
                        await asyncio.sleep(INFLIGHT_POLL)
                        continue
                    behind_since = None
                    self._catch_up()
                    continue
                self._drained.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            frame, batch, queued_at = self._queue.popleft()
            self._queued_bytes -= len(frame)
            now = self._loop.time()
            if batch is not None and (
                now - queued_at > max_age
                or batch.sid in self._conflating
                or inflight.over(now)
            ):  # too old, its group is behind, or more than mailbox_age of the
                # peer's drain rate is already on its way (a slow link): the
                # catch-up snap replaces it
                self._skip_stale(batch)
                continue
            self.sending_since = now
            if isinstance(frame, bytes):
                await send({"type": "websocket.send", "bytes": frame})
            else:
                await send({"type": "websocket.send", "text": frame})
            self.sending_since = None
            inflight.wrote(len(frame) + _ws_header_bytes(len(frame)))
            stats.frames_out += 1
            stats.bytes_out += len(frame)
            if batch is not None:
                stats.updates_out += len(batch.indexes)

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
        self._sender = asyncio.create_task(self._send_loop(), name="ws-send")
        self._sender.add_done_callback(self._sender_done)
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

    def _sender_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or self.state is not State.OPEN:
            return
        log.debug("sender ended: %s", task.exception())
        self.state = State.CLOSING
        self._spawn_close(CloseCode.NORMAL)

    async def _cleanup(self) -> None:
        self.state = State.CLOSED
        if self._watchers is not None:
            self._watchers.drop(self)
        self.hub.sessions.discard(self)
        for group in list(self._groups.values()):
            self.hub.leave(self, group)
        self._groups.clear()
        self._queue.clear()
        if self._sender:
            self._sender.cancel()
        for task in list(self._puts) + list(self._hist):
            task.cancel()

    def close_slow(self) -> None:
        """Close a socket that stalled past the limit (code 4001)."""
        if self.state is not State.OPEN:
            return
        self.state = State.CLOSING
        self._stats.slow_closes += 1
        log.info("closing slow consumer (blocked > %s s)", self._settings.stall_timeout)
        if self._sender:
            self._sender.cancel()
        self._queue.clear()
        self._conflating.clear()
        self._spawn_close(CloseCode.SLOW_CONSUMER)

    def close_going_away(self) -> None:
        """Ask the client to reconnect elsewhere (gateway shutting down)."""
        if self.state is not State.OPEN:
            return
        self.state = State.CLOSING
        self._spawn_close(CloseCode.GOING_AWAY)

    def _spawn_close(self, code: int, *, after_queue: bool = False) -> None:
        task = asyncio.create_task(self._close(code, after_queue))
        self._puts.add(task)
        task.add_done_callback(self._puts.discard)

    async def _close(self, code: int, after_queue: bool = False) -> None:
        if after_queue and self._queue:  # let what is queued (the reason) leave first
            self._drained.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drained.wait(), 1.0)
        try:
            await asyncio.wait_for(
                self.ws.send({"type": "websocket.close", "code": code}), 1.0
            )
        except Exception:  # a stalled peer: drop the connection
            transport = self.ws.scope.get("synoptic.transport")
            if transport is not None:
                transport.abort()

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
                self._start_put(frame)
            elif op == Op.HIST:
                self._start_history(frame)
            elif op == Op.WATCH:
                self._watch(frame)
            elif op == Op.AUTH:
                await self._renew(frame)
            else:
                self.send_frame(frames.pong(frame.get("id")))
        except FrameError as exc:
            self._send_error(exc)
        except Exception:  # a bug must not end the connection: answer and log it
            log.exception("request failed")
            self._send_error(FrameError(ErrorCode.INTERNAL, "the request failed"))

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

    # ------------------------------------------------------------ writes

    def _start_put(self, frame: dict[str, Any]) -> None:
        """Start a ``put`` or a ``cmd`` (a Tango command: authorised, limited and
        audited as a write; ADR 0028)."""
        if len(self._puts) >= MAX_PUTS_IN_FLIGHT:
            raise FrameError(
                ErrorCode.RATE_LIMITED,
                f"more than {MAX_PUTS_IN_FLIGHT} writes in flight",
                req_id=frame["id"],
            )
        try:
            channel = parse_channel(frame["ch"])
        except ChannelError as exc:
            raise FrameError(
                ErrorCode.BAD_CHANNEL,
                str(exc),
                req_id=frame["id"],
                ch=frame["ch"][:200],
            ) from None
        command = frame["op"] == Op.CMD
        write = self._put(frame["id"], channel, frame.get("v"), command=command)
        task = asyncio.create_task(write)
        self._puts.add(task)
        task.add_done_callback(self._puts.discard)

    async def _put(
        self, req_id: Any, channel: Any, value: Any, *, command: bool = False
    ) -> None:
        self._stats.puts += 1
        uri = channel.uri
        who = self.principal.name
        out = None
        if command and channel.proto != "tango":
            ok, err, msg = False, PutError.BAD_REQUEST, "only Tango has commands"
        elif command and not self.principal.may_command(uri):
            ok, err, msg = (
                False,
                PutError.DENIED,
                f"{who} has no command grant for {uri}",
            )
        elif not command and not self.principal.may_write(uri):
            ok, err, msg = False, PutError.DENIED, f"{who} has no write grant for {uri}"
        elif not (command and value is None) and not _put_value_ok(value):
            ok, err, msg = False, PutError.BAD_REQUEST, "unsupported value type"
        else:
            ok, err, msg, out = await self._forward_put(channel, value, command)
        if command:
            self.send_frame(frames.cmd_reply(req_id, ok, err, msg, out))
        else:
            self.send_frame(frames.put_reply(req_id, ok, err, msg))
        await self._audit(channel, value, ok, err, msg, command=command)

    async def _forward_put(
        self, channel: Any, value: Any, command: bool
    ) -> tuple[bool, Any, Any, Any]:
        """Send a put (or command) request to the owning adapter; its answer:
        ok, error code, message and the command's output."""
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeoutError

        timeout = self._settings.put_timeout
        request: dict[str, Any] = {"ver": SCHEMA_VERSION, "who": self.principal.name,
                                   "timeout": timeout}  # fmt: skip
        if value is not None or not command:
            request["v"] = value
        subject = (self.hub.subjects.cmd if command else self.hub.subjects.put)(channel)
        try:
            reply = await self.hub.bus.request(subject, encode(request), timeout + 1.0)
            answer = (decode_cmd_reply if command else decode_put_reply)(reply.data)
        except NoRespondersError:
            return False, PutError.UNKNOWN, f"no adapter owns {channel.uri}", None
        except NatsTimeoutError:
            return False, PutError.TIMEOUT, "the adapter did not answer in time", None
        except Exception as exc:  # bus down, undecodable reply
            return False, PutError.FAILED, f"{type(exc).__name__}: {exc}", None
        out = answer.get("v")
        return bool(answer["ok"]), answer.get("err"), answer.get("msg"), out

    async def _audit(
        self, channel: Any, value: Any, ok: bool, err: Any, msg: Any,
        *, command: bool = False,
    ) -> None:  # fmt: skip
        record: dict[str, Any] = {
            "ver": SCHEMA_VERSION, "who": self.principal.name, "ch": channel.uri,
            "v": value, "ok": ok, "t": time.time_ns(), "by": self.hub.gateway_id,
        }  # fmt: skip
        if command:
            record["op"] = "cmd"
        if not ok:
            record["err"] = err or PutError.FAILED
            if msg:
                record["msg"] = msg
        audit_log.info(
            "%s by %s to %s = %r: %s", "command" if command else "write",
            record["who"], record["ch"], value if not isinstance(value, np.ndarray)
            else f"array{value.shape}", "ok" if ok else f"{err} ({msg})",
        )  # fmt: skip
        with contextlib.suppress(Exception):
            await self.hub.bus.publish(
                self.hub.subjects.audit(channel.proto), encode(record)
            )
