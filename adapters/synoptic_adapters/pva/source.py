"""The EPICS PV Access source (p4p).

One p4p client context per adapter and one monitor of the whole structure per
channel. p4p calls a monitor back in its own worker threads when the monitor's
queue has news; the callback pops everything queued into the channel's
:class:`~synoptic_adapters.dispatch.Mailbox` (the newest event wins, replaced ones
are counted), and the shared dispatcher delivers to the event loop in batches.

Guarantees, per channel and never affecting the others:

- The first value after every (re)connect fixes the channel's layout and
  metadata: a PV whose structure changed while it was away is published with
  its new type and new metadata (and logged), never decoded with the old one.
- A value that cannot be published whole (an array over ``max_array_bytes`` or
  over the bus's payload limit, an image compressed with a codec the adapter
  does not decode or with corrupt data, dimensions that do not fit) is
  published as ``v`` None with sev 3 and the reason as status, and its metadata
  as far as the structure declares it (type, shape, colour mode, columns).
- A server that goes away is published as disconnected; p4p reconnects by itself.
  A PV that no server answers within ``connect_timeout`` is published as never
  connected and keeps being searched for.
- A channel away is searched for at least every 4 s, however long it has been
  away: p4p's own searches (pvxs) back off to one every 30 s and count on the
  server's beacons to hurry up (one poke per 30 s, beacons often not routed), so
  a restarted server's PVs could take tens of seconds to come back. Every
  ``search_reset`` seconds (default 10) the subscription of each channel still
  away is made anew, which restarts pvxs's search at 1, 2, 3, 4 s intervals.
- ``put`` never raises: it replies ok or a ``PutError`` code with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
from collections.abc import Iterable
from typing import Any

from p4p import _p4p
from p4p.client.raw import Cancelled, Context, Disconnected, Finished, RemoteError

from synoptic_adapters.dispatch import Dispatcher, Mailbox
from synoptic_adapters.pva.convert import (
    META_FIELDS,
    ConvertError,
    Layout,
    alarm_of,
    convert,
    declared_meta,
    layout_of,
    meta_of,
    stamp_ns,
)
from synoptic_adapters.pva.put import PutValueError, put_fields
from synoptic_adapters.runner import put_reply
from synoptic_adapters.source import ChannelSink
from synoptic_schemas import Channel, PutError, Severity
from synoptic_schemas.messages import PutReplyMsg

log = logging.getLogger(__name__)

#: Default largest array (bytes of one update) published; larger ones get a status.
DEFAULT_MAX_ARRAY_BYTES = 8 * 1024 * 1024
#: Seconds between two deliveries to the loop: p4p calls back once per update (in
#: its own thread), and a wake-up of the loop per update starves it under load.
DRAIN_INTERVAL = 0.002
#: Seconds between two fresh searches of a channel that is away (``search_reset``).
DEFAULT_SEARCH_RESET = 10.0
#: Room kept for the rest of a value message under the bus's payload limit.
_ENVELOPE_BYTES = 4096
_pop = _p4p.ClientMonitor.pop
#: Server error texts that mean "not allowed" rather than "failed".
_ACCESS = re.compile(r"denied|not permitted|permission|read.?only|access", re.I)

_ENV_KEYS = {
    "addr_list": "EPICS_PVA_ADDR_LIST",
    "auto_addr_list": "EPICS_PVA_AUTO_ADDR_LIST",
    "server_port": "EPICS_PVA_SERVER_PORT",
    "broadcast_port": "EPICS_PVA_BROADCAST_PORT",
    "name_servers": "EPICS_PVA_NAME_SERVERS",
}


def pva_conf(settings: dict[str, Any]) -> dict[str, str]:
    """p4p client configuration (EPICS_PVA_* keys) from a config ``pva:`` section;
    keys not given there come from the environment."""
    conf = {}
    for key, env in _ENV_KEYS.items():
        if key in settings:
            value = settings[key]
            conf[env] = (
                ("YES" if value else "NO") if isinstance(value, bool) else str(value)
            )
    return conf


def _reply(ok: bool, err: str | None = None, msg: str | None = None) -> PutReplyMsg:
    return put_reply(ok, err, msg)  # type: ignore[return-value]


class PvaMonitor(Mailbox):
    """One channel's subscription and what its current connection looks like."""

    def __init__(self, channel: Channel, dispatcher: Dispatcher, source: PvaSource):
        super().__init__(dispatcher)
        self.channel = channel
        self.source = source
        self.layout: Layout | None = None  # None until a value of this connection
        self.signature: Any = None  # the last connection's structure
        self.meta: dict[str, Any] | None = None
        self.meta_dirty = True
        self.meta_fields: tuple[str, ...] = ()
        self.plain = False  # a scalar with no metadata fields: the fast path
        self.reconnected = False  # a disconnect was merged away before a value
        self.ever_connected = False
        self.failures = 0
        self._lock = threading.Lock()
        self.sub: Any = None
        #: since when (monotonic) the channel has had no connection; None: up
        self.down_since: float | None = time.monotonic()
        #: when its subscription (and so its search) was last made
        self.searched_at = time.monotonic()
        # p4p's own monitor (``_p4p.ClientMonitor``, pinned p4p 4.3) without the
        # wrappers of ``p4p.client.raw``: they cost a Python frame, a logging call
        # and an unwrap step per update, ~1/3 of the adapter's CPU per update.
        self.sub = _p4p.ClientMonitor(
            source.context._ctxt, channel.name, handler=self._on_event
        )
        self._on_event()  # anything queued before ``sub`` was set

    def _on_event(self) -> None:  # p4p worker thread
        sub = self.sub
        if sub is None:
            return
        with self._lock:
            pop, put = _pop, self.put
            while True:
                try:
                    item = pop(sub)
                except Exception:  # closed meanwhile
                    return
                if item is None:
                    return
                put(item)

    def put(self, value: Any) -> None:
        box = self.box
        if box:
            if not self.plain:  # a replaced value may have changed metadata
                self.meta_dirty = True
            try:  # a disconnect replaced by a value: a new connection, maybe a new type
                if isinstance(box[0], Exception) and not isinstance(value, Exception):
                    self.reconnected = True
            except IndexError:  # delivered meanwhile
                pass
        super().put(value)

    def deliver(self, value: Any) -> None:
        if self.reconnected and not isinstance(value, Exception):
            self.reconnected = False
            self.layout = None  # read the layout again from this value
            self.plain = False
        try:
            if isinstance(value, Exception):
                self.source.on_error(self, value)
            else:
                self.source.on_value(self, value)
        except Exception as exc:  # one channel's surprise never stops the others
            self.failures += 1
            log.exception("%s: update not handled", self.channel.uri)
            self.source.sink_value_error(self, f"update not handled: {exc}")

    def resubscribe(self) -> None:
        """Make the subscription anew, its channel dropped from p4p's cache: a
        fresh search at once, then at 1, 2, 3 … s (see the module's docstring)."""
        old, self.sub = self.sub, None
        if old is not None:
            try:
                old.close()
            except Exception:
                log.debug("closing %s", self.channel.uri, exc_info=True)
        context = self.source.context
        try:
            context.disconnect(self.channel.name)  # unused now: out of the cache
        except Exception:
            log.debug("uncaching %s", self.channel.uri, exc_info=True)
        self.searched_at = time.monotonic()
        self.sub = _p4p.ClientMonitor(
            context._ctxt, self.channel.name, handler=self._on_event
        )
        self._on_event()

    def close(self) -> None:
        sub, self.sub = self.sub, None
        if sub is not None:
            try:
                sub.close()
            except Exception:
                log.debug("closing %s", self.channel.uri, exc_info=True)
        self.box.clear()


