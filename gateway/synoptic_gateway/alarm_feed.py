"""The alarms every open alarm page shows, from the bus, shared by the gateway's
sockets.

The gateway subscribes to ``cs.alarm.st.>`` once and reads the latest state of
every alarm from ``CS_ALARM`` (again after NATS comes back), keeping the alarms
that are listed (active or shelved) and each alarm's newest revision ``n`` (a
state not newer than it is dropped: the alarm service may publish one twice).
Changes are gathered for :data:`FLUSH_S` and sent as one ``alarms`` frame,
encoded once per mode (msgpack, JSON) for every socket that follows the list. People
go first: an operator's acknowledge or shelve (:data:`URGENT_EVENTS`) is sent as
soon as the states read with it are taken, in a frame of its own ahead of the
changes gathered meanwhile (a page reads it without reading a storm's first); a
channel's states still reach a page in order;
sockets that follow only the counts (every screen's header) get a frame when a
count changes. The alarm service's heartbeat says whether it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from synoptic_bus.alarmstore import AlarmStreams
from synoptic_bus.store import StoreError, fetch_last, stream_subjects
from synoptic_gateway.bus import Bus
from synoptic_schemas import DecodeError, Subjects, frames
from synoptic_schemas.alarms import OPS, decode_alarm, is_active, is_unacknowledged
from synoptic_schemas.codec import decode

log = logging.getLogger(__name__)

#: Seconds changes are gathered before they are sent (one frame per window): about
#: a display frame, so a page decodes a storm's states a few hundred per frame
#: rather than 500 at once every third one (Chromium's frame work p95 17.5/24.5 ->
#: 13.5/20.7 ms at 50/20 ms, alternated runs at load 5-10; the gateway's CPU the same).
FLUSH_S = 0.02
#: Events sent at once, in frames of their own: an operator's acknowledge, shelve
#: and their undoing.
URGENT_EVENTS = frozenset(OPS)
#: The alarm service is called gone after this many seconds without a heartbeat.
SERVICE_SILENT_S = 5.0


class Follower(Protocol):
    """A socket that follows the alarms."""

    json: bool  # the socket's JSON mode (else msgpack)

    def push_control(self, frame: bytes | str) -> None: ...


@dataclass
class Encoded:
    """One frame, encoded at most once per mode."""

    frame: dict[str, Any]
    _binary: bytes | None = None
    _text: str | None = None

    def for_mode(self, json_mode: bool) -> bytes | str:
        if json_mode:
            if self._text is None:
                self._text = frames.to_json(self.frame)
            return self._text
        if self._binary is None:
            self._binary = frames.pack(self.frame)
        return self._binary


@dataclass
class Counts:
    """What every screen's header shows."""

    unack: int = 0  # active, unacknowledged, not shelved
    active: int = 0
    shelved: int = 0
    service: bool = False  # the alarm service beats

    def as_dict(self) -> dict[str, Any]:
        return {"unack": self.unack, "act": self.active, "shelved": self.shelved,
                "svc": self.service}  # fmt: skip


@dataclass
class _Followers:
    full: set[Follower] = field(default_factory=set)
    counts: set[Follower] = field(default_factory=set)


