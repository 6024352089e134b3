"""One Tango device as the adapter sees it: connection, first values, events,
polling and liveness of the attributes monitored on it.

Guarantees:

- Change events are subscribed first, in bulk, with ``EventSubMode.AsyncRead``:
  the calls return at once; Tango reads each attribute once its subscription is
  live and delivers that value as the first event, which confirms the
  subscription (meanwhile the attributes the device polls are read once from its
  polling buffer, in chunks: thousands of subscriptions take seconds) (after a data-less confirmation, as ``EventSubMode.Async`` sends,
  the attribute is read once from the polling buffer). Event attributes are never
  polled while their events come; an error event publishes the attribute invalid
  with the device's reason until the next value. Configuration events (metadata changes) are subscribed once a device's
  change events have settled, in paced chunks (cppTango holds every event of the
  process back while it subscribes; values come first, and metadata is read at
  connection anyway), and only on devices with at most ``config_events_max``
  monitored attributes; the metadata of the others is read again every
  ``meta_period``, in one call per device.
- Released attributes publish nothing more; their subscriptions are undone in the
  background, paced (:mod:`synoptic_adapters.tango.unsubscriber`).
- Attributes that send no events are read by the device's read lane
  (:mod:`synoptic_adapters.tango.reads`), one read at a time, once the event
  attributes have their first values: fast ones every ``poll_period``, slow or
  timing-out ones backed off, within a budget of the device's time
  (``busy_fraction``). A read that raises publishes the device's reason and
  description, invalid.
- The device is pinged every ``ping_period``: when it stops answering every
  attribute is published disconnected; when it answers again it is connected
  afresh (first values, new subscriptions) without operator action. A ping that
  times out while a read of ours holds the device means "busy", not gone (the
  timed-out attribute's status says the device is still busy with it).
- A device or attribute that does not exist is published as disconnected with a
  ``never connected: …`` status, and retried every ``retry_period``.
- Every call of a connection (names, polling status, configuration) is waited
  for :data:`CALL_MARGIN` beyond ``read_timeout`` at most: a call that does not return by then (a
  reconnection hung inside cppTango: on a host that accepts and never answers
  it waits for a reply with no timeout) fails the try, which is published; the
  next try makes no call while one of an earlier try still runs (a thread is
  never added behind a call that hangs).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import tango

from synoptic_adapters.source import ChannelSink
from synoptic_adapters.tango.attr import AttrState, Events
from synoptic_adapters.tango.convert import Reading, metadata, reading
from synoptic_adapters.tango.events import (
    ChangeCallback,
    ConfigCallback,
    EventInbox,
    EventItem,
    call_directly,
)
from synoptic_adapters.tango.memory import Learned, Memory, NoMemory
from synoptic_adapters.tango.policy import DeviceTime
from synoptic_adapters.tango.proxies import ProxyMaker
from synoptic_adapters.tango.reads import Reads, describe, is_timeout
from synoptic_adapters.tango.settings import TangoSettings
from synoptic_adapters.tango.stages import stage
from synoptic_adapters.tango.unsubscriber import Unsubscriber
from synoptic_schemas import Channel, Severity

log = logging.getLogger(__name__)

#: Longest wait for change subscriptions to settle before configuration events
#: are subscribed, seconds.
CONFIG_EVENTS_DELAY = 60.0
#: Configuration-event subscriptions per paced chunk, and the pause after each
#: chunk (seconds): cppTango's event thread waits while a subscription call runs,
#: so back-to-back calls for thousands of attributes would hold every event of
#: the process back for tens of seconds.
CONFIG_CHUNK = 10
CONFIG_PAUSE = 0.05
#: Longest a device may go on not answering pings while a read of ours holds
#: it before it is taken for gone (a hung host looks the same), seconds.
BUSY_MAX = 60.0
#: Seconds between two log lines about event errors of one device.
ERROR_LOG_PERIOD = 5.0
#: Seconds a call of a connection may run beyond ``read_timeout`` (its own
#: timeout: late only when the machine is busy) before the try gives up on it.
CALL_MARGIN = 5.0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.array_equal(a, b))
        )
    return type(a) is type(b) and a == b


def _polled_attributes(polling_status: Iterable[str]) -> dict[str, float]:
    """Polling period (s) by name (lower case) of the attributes in a
    ``polling_status()`` answer."""
    prefix, period_prefix = "polled attribute name = ", "polling period (ms) = "
    periods: dict[str, float] = {}
    for entry in polling_status:
        lines = [line.strip().lower() for line in str(entry or "").splitlines()]
        if lines and lines[0].startswith(prefix):
            period = next(
                (line.removeprefix(period_prefix) for line in lines
                 if line.startswith(period_prefix)), "0",
            )  # fmt: skip
            try:
                seconds = float(period) / 1000
            except ValueError:
                seconds = 0.0
            periods[lines[0].removeprefix(prefix).strip()] = seconds
    return periods


async def _none() -> None:
    return None


class UnansweredError(TimeoutError):
    """A call of a connection did not return in time (or one of an earlier try
    still has not)."""


def _take_ids(state: AttrState) -> list[int]:
    """The state's subscription ids, cleared."""
    ids = [i for i in (state.change_id, state.conf_id) if i is not None]
    state.change_id = state.conf_id = None
    return ids


