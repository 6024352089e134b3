"""The Tango :class:`~synoptic_adapters.source.Source`: channels grouped by device.

``tango://HOST:PORT/domain/family/member/attribute`` channels are grouped into one
:class:`DeviceLink` per device; HOST:PORT is a Tango database, or a device server
without one when listed in ``no_database_hosts``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tango
import tango.asyncio
from tango import asyncio_executor

from synoptic_adapters.source import ChannelSink
from synoptic_adapters.tango.commands import argument, output
from synoptic_adapters.tango.convert import metadata
from synoptic_adapters.tango.device import DeviceLink
from synoptic_adapters.tango.events import EventInbox, EventItem
from synoptic_adapters.tango.memory import BusMemory, Memory, NoMemory
from synoptic_adapters.tango.proxies import ProxyMaker, keep
from synoptic_adapters.tango.settings import TangoSettings
from synoptic_adapters.tango.unsubscriber import Unsubscriber
from synoptic_adapters.tango.writes import WriteTypeError, coerce, failure
from synoptic_schemas import SCHEMA_VERSION, Channel, PutError
from synoptic_schemas.messages import CmdReplyMsg, PutReplyMsg

#: omniORB opens at most this many connections to one server per client process
#: (default 5); slow reads hold one each, so allow more.
ORB_CONNECTIONS = "32"
#: Events cppTango's ZeroMQ socket may hold before it drops (default 1000, i.e.
#: 50 ms at 20 000 events/s). Event delivery stalls while cppTango subscribes,
#: and a drop there is a lost change: hold ~1 s at the target rate. Not more: a
#: backlog of many seconds delays Tango's own heartbeat events too, cppTango then
#: declares the event channels dead and resubscribes everything (seen with
#: 200 000: 4000 attributes fell to ~700 events/s).
EVENT_BUFFER_HWM = "20000"
#: Seconds ``stop`` waits for devices to unsubscribe.
STOP_TIMEOUT = 5.0

log = logging.getLogger(__name__)


def _reply(ok: bool, err: str | None = None, msg: str | None = None) -> Any:
    """A put (or command) reply without output."""
    reply: dict[str, Any] = {"ver": SCHEMA_VERSION, "ok": ok}
    if err is not None:
        reply["err"] = err
    if msg is not None:
        reply["msg"] = msg
    return reply


class TangoSource:
    """Tango attributes as bus channels (see :mod:`synoptic_adapters.tango.device`
    for what is guaranteed per device)."""

    proto = "tango"

    def __init__(self, settings: TangoSettings | None = None) -> None:
        self.settings = settings or TangoSettings()
        self.links: dict[str, DeviceLink] = {}
        self._sink: ChannelSink | None = None
        self._inbox: EventInbox | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._write_proxies: dict[str, Any] = {}
        #: every DeviceProxy, monitoring's and writes', made on threads of its own
        #: (:mod:`synoptic_adapters.tango.proxies`)
        self._proxies: ProxyMaker | None = None
        self._subscriptions = threading.Lock()
        self.unsubscriber = Unsubscriber(self._subscriptions)
        self._background: asyncio.Lock | None = None
        #: what is learned about reading each attribute, kept on the bus
        self.memory: Memory = NoMemory()

    @property
    def events_received(self) -> int:
        """Event callbacks handled so far (all devices)."""
        return self._inbox.received if self._inbox else 0

    @property
    def events_dropped(self) -> int:
        """Value events dropped because the loop fell too far behind."""
        return self._inbox.dropped if self._inbox else 0

    def device_stats(self) -> dict[str, dict[str, float]]:
        """Figures per device (``host:port/domain/family/member``) for the
        metrics: time busy with our reads, attributes in backoff, events."""
        return {device: link.stats() for device, link in self.links.items()}

    async def start(self, sink: ChannelSink) -> None:
        """Prepare the thread pool and the event inbox."""
        os.environ.setdefault("ORBmaxGIOPConnectionPerServer", ORB_CONNECTIONS)
        os.environ.setdefault("TANGO_EVENT_BUFFER_HWM", EVENT_BUFFER_HWM)
        self._sink = sink
        self._pool = ThreadPoolExecutor(
            self.settings.threads, thread_name_prefix="tango"
        )
        # pytango's asyncio calls (proxy creation included) run on this loop and
        # pool; its default executor stays bound to the first loop it saw
        asyncio_executor.set_global_executor(
            asyncio_executor.AsyncioExecutor(asyncio.get_running_loop(), self._pool)
        )
        self._proxies = ProxyMaker()
        self._inbox = EventInbox(asyncio.get_running_loop(), self._dispatch)
        self._background = asyncio.Lock()
        # a sink on the bus (the publisher) lends its NATS connection
        nc = getattr(sink, "nc", None)
        if nc is not None and self.settings.memory_bucket:
            self.memory = await BusMemory.open(nc, self.settings.memory_bucket)

    def _dispatch(self, item: EventItem) -> None:
        item.target.link.handle(item)

    async def monitor(self, channels: Iterable[Channel]) -> None:
        """Monitor channels; returns at once, values follow on the sink."""
        assert self._sink and self._inbox and self._pool, "start() first"
        assert self._background is not None and self._proxies is not None
        by_device: dict[str, list[Channel]] = defaultdict(list)
        for channel in channels:
            by_device[channel.tango_device].append(channel)
        for device, members in by_device.items():
            link = self.links.get(device)
            if link is None:
                hostport, rest = device.split("/", 1)
                url = self.settings.device_url(hostport, rest)
                link = DeviceLink(
                    url, self._sink, self.settings, self._inbox, self._pool,
                    self._proxies, self._subscriptions, self.unsubscriber,
                    self._background, self.memory, device,
                )  # fmt: skip
                self.links[device] = link
                await link.add(members)
                link.start()
            else:
                await link.add(members)

    async def release(self, channels: Iterable[Channel]) -> None:
        """Stop monitoring channels; a device with none left is let go."""
        by_device: dict[str, list[Channel]] = defaultdict(list)
        for channel in channels:
            by_device[channel.tango_device].append(channel)
        for device, members in by_device.items():
            link = self.links.get(device)
            if link is None:
                continue
            await link.remove(members)
            if not link.attrs:
                del self.links[device]
                await link.close()

    async def put(self, channel: Channel, value: Any, timeout: float) -> PutReplyMsg:
        """Write with type conversion; DevFailed → ``failed`` (reason: description).
        The whole request, a first connection to the device included, is bounded
        by ``timeout``."""
        _, _, _, _, attribute = channel.tango_parts
        try:
            async with asyncio.timeout(timeout):
                proxy = await self._proxy_for(channel.tango_device)
                info = await proxy.get_attribute_config(attribute)
                meta = metadata(info)
                if not meta["w"]:
                    return _reply(False, PutError.ACCESS, f"{channel.uri} is read-only")
                try:
                    converted = coerce(value, meta)
                except WriteTypeError as exc:
                    return _reply(False, PutError.TYPE, str(exc))
                await proxy.write_attribute(attribute, converted)
        except tango.DevFailed as exc:
            code, text = failure(exc)
            return _reply(False, code, text)
        except TimeoutError:
            return _reply(False, PutError.TIMEOUT, f"no answer in {timeout:g} s")
        return _reply(True)

    async def command(self, channel: Channel, arg: Any, timeout: float) -> CmdReplyMsg:
        """Run the command ``channel`` names (device + command name) with ``arg``
        converted to its declared argument type (``None``: no argument), through
        the same proxies and thread pool as puts, the whole request (a first
        connection included) bounded by ``timeout``; reply with its output."""
        _, _, _, _, name = channel.tango_parts
        try:
            async with asyncio.timeout(timeout):
                proxy = await self._proxy_for(channel.tango_device)
                info = await proxy.get_command_config(name)
                try:
                    converted = argument(arg, info.in_type)
                except WriteTypeError as exc:
                    return _reply(False, PutError.TYPE, f"{info.cmd_name}: {exc}")
                call = (
                    proxy.command_inout(name)
                    if converted is None
                    else proxy.command_inout(name, converted)
                )
                result = await call
        except tango.DevFailed as exc:
            code, text = failure(exc)
            return _reply(False, code, text)
        except TimeoutError:
            return _reply(False, PutError.TIMEOUT, f"no answer in {timeout:g} s")
        reply = _reply(True)
        if result is not None:
            reply["v"] = output(result)
        return reply  # type: ignore[no-any-return]

    async def _proxy_for(self, device: str) -> Any:
        """The monitoring link's proxy, or one of our own, created once on the
        proxy threads. A caller that gives up (its timeout) leaves the creation
        running: the next request for the device takes the same one; a failure
        is retried by the next request."""
        link = self.links.get(device)
        if link is not None and link.up and link.proxy is not None:
            return link.proxy
        proxy = self._write_proxies.get(device)
        if proxy is None:
            assert self._proxies is not None, "start() first"
            hostport, rest = device.split("/", 1)
            url = self.settings.device_url(hostport, rest)
            proxy = await self._proxies.proxy(f"{url} write", url)
            self._write_proxies[device] = proxy
        return proxy

    async def stop(self) -> None:
        """Stop every device link (events still arriving are ignored)."""
        links, self.links = list(self.links.values()), {}
        # no unsubscription at stop: unsubscribing thousands of attributes while
        # their events still arrive crashed the process (SIGSEGV in cppTango, 5
        # of 15 runs of 4000 attributes); the process is about to exit anyway,
        # and events that still come are dropped by generation
        keep(*(p for link in links for p in (link.events_proxy, link.proxy)))
        closing = asyncio.gather(*(link.close(unsubscribe=False) for link in links))
        try:
            await asyncio.wait_for(closing, STOP_TIMEOUT)
        except TimeoutError:
            log.warning("Tango links did not close in %s s", STOP_TIMEOUT)
        await self.memory.close()  # what is pending, written now
        keep(*self._write_proxies.values())
        self._write_proxies.clear()
        self.unsubscriber.close()
        if self._proxies is not None:
            self._proxies.close()
        if self._pool:
            with contextlib.suppress(Exception):
                self._pool.shutdown(wait=False, cancel_futures=True)