class AlarmFeed:
    """The listed alarms as this gateway follows them (see module doc)."""

    def __init__(self, bus: Bus, prefix: str, *,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._bus = bus
        self._subjects = Subjects(prefix)
        self._stream = AlarmStreams(prefix).alarm_stream
        self._clock = clock
        self.listed: dict[str, dict[str, Any]] = {}  # ch -> state (active or shelved)
        self._newest: dict[str, int] = {}  # ch -> newest n seen
        self._changed: dict[str, dict[str, Any]] = {}
        self._urgent: dict[str, dict[str, Any]] = {}  # operators' changes to send
        self._urgent_flush: asyncio.Handle | None = None
        self._followers = _Followers()
        self._counts = Counts()
        self._sent_counts: dict[str, Any] | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._last_beat = float("-inf")
        self._sids: list[int] = []
        self._load: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self.loaded = asyncio.Event()

    # -- following the bus -------------------------------------------------------------

    def start(self) -> None:
        """Subscribe and read the stored states once NATS is connected."""
        self._load = asyncio.create_task(self._subscribe_and_load(), name="alarm-feed")
        self._watch = asyncio.create_task(self._watch_service(), name="alarm-service")

    async def bus_up(self) -> None:
        """NATS is back: read the stored states again (changes during the gap)."""
        if self._load is None or self._load.done():
            self._load = asyncio.create_task(self._read_stored(), name="alarm-reload")

    async def close(self) -> None:
        for task in (self._load, self._watch):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for handle in (self._flush, self._urgent_flush):
            if handle is not None:
                handle.cancel()

    async def _subscribe_and_load(self) -> None:
        await self._bus.wait_connected(None)
        self._sids = [
            await self._bus.subscribe(self._subjects.alarms(), self._on_state),
            await self._bus.subscribe(self._subjects.alarm_heartbeat(), self._on_beat),
        ]
        await self._bus.flush()
        await self._read_stored()

    async def _read_stored(self) -> None:
        delay = 0.5
        while True:
            try:
                nc = self._bus.nc
                names = await stream_subjects(nc, self._stream, self._subjects.alarms())
                snap = await fetch_last(nc, names, stream=self._stream, timeout=60)
            except asyncio.CancelledError:
                raise
            except StoreError as exc:
                if "not found" in str(exc):  # no alarm service has run yet
                    self.loaded.set()
                    return
                log.debug("alarm states not read: %s", exc)
            except Exception as exc:  # NATS away
                log.debug("alarm states not read: %s", exc)
            else:
                for data in snap.messages.values():
                    self._take(data)
                self.loaded.set()
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)

    def _on_state(self, _subject: bytes, data: bytes) -> None:
        self._take(data)

    def _take(self, data: bytes) -> None:
        try:
            state = decode_alarm(data)
        except DecodeError as exc:
            log.debug("alarm state not read: %s", exc)
            return
        ch, n = state["ch"], state["n"]
        if n <= self._newest.get(ch, 0):
            return  # a repeat, or older than what is held
        self._newest[ch] = n
        before = self.listed.get(ch)
        if is_active(state) or ("shelf" in state and not state.get("gone")):
            self.listed[ch] = dict(state)
        elif before is None:
            return  # quiet and not listed: nothing changes for a page
        else:
            del self.listed[ch]
        self._count(before, -1)
        self._count(self.listed.get(ch), +1)
        if state["ev"] in URGENT_EVENTS:
            # ahead of what was gathered: its older state of the channel is dropped
            self._changed.pop(ch, None)
            self._urgent[ch] = dict(state)
            if self._urgent_flush is None:  # once the states read with it are taken
                self._urgent_flush = asyncio.get_running_loop().call_soon(
                    self._flush_urgent
                )
            return
        self._changed[ch] = dict(state)
        self._schedule()

    def _count(self, state: dict[str, Any] | None, sign: int) -> None:
        if state is None:
            return
        if "shelf" in state:
            self._counts.shelved += sign
        if is_active(state):
            self._counts.active += sign
        if is_unacknowledged(state):
            self._counts.unack += sign

    def _on_beat(self, _subject: bytes, data: bytes) -> None:
        with contextlib.suppress(DecodeError):
            decode(data)
            self._last_beat = self._clock()
            if not self._counts.service:
                self._counts.service = True
                self._schedule()

    async def _watch_service(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            alive = self._clock() - self._last_beat < SERVICE_SILENT_S
            if alive != self._counts.service:
                self._counts.service = alive
                self._schedule()

    # -- sending -----------------------------------------------------------------------

    def _schedule(self, delay: float = FLUSH_S) -> None:
        """Flush within ``delay`` (sooner if a flush is due sooner already)."""
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        if self._flush is not None:
            if self._flush.when() <= due:
                return
            self._flush.cancel()
        self._flush = loop.call_at(due, self.flush)

    @property
    def counts(self) -> Counts:
        return self._counts

    def flush(self) -> None:
        """Send what changed: one frame to the list's followers, and the counts to
        the counts' followers when they changed."""
        self._flush = None
        changed, self._changed = self._changed, {}
        self._send(changed)

    def _flush_urgent(self) -> None:
        """Send the operators' changes now, in a frame of their own."""
        self._urgent_flush = None
        urgent, self._urgent = self._urgent, {}
        self._send(urgent)

    def _send(self, changed: dict[str, dict[str, Any]]) -> None:
        counts = self._counts.as_dict()
        counted = counts != self._sent_counts
        self._sent_counts = counts
        only = Encoded({"op": "alarms", **counts})
        if changed and self._followers.full:
            up = Encoded({"op": "alarms", "up": list(changed.values()), **counts})
            for follower in list(self._followers.full):
                follower.push_control(up.for_mode(follower.json))
        elif counted:  # the service's beat came or went: the pages show it too
            for follower in list(self._followers.full):
                follower.push_control(only.for_mode(follower.json))
        if counted:
            for follower in list(self._followers.counts):
                follower.push_control(only.for_mode(follower.json))

    def follow(self, follower: Follower, full: bool) -> dict[str, Any]:
        """``follower`` follows the list (``full``) or the counts from now on;
        the frame to send it first: the whole list (or the counts)."""
        self.drop(follower)
        (self._followers.full if full else self._followers.counts).add(follower)
        frame: dict[str, Any] = {"op": "alarms", **self._counts.as_dict()}
        if full:
            frame["all"] = list(self.listed.values())
        return frame

    def drop(self, follower: Follower) -> None:
        self._followers.full.discard(follower)
        self._followers.counts.discard(follower)

    def snapshot(self) -> dict[str, Any]:
        """The listed alarms and the counts (``GET /api/alarms``)."""
        return {"alarms": list(self.listed.values()), **self._counts.as_dict()}
