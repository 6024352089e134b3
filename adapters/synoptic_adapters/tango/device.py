"""One Tango device as the adapter sees it: connection, first values, events,
polling and liveness of the attributes monitored on it.

Guarantees:

- First values come from ``read_attributes`` calls made before any event
  subscription: attributes the server polls in concurrent chunks (from its polling
  buffer, a few ms each), the others one call each until they have proved fast.
- Change events are subscribed in bulk with ``EventSubMode.AsyncRead``: the calls
  return at once; Tango reads each attribute once its subscription is live and
  delivers that value as the first event, which confirms the subscription. Until
  then the attribute is read every ``confirm_period`` (and once more after a
  data-less confirmation, as ``EventSubMode.Async`` sends), so no change is lost in
  between. Configuration events (metadata changes) are subscribed once a device's
  change events have settled, in paced chunks (cppTango holds every event of the
  process back while it subscribes; values come first, and metadata is read at
  connection anyway), and only on devices with at most ``config_events_max``
  monitored attributes; the metadata of the others is read again every
  ``meta_period``, in one call per device.
- Released attributes publish nothing more; their subscriptions are undone in the
  background, paced (:mod:`synoptic_adapters.tango.unsubscriber`).
- Attributes that send no events are read every ``poll_period``: one
  ``read_attributes`` for all of them per device. An attribute that makes a read
  slower than ``slow_after`` (or time out) moves to its own read group with its
  own proxy and ``slow_timeout``; it never delays the others again.
- The device is pinged every ``ping_period``: when it stops answering every
  attribute is published disconnected; when it answers again it is connected
  afresh (first values, new subscriptions) without operator action.
- A device or attribute that does not exist is published as disconnected with a
  ``never connected: …`` status, and retried every ``retry_period``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import tango

from synoptic_adapters.source import ChannelSink
from synoptic_adapters.tango.convert import Reading, metadata, reading
from synoptic_adapters.tango.events import (
    ChangeCallback,
    ConfigCallback,
    EventInbox,
    EventItem,
    call_directly,
)
from synoptic_adapters.tango.settings import TangoSettings
from synoptic_adapters.tango.stages import stage
from synoptic_adapters.tango.unsubscriber import Unsubscriber
from synoptic_schemas import Channel

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
#: Seconds between two log lines about event errors of one device.
ERROR_LOG_PERIOD = 5.0


class Events(Enum):
    """Where an attribute's values come from."""

    PENDING = "pending"  # subscribed, not confirmed: read every confirm_period
    LIVE = "live"  # change events confirmed
    NONE = "none"  # the attribute sends no events: read every poll_period


@dataclass(eq=False)
class AttrState:
    """One monitored attribute of a device."""

    channel: Channel
    name: str  # lower case
    events: Events = Events.PENDING
    generation: int = 0  # bumped at each (re)connection; stale events are dropped
    exists: bool = False
    isolated: bool = False
    confirm_read: bool = False  # read once more: subscription just confirmed
    proven: bool = False  # read fast on its own: may join the device's group
    meta: dict[str, Any] | None = None
    last: Reading | None = None
    status: str = ""  # last disconnected reason published
    change_id: int | None = None  # event subscription ids
    conf_id: int | None = None
    task: asyncio.Task[None] | None = None  # the isolated read loop
    link: Any = None  # the DeviceLink it belongs to


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.array_equal(a, b))
        )
    return type(a) is type(b) and a == b


def _polled_attributes(polling_status: Iterable[str]) -> set[str]:
    """Names (lower case) of the attributes in a ``polling_status()`` answer."""
    prefix = "polled attribute name = "
    names = set()
    for entry in polling_status:
        first = str(entry).splitlines()[0].strip().lower() if entry else ""
        if first.startswith(prefix):
            names.add(first.removeprefix(prefix).strip())
    return names


def _take_ids(state: AttrState) -> list[int]:
    """The state's subscription ids, cleared."""
    ids = [i for i in (state.change_id, state.conf_id) if i is not None]
    state.change_id = state.conf_id = None
    return ids