class DeviceLink:
    """The monitored attributes of one device, and the tasks that keep them."""

    def __init__(
        self,
        url: str,
        sink: ChannelSink,
        settings: TangoSettings,
        inbox: EventInbox,
        pool: ThreadPoolExecutor,
        proxies: ProxyMaker,
        subscriptions: threading.Lock,
        unsubscriber: Unsubscriber,
        background: asyncio.Lock,
        memory: Memory | None = None,
        key: str = "",
    ) -> None:
        self.url = url
        #: ``host:port/domain/family/member``: the device's key in :attr:`memory`
        self.key = key or url
        #: what earlier adapters learned about reading its attributes, and where
        #: this one leaves what it learns (:mod:`synoptic_adapters.tango.memory`)
        self.memory: Memory = memory or NoMemory()
        #: the device's document: None until recalled (at the first connection)
        self._learned: dict[str, Learned] | None = None
        #: ``domain/family/member`` (for log and stage lines)
        self.device = "/".join(url.split("#", 1)[0].rsplit("/", 3)[-3:])
        #: creates this device's proxies, never behind another device's creation
        self.proxies = proxies
        #: held around every (un)subscription call: one at a time per process
        self.subscriptions = subscriptions
        #: unsubscribes released attributes in the background, paced
        self.unsubscriber = unsubscriber
        #: held by paced background subscriptions (one chunk at a time per process)
        self.background = background
        self.sink = sink
        self.settings = settings
        self.inbox = inbox
        self.pool = pool
        self.attrs: dict[str, AttrState] = {}
        self.proxy: Any = None
        self.events_proxy: Any = None
        self.up = False
        self.ever_up = False
        self.names: dict[str, str] = {}  # lower-case → device's attribute name
        #: attributes the server polls (lower case) → polling period, s
        self.polled: dict[str, float] = {}
        #: time the device spent on our reads, and the read budget
        self.device_time = DeviceTime(settings.busy_fraction, time.monotonic())
        self.reads: Reads | None = None  # the read lane while connected
        self.events_received = 0  # value events of this device
        self.event_errors = 0
        self.connects = 0  # successful connections (1 + reconnections)
        self.busy_pings = 0  # pings that timed out while our read held the device
        #: subscriptions whose callback Tango calls without pytango's wrappers
        self.direct_callbacks = 0
        self._generation = 0
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._config_tasks: set[asyncio.Task[None]] = set()
        self._error_logged_at = -ERROR_LOG_PERIOD  # monotonic
        self._errors_unlogged = 0
        #: calls of a connection try that did not return in time, still running
        self._hung: set[asyncio.Future[Any]] = set()

    # -- public -------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting (in the background)."""
        self._task = asyncio.create_task(self._run(), name=f"tango {self.url}")

    async def add(self, channels: Iterable[Channel]) -> None:
        """Monitor more attributes of this device (already monitored: ignored)."""
        fresh: list[AttrState] = []
        for channel in channels:
            name = channel.tango_parts[4]
            if name not in self.attrs:
                self.attrs[name] = state = AttrState(channel, name, link=self)
                self._recall(state)
                fresh.append(state)
        if fresh and self.up:
            async with self._lock:
                if self.up:
                    await self._attach(fresh)

    async def remove(self, channels: Iterable[Channel]) -> None:
        """Stop monitoring attributes of this device."""
        gone = [self.attrs.pop(c.tango_parts[4], None) for c in channels]
        await self._detach([state for state in gone if state is not None])

    async def close(self, *, unsubscribe: bool = True) -> None:
        """Stop every task and (unless ``unsubscribe`` is false) unsubscribe
        everything; late events are ignored either way."""
        tasks = [t for t in (self._task, self._poller, *self._config_tasks) if t]
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=2) if tasks else None
        await self._detach(list(self.attrs.values()), unsubscribe=unsubscribe)
        self.attrs.clear()

    def handle(self, item: EventItem) -> None:
        """An event from the inbox (on the loop)."""
        state: AttrState = item.target
        if item.generation != state.generation or not self.up:
            return
        if self.attrs.get(state.name) is not state:
            return
        if item.kind == "value":
            self.events_received += 1
            state.events = Events.LIVE
            state.unconfirmed = False
            self._publish(state, item.payload, polled=False)
        elif item.kind == "live":
            if state.events is not Events.LIVE:
                state.events = Events.LIVE
                state.unconfirmed = False
                state.confirm_read = state.name in self.polled
                self._wake_reads()
        elif item.kind == "meta":
            if item.payload != state.meta:
                state.meta = item.payload
                self.sink.meta(state.channel, item.payload)
        elif item.kind == "no_events":
            if state.events is not Events.NONE:
                state.events = Events.NONE
                if state.change_id is not None:
                    self._unsubscribe_later([state.change_id])
                    state.change_id = None
                self._wake_reads()
        elif item.kind == "error" and state.events is not Events.NONE:
            # cppTango keeps the subscription and resubscribes by itself; the
            # value is unknown until the next event (never polled meanwhile),
            # unless no event came yet: a subscription that failed at once is
            # retried by cppTango's keep-alive thread, a minute or more later,
            # and meanwhile the read lane reads the attribute
            if state.events is Events.PENDING:
                state.unconfirmed = True
            self.event_errors += 1
            self._log_event_error(state, item.payload)
            first = (item.payload or "?").strip().splitlines()[0]
            self.invalid(state, f"event error: {first}")
            self._wake_reads()

    def _wake_reads(self) -> None:
        if self.reads is not None:
            self.reads.wake.set()

    def _log_event_error(self, state: AttrState, error: str) -> None:
        """One log line per device and :data:`ERROR_LOG_PERIOD` at most: a late
        polling thread on the server sends an error event for every attribute
        at once (hundreds of lines, which pushed a worker's progress line out of
        the benchmark's view of the output)."""
        now = time.monotonic()
        if now - self._error_logged_at < ERROR_LOG_PERIOD:
            self._errors_unlogged += 1
            return
        more = self._errors_unlogged
        self._error_logged_at, self._errors_unlogged = now, 0
        log.info(
            "%s/%s: event error %s; invalid until its next event%s",
            self.url, state.name, error.strip().splitlines()[0] if error else "?",
            f" ({more} more event errors of this device since the last line)"
            if more else "",
        )  # fmt: skip

    # -- connection lifecycle -------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self._connect()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._all_down(exc)
                await asyncio.sleep(self.settings.retry_period)
                continue
            await self._watch()
            self._go_down("device server not responding")

    async def _connect(self) -> None:
        stage("connect", self.device)
        if self.proxy is None or self.events_proxy is None:
            # two proxies, made on the proxy threads (a host that hangs holds up
            # no other device), each waited for at most ping_timeout: meanwhile
            # the device is published "never connected" and retried, the retry
            # taking up the same creation; events go through a synchronous proxy
            # (its callbacks run in Tango's thread without a coroutine per event)
            wait = self.settings.ping_timeout
            if self.proxy is None:
                proxy = await self.proxies.proxy(f"{self.url} read", self.url, wait)
                proxy.set_timeout_millis(int(self.settings.read_timeout * 1000))
                # attributes the device polls are read from its polling buffer,
                # not from the hardware (Tango's default, stated)
                proxy.set_source(tango.DevSource.CACHE_DEV)
                self.proxy = proxy
            self.events_proxy = await self.proxies.proxy(
                f"{self.url} events", self.url, wait, tango.GreenMode.Synchronous
            )
        stage("proxies", self.device)
        if self._hung:
            raise UnansweredError(
                f"{len(self._hung)} calls to the device have not returned"
            )
        async with self._lock:
            names, status, learned = await asyncio.gather(
                self._bounded(self.proxy.get_attribute_list),
                self._bounded(self.proxy.polling_status),
                self.memory.recall(self.key) if self._learned is None else _none(),
            )
            if self._learned is None:
                self._learned = learned or {}
                for state in self.attrs.values():
                    self._recall(state)
            self.names = {str(n).lower(): str(n) for n in names}
            self.polled = _polled_attributes(status)
            stage("names", self.device)
            self.up = True
            self.ever_up = True
            self.connects += 1
            self.reads = Reads(self, self.device_time)
            try:
                await self._attach(list(self.attrs.values()))
            except Exception as exc:
                self._go_down(f"disconnected: {describe(exc)}")
                raise
        self._poller = asyncio.create_task(self.reads.run(), name=f"read {self.url}")

    async def _watch(self) -> None:
        """Ping until the device stops answering. A ping that times out while a
        read of ours holds the device (or may still: a timed-out read runs on),
        for at most :data:`BUSY_MAX`, says the device is busy, not gone: no
        reconnection (the status of the attribute whose timed-out read the
        device still runs says so)."""
        busy_logged = False
        while True:
            await asyncio.sleep(self.settings.ping_period)
            reads = self.reads
            held_since = reads.busy_since if reads is not None else None
            started = time.monotonic()
            try:
                async with asyncio.timeout(self.settings.ping_timeout):
                    await self.proxy.ping()  # (not wait_for: it can lose a cancel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                now = time.monotonic()
                if held_since is None and reads is not None:
                    held_since = reads.busy_since
                if (
                    is_timeout(exc, now - started, self.settings.ping_timeout)
                    and held_since is not None
                    and now - held_since < BUSY_MAX
                ):
                    self.busy_pings += 1
                    if reads is not None:
                        reads.busy_ping()
                    if not busy_logged:
                        busy_logged = True
                        log.info("%s: busy (ping timed out while our read holds "
                                 "the device); not reconnecting", self.url)  # fmt: skip
                    continue
                log.warning("%s: ping failed: %s", self.url, describe(exc))
                return
            busy_logged = False

    def _go_down(self, reason: str) -> None:
        self.up = False
        self.reads = None
        if self._poller:
            self._poller.cancel()
            self._poller = None
        for state in self.attrs.values():
            state.generation += 1
            self._unsubscribe_later(_take_ids(state))
            self._down(state, reason)

    def _all_down(self, exc: BaseException) -> None:
        prefix = "disconnected" if self.ever_up else "never connected"
        for state in self.attrs.values():
            self._down(state, f"{prefix}: {describe(exc)}")

    # -- attaching attributes ---------------------------------------------------------

    async def _attach(self, states: list[AttrState]) -> None:
        """Subscribe change events of ``states`` (first values come with them),
        read their configuration; the read lane then polls those without events."""
        for state in states:
            state.generation += 1
            state.exists = state.name in self.names
            if not state.exists:
                prefix = (
                    "disconnected" if state.last or state.meta else "never connected"
                )
                self._down(
                    state, f"{prefix}: {self.url} has no attribute {state.name!r}"
                )
        present = [s for s in states if s.exists]
        if not present:
            return
        for state in present:
            state.unconfirmed = False
            if state.events is not Events.NONE:
                state.events = Events.PENDING
        real = [self.names[s.name] for s in present]
        assert self.reads is not None
        subscribed, configs, first = await asyncio.gather(
            self._subscribing(self._subscribe_changes, present),
            self._bounded(self.proxy.get_attribute_config_ex, real),
            self.reads.first_reads(present),
            return_exceptions=True,
        )
        if isinstance(subscribed, BaseException):
            raise subscribed
        stage("subscribe_calls", self.device)
        for state, change_id in zip(present, subscribed, strict=True):
            if state.events is Events.NONE and change_id is not None:
                self._unsubscribe_later([change_id])  # said "no events" meanwhile
            else:
                state.change_id = change_id  # undone by the caller on a failure
        for failed in (configs, first):
            if isinstance(failed, BaseException):
                raise failed
        for state, info in zip(present, configs, strict=True):
            meta = metadata(info)
            if meta != state.meta:
                state.meta = meta
                self.sink.meta(state.channel, meta)
        stage("read", self.device)
        self._wake_reads()
        if (
            self.settings.config_events
            and len(self.attrs) <= self.settings.config_events_max
        ):
            self._config_tasks.add(
                task := asyncio.create_task(self._subscribe_config(present))
            )
            task.add_done_callback(self._config_tasks.discard)

    async def _subscribe_config(self, states: list[AttrState]) -> None:
        """Configuration events, once the change events are settled (they share
        Tango's subscription thread, and values come first)."""
        generations = [s.generation for s in states]
        for _ in range(int(CONFIG_EVENTS_DELAY / 0.2)):
            if not any(s.events is Events.PENDING for s in states):
                break
            await asyncio.sleep(0.2)
        expected = dict(zip(map(id, states), generations, strict=True))
        for start in range(0, len(states), CONFIG_CHUNK):
            chunk = [
                s
                for s in states[start : start + CONFIG_CHUNK]
                if s.generation == expected[id(s)] and self.attrs.get(s.name) is s
            ]
            if not chunk:
                continue
            async with self.background:  # one paced chunk at a time per process
                ids = await self._subscribing(self._subscribe_configs, chunk)
                for state, (generation, conf_id) in ids:
                    if (
                        state.generation == generation
                        and self.attrs.get(state.name) is state
                    ):
                        state.conf_id = conf_id
                    else:
                        self._unsubscribe_later([conf_id])
                await asyncio.sleep(CONFIG_PAUSE)

    async def _subscribing(self, fn: Any, states: list[AttrState]) -> Any:
        """``fn(states)`` in a thread; when the caller is cancelled meanwhile, the
        thread's subscriptions are unsubscribed once it is done (never leaked)."""
        done = asyncio.get_running_loop().run_in_executor(self.pool, fn, states)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            done.add_done_callback(self._unsubscribe_result)
            raise

    def _unsubscribe_result(self, done: asyncio.Future[Any]) -> None:
        """Unsubscribe what a subscription call nobody waits for any more made."""
        if done.cancelled() or done.exception() is not None:
            return
        ids: list[int] = []
        for item in done.result():
            if isinstance(item, int):  # change events: ids (or None)
                ids.append(item)
            elif isinstance(item, tuple):  # configuration events
                ids.append(item[1][1])
        self._unsubscribe_later(ids)

    def _subscribe_changes(self, states: list[AttrState]) -> list[int | None]:
        """Subscribe change events (runs in a thread); returns the ids."""
        ids: list[int | None] = []
        for state in states:
            if state.events is Events.NONE:
                ids.append(None)
                continue
            callback = ChangeCallback(self.inbox, state, state.generation)
            with self.subscriptions:
                event_id = self.events_proxy.subscribe_event(
                    self.names[state.name],
                    tango.EventType.CHANGE_EVENT,
                    callback,
                    tango.EventSubMode.AsyncRead,
                )
                self.direct_callbacks += call_directly(
                    self.events_proxy, event_id, callback
                )
            ids.append(event_id)
        return ids

    def _subscribe_configs(
        self, states: list[AttrState]
    ) -> list[tuple[AttrState, tuple[int, int]]]:
        """Subscribe configuration events (runs in a thread); returns
        ``(state, (generation, id))`` for each subscription made. Tango makes
        each one in its subscription thread right after the call (``Async``),
        so pacing the calls (see :data:`CONFIG_PAUSE`) paces the work."""
        made = []
        for state in states:
            callback = ConfigCallback(self.inbox, state, state.generation)
            try:
                with self.subscriptions:
                    event_id = self.events_proxy.subscribe_event(
                        self.names[state.name],
                        tango.EventType.ATTR_CONF_EVENT,
                        callback,
                        tango.EventSubMode.Async,
                    )
                    self.direct_callbacks += call_directly(
                        self.events_proxy, event_id, callback
                    )
            except tango.DevFailed as exc:  # metadata was read at connection
                log.info("%s/%s: no configuration events: %s", self.url,
                         state.name, describe(exc))  # fmt: skip
                continue
            made.append((state, (callback.generation, event_id)))
        return made

    async def _detach(
        self, states: list[AttrState], *, unsubscribe: bool = True
    ) -> None:
        ids: list[int] = []
        for state in states:
            state.generation += 1
            ids += _take_ids(state)
        if unsubscribe:
            self._unsubscribe_later(ids)

    def _unsubscribe_later(self, ids: list[int]) -> None:
        """Unsubscribe in the background (paced; the proxy is kept until done)."""
        self.unsubscriber.submit(self.events_proxy, ids)

    # -- reading --------------------------------------------------------------------------

    # -- what is learned ----------------------------------------------------------------

    def _recall(self, state: AttrState) -> None:
        """Start ``state`` from what was learned about it (once recalled, and
        only an attribute this process has not read yet)."""
        learned = (self._learned or {}).get(state.name)
        if learned is None or state.proven or state.strikes or state.cost:
            return
        state.cost, state.strikes, state.proven = (
            learned.cost,
            learned.strikes,
            learned.proven and not learned.strikes,
        )
        if learned.strikes:
            wait = max(0.0, learned.next_try - time.time())
            state.due = time.monotonic() + wait

    def remember(self) -> None:
        """Leave what the read lane knows now in :attr:`memory` (when it
        changed); attributes not monitored now keep what was learned of them."""
        if self._learned is None:
            return  # not recalled yet: nothing of ours to add
        doc = dict(self._learned)
        now, wall = time.monotonic(), time.time()
        for name, state in self.attrs.items():
            if state.strikes or state.proven:
                doc[name] = Learned(
                    cost=round(state.cost, 3), strikes=state.strikes,
                    proven=state.proven and not state.strikes,
                    next_try=round(wall + max(0.0, state.due - now), 1)
                    if state.strikes else 0.0,
                )  # fmt: skip
            else:
                doc.pop(name, None)
        if doc != self._learned:
            self._learned = doc
            self.memory.note(self.key, doc)

    def polls(self, state: AttrState) -> bool:
        """Whether the read lane polls ``state``: it sends no events; or its
        subscription is not confirmed and either it is not polled by Tango (it
        may push events from code; until it does, it is read) or the
        subscription failed before its first event (:attr:`AttrState.unconfirmed`:
        read from the polling buffer until an event comes)."""
        return state.exists and (
            state.events is Events.NONE
            or (
                state.events is Events.PENDING
                and (state.name not in self.polled or state.unconfirmed)
            )
        )

    def awaits_subscription(self, state: AttrState) -> bool:
        """Whether ``state`` is polled by Tango and its change-event
        subscription is not confirmed yet, nor failed (the read lane waits for
        those: a subscription's first read queues behind any read of ours)."""
        return (
            state.exists
            and state.events is Events.PENDING
            and state.name in self.polled
            and not state.unconfirmed
        )

    async def read_meta(self) -> None:
        """Read the configuration of the attributes that have no configuration
        events, in one call; publish what changed."""
        states = [s for s in self.attrs.values() if s.exists and s.conf_id is None]
        if not states:
            return
        try:
            async with asyncio.timeout(self.settings.read_timeout):
                infos = await self._blocking(
                    self.proxy.get_attribute_config_ex,
                    [self.names[s.name] for s in states],
                )
        except (TimeoutError, tango.DevFailed) as exc:
            log.info("%s: metadata not read: %s", self.url, describe(exc))
            return
        for state, info in zip(states, infos, strict=True):
            meta = metadata(info)
            if meta != state.meta and self.attrs.get(state.name) is state:
                state.meta = meta
                self.sink.meta(state.channel, meta)

    def take(
        self, state: AttrState, result: tango.DeviceAttribute, invalid: str = ""
    ) -> None:
        """Publish a read's result (``invalid``: publish its value with severity
        invalid and this status instead of its own)."""
        if self.attrs.get(state.name) is not state:
            return  # released while the read ran
        if result.has_failed:
            errors = result.get_err_stack()
            text = f"{errors[0].reason}: {errors[0].desc.strip()}" if errors else "?"
            self.invalid(state, f"read failed: {text}")
            return
        value = reading(result)
        if invalid:
            value = Reading(value.v, value.t, int(Severity.INVALID), invalid)
        self._publish(state, value, polled=True)

    def invalid(self, state: AttrState, status: str) -> None:
        """Publish ``state`` connected but without a valid value: severity
        invalid, ``status`` saying why (once per distinct status)."""
        if self.attrs.get(state.name) is not state:
            return
        last = state.last
        if last is not None and last.v is None and last.st == status:
            return
        state.last = Reading(None, time.time_ns(), int(Severity.INVALID), status)
        state.status = ""
        self.sink.value(state.channel, None, t=state.last.t, sev=state.last.sev,
                        st=status)  # fmt: skip

    def stats(self) -> dict[str, float]:
        """Figures of this device for the metrics."""
        live = [s for s in self.attrs.values() if s.events is Events.LIVE]
        expected = sum(1 / self.polled[s.name] for s in live if self.polled.get(s.name))
        return {
            "busy_fraction": self.device_time.fraction(time.monotonic()),
            "busy_seconds": self.device_time.total,
            "in_backoff": sum(1 for s in self.attrs.values() if s.strikes),
            "events_received": self.events_received,
            "events_expected_per_s": expected,
            "event_errors": self.event_errors,
            "busy_pings": self.busy_pings,
            "connects": self.connects,
        }

    # -- publishing -------------------------------------------------------------------------

    def _publish(self, state: AttrState, value: Reading, *, polled: bool) -> None:
        last = state.last
        if last is not None:
            if value.t < last.t:
                return  # an older sample (a read overtaken by an event)
            if (
                polled
                and value.sev == last.sev
                and value.st == last.st
                and _same(value.v, last.v)
            ):
                return
        state.last = value
        state.status = ""
        self.sink.value(state.channel, value.v, t=value.t, sev=value.sev, st=value.st)

    def _down(self, state: AttrState, reason: str) -> None:
        if state.status == reason or self.attrs.get(state.name) is not state:
            return
        state.status = reason
        state.last = None
        self.sink.disconnected(state.channel, reason)

    async def _blocking(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def _bounded(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in a thread, waited for ``read_timeout`` +
        :data:`CALL_MARGIN` at most (then :class:`UnansweredError`; the thread
        goes on, kept in :attr:`_hung` until it returns)."""
        limit = self.settings.read_timeout + CALL_MARGIN
        call = asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
        done, _ = await asyncio.wait({call}, timeout=limit)
        if not done:
            self._hung.add(call)
            call.add_done_callback(self._returned)
            name = getattr(fn, "__name__", "a call")
            log.warning("%s: %s did not return in %g s", self.url, name, limit)
            raise UnansweredError(f"{name} did not return in {limit:g} s")
        return call.result()

    def _returned(self, call: asyncio.Future[Any]) -> None:
        self._hung.discard(call)
        if not call.cancelled():
            call.exception()  # retrieved: nobody waits for it any more
