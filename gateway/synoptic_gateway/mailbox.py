"""The outgoing half of one socket: a bounded mailbox, the task that sends it, and
closing.

The hub delivers batches with :meth:`Mailbox.deliver`, which never awaits: a frame
is queued if the mailbox has room and its oldest frame waited less than
``mailbox_age``; otherwise the socket falls back to the latest value per channel
for that group (conflation) until the mailbox has drained, then gets a fresh
``snap`` and a ``stats`` frame saying what it missed. An update frame that waited
longer than ``mailbox_age``, or whose group conflates, is not sent but conflated
the same way, so a slow reader never reads data older than that plus its kernel
buffers' worth, and never sees a gap before the catch-up ``snap``. Data already
written but not yet received by the peer counts too
(:mod:`synoptic_gateway.inflight`): while more than ``mailbox_age`` of the peer's
drain rate is in flight (a slow link), updates are conflated and the catch-up
waits. A send blocked, or a peer over that budget, for longer than
``stall_timeout`` closes the socket with 4001.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket

from synoptic_gateway.inflight import InflightBudget
from synoptic_schemas import frames
from synoptic_schemas.frames import CloseCode, FrameError, Op

if TYPE_CHECKING:
    from synoptic_gateway.batch import Batch
    from synoptic_gateway.group import Group
    from synoptic_gateway.hub import Hub

log = logging.getLogger(__name__)

#: Frames that are never conflated (snapshots, replies) may exceed the mailbox
#: bound, up to this many times ``mailbox_bytes`` (not counting one queued frame
#: that alone is above the bound); beyond it the socket is closed as a slow
#: consumer (4001).
HARD_LIMIT_FACTOR = 4
#: Seconds between two looks at a behind socket's in-flight data before catching up.
INFLIGHT_POLL = 0.1
#: Bytes a socket may always have in flight, however slowly its peer reads.
INFLIGHT_FLOOR = 16 * 1024


class State(enum.Enum):
    """A socket's life: ``OPEN`` (serving) → ``CLOSING`` (closing, nothing more
    is queued) → ``CLOSED``."""

    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


class _Conflation:
    """What a slow socket skipped in one group."""

    __slots__ = ("channels", "updates")

    def __init__(self) -> None:
        self.updates = 0
        self.channels: set[int] = set()


def _ws_header_bytes(payload: int) -> int:
    """Bytes of the (unmasked, server → client) WebSocket header of a frame."""
    return 2 if payload < 126 else 4 if payload < 65536 else 10


class Mailbox:
    """Frames on their way to one socket (the base of
    :class:`~synoptic_gateway.session.Session`, which adds the requests)."""

    def __init__(self, ws: WebSocket, hub: Hub, *, json_mode: bool) -> None:
        self.ws = ws
        self.hub = hub
        self.json = json_mode
        self.state = State.OPEN
        self.sending_since: float | None = None
        settings = hub.settings
        self._settings = settings
        self._stats = hub.stats
        #: this socket's groups by sid (kept by the session; read by the catch-up)
        self._groups: dict[int, Group] = {}
        # (frame, its update batch or None, loop time it was queued)
        self._queue: deque[tuple[bytes | str, Batch | None, float]] = deque()
        self._queued_bytes = 0
        self._big_bytes = 0  # the one queued frame above the bound (not counted)
        self._conflating: dict[int, _Conflation] = {}
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()  # set whenever the sender finds no work
        self._sender: asyncio.Task[None] | None = None
        self._closers: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self._inflight = InflightBudget(
            ws.scope.get("synoptic.transport"),
            horizon=settings.mailbox_age,
            floor=INFLIGHT_FLOOR,
            ceiling=4 * max(settings.ws_send_buffer, 256 * 1024),
        )

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
        size = len(frame)
        if size > self._settings.mailbox_bytes:
            # a frame above the bound by itself (an alarm page's whole list of tens
            # of thousands) is not counted, else it would close every socket that
            # asks for it; one at a time: a second while one waits is not read
            if self._big_bytes:
                self.close_slow()
                return
            self._big_bytes = size
        self._queue.append((frame, None, self._loop.time()))
        self._queued_bytes += size
        self._wake.set()
        limit = HARD_LIMIT_FACTOR * self._settings.mailbox_bytes
        if self._queued_bytes - self._big_bytes > limit:
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

    def _start_sender(self) -> None:
        self._sender = asyncio.create_task(self._send_loop(), name="ws-send")
        self._sender.add_done_callback(self._sender_done)

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
            if len(frame) > self._settings.mailbox_bytes:
                self._big_bytes = 0
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

    def _sender_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or self.state is not State.OPEN:
            return
        log.debug("sender ended: %s", task.exception())
        self.state = State.CLOSING
        self._spawn_close(CloseCode.NORMAL)

    # ------------------------------------------------------------ closing

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
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)

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

    def _stop_sending(self) -> None:
        """The socket is gone: nothing more leaves (the session's cleanup)."""
        self.state = State.CLOSED
        self._queue.clear()
        if self._sender:
            self._sender.cancel()
        for task in list(self._closers):
            task.cancel()