def _describe(exc: BaseException) -> str:
    if isinstance(exc, tango.DevFailed) and exc.args:
        first = exc.args[0]
        return f"{first.reason}: {first.desc.strip().splitlines()[0]}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return repr(exc)


class DeviceLink:
    """The monitored attributes of one device, and the tasks that keep them."""

    def __init__(
        self,
        url: str,
        sink: ChannelSink,
        settings: TangoSettings,
        inbox: EventInbox,
        pool: ThreadPoolExecutor,
        subscriptions: threading.Lock,
        unsubscriber: Unsubscriber,
        background: asyncio.Lock,
    ) -> None:
        self.url = url
        #: ``domain/family/member`` (for log and stage lines)
        self.device = "/".join(url.split("#", 1)[0].rsplit("/", 3)[-3:])
        #: held around proxy creation and every (un)subscription call: one at a
        #: time per process
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
        self.polled: set[str] = set()  # attributes the server polls (lower case)
        #: subscriptions whose callback Tango calls without pytango's wrappers
        self.direct_callbacks = 0
        self._generation = 0
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._config_tasks: set[asyncio.Task[None]] = set()
        self._error_logged_at = -ERROR_LOG_PERIOD  # monotonic
        self._errors_unlogged = 0

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
        tasks += [s.task for s in self.attrs.values() if s.task]
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
            state.events = Events.LIVE
            self._publish(state, item.payload, polled=False)
        elif item.kind == "live":
            if state.events is not Events.LIVE:
                state.events = Events.LIVE
                state.confirm_read = True
                self._wake.set()
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
                self._wake.set()
        elif item.kind == "error" and state.events is Events.LIVE:
            self._log_event_error(state, item.payload)
            state.events = Events.PENDING
            self._wake.set()

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
            "%s/%s: event error %s; reading it until events come again%s",
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
        if self.proxy is None:
            # events go through a synchronous proxy: its callbacks run in Tango's
            # thread without a coroutine per event
            self.proxy = await self._blocking(self._new_proxy)
            self.events_proxy = await self._blocking(self._new_proxy)
            self.events_proxy.set_green_mode(tango.GreenMode.Synchronous)
            self.proxy.set_timeout_millis(int(self.settings.read_timeout * 1000))
        stage("proxies", self.device)
        async with self._lock:
            names, status = await asyncio.gather(
                self._blocking(self.proxy.get_attribute_list),
                self._blocking(self.proxy.polling_status),
            )
            self.names = {str(n).lower(): str(n) for n in names}
            self.polled = _polled_attributes(status)
            stage("names", self.device)
            self.up = True
            self.ever_up = True
            await self._attach(list(self.attrs.values()))
        self._poller = asyncio.create_task(self._poll_loop(), name=f"poll {self.url}")

    async def _watch(self) -> None:
        """Ping until the device stops answering."""
        while True:
            await asyncio.sleep(self.settings.ping_period)
            try:
                await asyncio.wait_for(self.proxy.ping(), self.settings.ping_timeout)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s: ping failed: %s", self.url, _describe(exc))
                return

    def _go_down(self, reason: str) -> None:
        self.up = False
        if self._poller:
            self._poller.cancel()
            self._poller = None
        for state in self.attrs.values():
            state.generation += 1
            if state.task:
                state.task.cancel()
                state.task = None
            self._unsubscribe_later(_take_ids(state))
            self._down(state, reason)

    def _all_down(self, exc: BaseException) -> None:
        prefix = "disconnected" if self.ever_up else "never connected"
        for state in self.attrs.values():
            self._down(state, f"{prefix}: {_describe(exc)}")

    # -- attaching attributes ---------------------------------------------------------

    async def _attach(self, states: list[AttrState]) -> None:
        """Read configuration and first values of ``states``, then subscribe."""
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
        real = [self.names[s.name] for s in present]
        configs, _ = await asyncio.gather(
            self._blocking(self.proxy.get_attribute_config_ex, real),
            self._first_read(present),
        )
        stage("read", self.device)
        for state, info in zip(present, configs, strict=True):
            meta = metadata(info)
            if meta != state.meta:
                state.meta = meta
                self.sink.meta(state.channel, meta)
        for state in present:
            if state.events is not Events.NONE:
                state.events = Events.PENDING
        subscribed = await self._subscribing(self._subscribe_changes, present)
        stage("subscribe_calls", self.device)
        for state, change_id in zip(present, subscribed, strict=True):
            if state.events is Events.NONE and change_id is not None:
                self._unsubscribe_later([change_id])  # said "no events" meanwhile
            else:
                state.change_id = change_id
        self._wake.set()
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

    async def _first_read(self, states: list[AttrState]) -> None:
        """Read every attribute once, polled ones in concurrent chunks."""
        await self._read([s for s in states if not s.isolated])
        for state in states:
            if state.isolated and state.task is None:
                self._isolate(state)

    async def _read(self, states: list[AttrState]) -> None:
        """Read ``states``: attributes the server polls come from its polling
        buffer (never slow), in chunks; the others from the device: one group for
        those that read fast before, one call each for the others.

        The kinds are never mixed in one call: cppTango holds the device's
        polling-buffer lock for the whole of a mixed ``read_attributes``, so one
        slow device read would stall every polled attribute and the events; and
        an attribute in a group still running on the server cannot be read by
        another call until the whole group is done, so a stalled group is not
        probed at once: its members are read one by one from the next period."""
        cached = [s for s in states if s.name in self.polled]
        direct = [s for s in states if s.name not in self.polled]
        proven = [s for s in direct if s.proven]
        unproven = [s for s in direct if not s.proven]
        size = self.settings.first_read_chunk
        chunks = [cached[i : i + size] for i in range(0, len(cached), size)]
        reads = [
            self._read_group(chunk, self.settings.read_timeout) for chunk in chunks
        ]
        await asyncio.gather(*reads, self._read_proven(proven), self._probe(unproven))
        for state in unproven:
            if state.isolated and state.task is None:
                self._isolate(state)

    async def _read_proven(self, states: list[AttrState]) -> None:
        if states and not await self._read_group(states, self.settings.slow_after):
            log.info("%s: a read of %d attributes was slow", self.url, len(states))
            for state in states:
                state.proven = False

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
                         state.name, _describe(exc))  # fmt: skip
                continue
            made.append((state, (callback.generation, event_id)))
        return made

    async def _detach(
        self, states: list[AttrState], *, unsubscribe: bool = True
    ) -> None:
        ids: list[int] = []
        for state in states:
            state.generation += 1
            if state.task:
                state.task.cancel()
                state.task = None
            ids += _take_ids(state)
        if unsubscribe:
            self._unsubscribe_later(ids)

    def _unsubscribe_later(self, ids: list[int]) -> None:
        """Unsubscribe in the background (paced; the proxy is kept until done)."""
        self.unsubscriber.submit(self.events_proxy, ids)

    # -- reading --------------------------------------------------------------------------

    async def _poll_loop(self) -> None:
        """Read, in one call per period, what events do not deliver (metadata
        too, every ``meta_period``, for attributes without configuration
        events)."""
        next_poll = time.monotonic() + self.settings.poll_period
        next_meta = time.monotonic() + self.settings.meta_period
        while True:
            if time.monotonic() >= next_meta:
                next_meta = time.monotonic() + self.settings.meta_period
                await self._read_meta()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.confirm_period)
            self._wake.clear()
            now = time.monotonic()
            poll_due = now >= next_poll
            if poll_due:
                next_poll = now + self.settings.poll_period
            due = [
                s
                for s in self.attrs.values()
                if s.exists
                and not s.isolated
                and (
                    s.events is Events.PENDING
                    or s.confirm_read
                    or (poll_due and s.events is Events.NONE)
                )
            ]
            for state in due:
                state.confirm_read = False
            if due:
                await self._read(due)

    async def _read_meta(self) -> None:
        """Read the configuration of the attributes that have no configuration
        events, in one call; publish what changed."""
        states = [s for s in self.attrs.values() if s.exists and s.conf_id is None]
        if not states:
            return
        try:
            infos = await asyncio.wait_for(
                self._blocking(
                    self.proxy.get_attribute_config_ex,
                    [self.names[s.name] for s in states],
                ),
                self.settings.read_timeout,
            )
        except (TimeoutError, tango.DevFailed) as exc:
            log.info("%s: metadata not read: %s", self.url, _describe(exc))
            return
        for state, info in zip(states, infos, strict=True):
            meta = metadata(info)
            if meta != state.meta and self.attrs.get(state.name) is state:
                state.meta = meta
                self.sink.meta(state.channel, meta)

    async def _read_group(self, states: list[AttrState], budget: float) -> bool:
        """One ``read_attributes``; False when it took longer than ``budget``."""
        names = [self.names[s.name] for s in states]
        started = time.monotonic()
        try:
            results = await asyncio.wait_for(self.proxy.read_attributes(names), budget)
        except (TimeoutError, tango.DevFailed) as exc:
            if isinstance(exc, tango.DevFailed) and time.monotonic() - started < budget:
                for state in states:
                    self._down(state, f"read failed: {_describe(exc)}")
                return True
            return False
        for state, result in zip(states, results, strict=True):
            self._take(state, result)
        return True

    async def _probe(self, states: list[AttrState]) -> None:
        """Read each attribute alone, concurrently; isolate the slow ones."""

        async def one(state: AttrState) -> None:
            name = self.names[state.name]
            try:
                result = await asyncio.wait_for(
                    self.proxy.read_attribute(name), self.settings.slow_after
                )
            except TimeoutError:
                log.info("%s/%s is slow: isolated", self.url, state.name)
                state.isolated = True
            except tango.DevFailed as exc:
                self._down(state, f"read failed: {_describe(exc)}")
            else:
                state.proven = True
                self._take(state, result)

        await asyncio.gather(*(one(s) for s in states))

    def _isolate(self, state: AttrState) -> None:
        state.task = asyncio.create_task(
            self._isolated_loop(state), name=f"slow {self.url}/{state.name}"
        )

    async def _isolated_loop(self, state: AttrState) -> None:
        """Read one slow attribute on its own proxy and timeout."""
        proxy = await self._blocking(self._new_proxy)
        proxy.set_timeout_millis(int(self.settings.slow_timeout * 1000))
        first = True
        while True:
            if first or state.events is not Events.LIVE:
                try:
                    result = await asyncio.wait_for(
                        proxy.read_attribute(self.names[state.name]),
                        self.settings.slow_timeout + 1,
                    )
                except (TimeoutError, tango.DevFailed) as exc:
                    self._down(state, f"read failed: {_describe(exc)}")
                else:
                    self._take(state, result)
                first = False
            await asyncio.sleep(self.settings.poll_period)

    def _take(self, state: AttrState, result: tango.DeviceAttribute) -> None:
        if self.attrs.get(state.name) is not state:
            return  # released while the read ran
        if result.has_failed:
            errors = result.get_err_stack()
            text = f"{errors[0].reason}: {errors[0].desc.strip()}" if errors else "?"
            self._down(state, f"read failed: {text}")
            return
        self._publish(state, reading(result), polled=True)

    # -- publishing -------------------------------------------------------------------------

    def _publish(self, state: AttrState, value: Reading, *, polled: bool) -> None:
        last = state.last
        if last is not None:
            if value.t < last.t:
                return  # an older sample (a read overtaken by an event)
            if polled and value.sev == last.sev and _same(value.v, last.v):
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

    def _new_proxy(self) -> Any:
        """A DeviceProxy in asyncio mode, created under the process-wide lock
        (runs in a thread): concurrent creation is left out of cppTango's way."""
        with self.subscriptions:
            proxy = tango.DeviceProxy(self.url)
        proxy.set_green_mode(tango.GreenMode.Asyncio)
        return proxy

    async def _blocking(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