class PvaSource:
    """A :class:`~synoptic_adapters.source.Source` for ``pva://`` channels."""

    proto = "pva"

    def __init__(
        self, *, connect_timeout: float = 5.0, settings: dict[str, Any] | None = None
    ) -> None:
        self.connect_timeout = connect_timeout
        self.settings = settings or {}
        self.max_array_bytes = int(
            self.settings.get("max_array_bytes", DEFAULT_MAX_ARRAY_BYTES)
        )
        self.sink: ChannelSink | None = None
        self.monitors: dict[Channel, PvaMonitor] = {}
        self.dispatcher: Dispatcher | None = None
        self.context: Any = None
        self.structure_changes = 0
        self._closed_merged = 0
        self._timers: dict[Channel, asyncio.TimerHandle] = {}
        #: what to add to "exceeds the limit" when the bus sets the limit
        self.limit_hint = ""
        self._told_limit: set[Channel] = set()
        #: seconds between two fresh searches of a channel away (0: p4p's own)
        self.search_reset = float(
            self.settings.get("search_reset", DEFAULT_SEARCH_RESET)
        )
        self._researcher: asyncio.Task[None] | None = None
        #: fresh searches made (channels away, :meth:`PvaMonitor.resubscribe`)
        self.searches_reset = 0

    @property
    def merged(self) -> int:
        """Updates replaced by a newer one before the loop delivered them."""
        return sum(m.merged for m in self.monitors.values()) + self._closed_merged

    async def start(self, sink: ChannelSink) -> None:
        self.sink = sink
        self.dispatcher = Dispatcher.for_sink(sink, min_interval=DRAIN_INTERVAL)
        # A sink may tell the bus's largest payload (the Publisher does): no array
        # is published that the bus would refuse.
        max_payload = getattr(sink, "max_payload", None)
        if (
            isinstance(max_payload, int)
            and max_payload > _ENVELOPE_BYTES
            and max_payload - _ENVELOPE_BYTES < self.max_array_bytes
        ):
            self.max_array_bytes = max_payload - _ENVELOPE_BYTES
            self.limit_hint = (
                f" (the bus's max_payload of {max_payload} bytes: raise it in "
                f"nats-server's configuration, e.g. 8MB)"
            )
        self.context = Context(
            "pva", conf=pva_conf(self.settings), useenv=True, nt=False
        )
        if self.search_reset > 0:
            self._researcher = asyncio.create_task(self._research(), name="pva-search")

    async def _research(self) -> None:
        """Search again for channels away (see the module's docstring)."""
        period = self.search_reset
        while True:
            await asyncio.sleep(min(1.0, period / 4))
            now = time.monotonic()
            due = [
                m for m in self.monitors.values()
                if m.down_since is not None and now - m.searched_at >= period
            ]  # fmt: skip
            for monitor in due:
                try:
                    monitor.resubscribe()
                except Exception:  # p4p refused: the old way goes on next time
                    log.warning("%s: searching again failed", monitor.channel.uri,
                                exc_info=True)  # fmt: skip
            self.searches_reset += len(due)

    async def monitor(self, channels: Iterable[Channel]) -> None:
        assert self.dispatcher is not None
        loop = asyncio.get_running_loop()
        for channel in channels:
            if channel in self.monitors or channel.proto != self.proto:
                continue
            try:
                self.monitors[channel] = PvaMonitor(channel, self.dispatcher, self)
            except Exception as exc:  # p4p refused the name: this channel only
                log.warning("%s: cannot monitor: %s", channel.uri, exc)
                if self.sink is not None:
                    self.sink.disconnected(channel, f"cannot monitor: {exc}")
                continue
            self._timers[channel] = loop.call_later(
                self.connect_timeout, self._never_connected, channel
            )

    def _never_connected(self, channel: Channel) -> None:
        self._timers.pop(channel, None)
        monitor = self.monitors.get(channel)
        if monitor is not None and not monitor.ever_connected and self.sink:
            self.sink.disconnected(
                channel,
                f"never connected: no server answered within {self.connect_timeout:g} s",
            )

    # -- events, in the loop ---------------------------------------------------------

    def on_value(self, monitor: PvaMonitor, value: Any) -> None:
        sink = self.sink
        assert sink is not None
        monitor.down_since = None
        layout = monitor.layout
        if monitor.plain and not monitor.meta_dirty:  # the hot path: NTScalar
            try:
                sev = value["alarm.severity"]
                message = value["alarm.message"]
                secs = value["timeStamp.secondsPastEpoch"]
                if 0 <= sev <= 3 and (message or sev == 0) and secs > 0:
                    sink.value(
                        monitor.channel, value["value"],
                        t=secs * 1_000_000_000 + value["timeStamp.nanoseconds"],
                        sev=sev, st=message or "NO_ALARM",
                    )  # fmt: skip
                    return
            except KeyError:
                pass
        if layout is None:  # the first value of a connection
            layout = monitor.layout = layout_of(value)
            if monitor.signature is not None and monitor.signature != layout.signature:
                self.structure_changes += 1
                log.warning(
                    "%s: structure changed across a reconnect (now %s, %s)",
                    monitor.channel.uri, layout.type_id, layout.kind,
                )  # fmt: skip
            monitor.signature = layout.signature
            monitor.ever_connected = True
            monitor.meta_dirty = True
            fields = dict(layout.signature[2]) if layout.signature[0] == "S" else {}
            monitor.meta_fields = tuple(
                f for f in META_FIELDS[layout.kind] if f.split(".")[0] in fields
            )
            # a scalar without metadata fields needs none of the general path
            monitor.plain = layout.kind == "scalar" and not monitor.meta_fields
        try:
            v = convert(value, layout, self.max_array_bytes)
        except ConvertError as exc:
            if monitor.meta_dirty:  # consumers still learn what the channel is
                meta = declared_meta(value, layout)
                if meta is not None and meta != monitor.meta:
                    monitor.meta = meta
                    sink.meta(monitor.channel, meta)
            reason = str(exc)
            if self.limit_hint and "exceeds the limit" in reason:
                reason += self.limit_hint
                if monitor.channel not in self._told_limit:
                    self._told_limit.add(monitor.channel)
                    log.error("%s: %s", monitor.channel.uri, reason)
            self.sink_value_error(monitor, reason)
            monitor.meta_dirty = True
            return
        if monitor.meta_dirty or (
            monitor.meta_fields and value.changed(*monitor.meta_fields)
        ):
            meta = meta_of(value, layout, v)
            monitor.meta_dirty = False
            if meta != monitor.meta:
                monitor.meta = meta
                sink.meta(monitor.channel, meta)
        sev, st = alarm_of(value)
        now = time.time_ns()
        sink.value(monitor.channel, v, t=stamp_ns(value, now), sev=sev, st=st)

    def sink_value_error(self, monitor: PvaMonitor, reason: str) -> None:
        """Publish that the channel's value cannot be shown, and why."""
        if self.sink is not None:
            self.sink.value(
                monitor.channel, None, t=time.time_ns(),
                sev=int(Severity.INVALID), st=reason,
            )  # fmt: skip

    def on_error(self, monitor: PvaMonitor, error: Exception) -> None:
        sink = self.sink
        assert sink is not None
        if isinstance(error, Cancelled):
            return
        monitor.layout = None
        monitor.plain = False
        if monitor.down_since is None:
            monitor.down_since = monitor.searched_at = time.monotonic()
        if isinstance(error, Disconnected):
            if monitor.ever_connected:
                sink.disconnected(monitor.channel, "disconnected")
        elif isinstance(error, Finished):
            sink.disconnected(monitor.channel, "subscription ended by the server")
        elif isinstance(error, RemoteError):
            sink.disconnected(monitor.channel, f"server error: {error}")
        else:
            sink.disconnected(monitor.channel, f"{type(error).__name__}: {error}")

    # -- release, put, stop ----------------------------------------------------------

    async def release(self, channels: Iterable[Channel]) -> None:
        for channel in channels:
            monitor = self.monitors.pop(channel, None)
            timer = self._timers.pop(channel, None)
            if timer is not None:
                timer.cancel()
            if monitor is not None:
                self._closed_merged += monitor.merged
                monitor.close()

    async def put(self, channel: Channel, value: Any, timeout: float) -> PutReplyMsg:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        reached = threading.Event()  # the server answered the put's get

        def settle(result: Any) -> None:
            if not done.done():
                done.set_result(result)

        def handler(result: Any) -> None:  # p4p worker thread
            loop.call_soon_threadsafe(settle, result)

        def builder(current: Any) -> None:  # p4p worker thread
            reached.set()
            for field, item in put_fields(current, value).items():
                current[field] = item

        op = self.context.put(
            channel.name, handler, builder=builder,
            request="field()record[block=true]", get=True,
        )  # fmt: skip
        try:
            result = await asyncio.wait_for(done, timeout)
        except TimeoutError:
            monitor = self.monitors.get(channel)
            if reached.is_set() or (monitor is not None and monitor.layout is not None):
                # the server answered the get, or is connected and answers nothing
                return _reply(
                    False, PutError.TIMEOUT,
                    f"{channel.name}: no completion within {timeout:g} s",
                )  # fmt: skip
            return _reply(
                False, PutError.DISCONNECTED,
                f"{channel.name} is not connected (no server answered within {timeout:g} s)",
            )  # fmt: skip
        finally:
            op.close()
        if result is None:
            return _reply(True)
        if isinstance(result, PutValueError):
            return _reply(False, PutError.TYPE, f"{channel.name}: {result}")
        if isinstance(result, RemoteError):
            code = PutError.ACCESS if _ACCESS.search(str(result)) else PutError.FAILED
            return _reply(False, code, f"{channel.name}: {result}")
        if isinstance(result, Disconnected):
            return _reply(
                False,
                PutError.DISCONNECTED,
                f"{channel.name}: disconnected during the put",
            )
        if isinstance(result, Exception):
            return _reply(
                False,
                PutError.TYPE,
                f"{channel.name}: {type(result).__name__}: {result}",
            )
        return _reply(True)

    async def stop(self) -> None:
        if self._researcher is not None:
            self._researcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._researcher
            self._researcher = None
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for monitor in self.monitors.values():
            monitor.close()
        self.monitors.clear()
        if self.context is not None:
            self.context.close()
            self.context = None
