"""An attribute Tango polls whose subscription failed before its first event (an
error event, or a failed first read of the polling buffer, as a device server
that answers late on a busy machine gives) is read by the device's read lane
until its first event comes: it never waits for cppTango's own resubscription,
a minute or more later. The device link and its read lane are the adapter's;
only the device's answers are stood in for (a call that times out, then values),
the real device server cases being in ``tests/system``."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest
import tango

from synoptic_adapters.tango.attr import AttrState, Events
from synoptic_adapters.tango.convert import Reading
from synoptic_adapters.tango.device import DeviceLink
from synoptic_adapters.tango.events import EventItem
from synoptic_adapters.tango.reads import Reads
from synoptic_adapters.tango.settings import TangoSettings
from synoptic_schemas import parse_channel

URL = "tango://127.0.0.1:10000/sim/test/7#dbase=no"


class Sink:
    """What the link publishes, by channel URI."""

    def __init__(self) -> None:
        self.values: dict[str, list[Any]] = {}
        self.published = asyncio.Event()

    def value(self, channel: Any, v: Any, **_: Any) -> None:
        self.values.setdefault(channel.uri, []).append(v)
        self.published.set()

    def meta(self, channel: Any, meta: Any) -> None:
        pass

    def disconnected(self, channel: Any, reason: str) -> None:
        self.values.setdefault(channel.uri, []).append(("disconnected", reason))


class Device:
    """A device's answers to reads of its polling buffer: a timeout while
    ``failing``, then the value ``level``."""

    def __init__(self) -> None:
        self.failing = True
        self.level = 1.5
        self.reads = 0

    async def read_attributes(self, names: list[str]) -> list[Any]:
        self.reads += 1
        if self.failing:
            error = tango.DevError()
            error.reason = "API_CorbaException"
            error.desc = "TRANSIENT CORBA system exception: TRANSIENT_CallTimedout"
            raise tango.DevFailed(error)
        now = time.time()
        return [
            SimpleNamespace(
                has_failed=False, value=self.level, type=tango.CmdArgType.DevDouble,
                data_format=tango.AttrDataFormat.SCALAR,
                quality=tango.AttrQuality.ATTR_VALID,
                time=SimpleNamespace(tv_sec=int(now), tv_usec=int(now % 1 * 1e6)),
            )
            for _ in names
        ]  # fmt: skip


def link_with(device: Device, sink: Sink) -> tuple[DeviceLink, AttrState]:
    settings = TangoSettings(poll_period=0.05, confirm_period=0.05)
    link = DeviceLink(
        URL, sink, settings, inbox=None, pool=None, proxies=None,  # type: ignore[arg-type]
        subscriptions=None, unsubscriber=None, background=None,  # type: ignore[arg-type]
    )  # fmt: skip
    channel = parse_channel("tango://127.0.0.1:10000/sim/test/7/double")
    state = AttrState(channel, "double", link=link)
    link.attrs["double"] = state
    link.names = {"double": "double"}
    link.polled = {"double": 0.1}  # Tango polls it: first values come by events
    link.proxy = device
    link.up = True
    state.exists = True
    state.events = Events.PENDING
    link.reads = Reads(link, link.device_time)
    return link, state


async def until(sink: Sink, condition: Any, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds, checked at each value published."""
    async with asyncio.timeout(timeout):
        while not condition():
            sink.published.clear()
            await sink.published.wait()


@pytest.mark.parametrize("failure", ["error event", "first read"])
async def test_a_subscription_that_failed_first_is_read_until_its_first_event(
    failure: str,
) -> None:
    device, sink = Device(), Sink()
    link, state = link_with(device, sink)
    uri = state.channel.uri
    assert link.awaits_subscription(state) and not link.polls(state)
    assert link.reads is not None
    if failure == "error event":
        error = "API_CorbaException: TRANSIENT_CallTimedout"
        link.handle(EventItem(state, state.generation, "error", error))
        assert sink.values[uri] == [None]  # invalid, saying why
    else:
        await link.reads.first_reads([state])  # times out: nothing published
        assert uri not in sink.values
    assert state.unconfirmed and link.polls(state)
    assert not link.awaits_subscription(state)  # the lane does not wait for it
    device.failing = False
    lane = asyncio.create_task(link.reads.run())
    try:
        await until(sink, lambda: 1.5 in sink.values.get(uri, []))
        # its first event: the lane stops reading it
        event = Reading(2.5, time.time_ns(), 0, "")
        link.handle(EventItem(state, state.generation, "value", event))
        assert state.events is Events.LIVE and not state.unconfirmed
        assert not link.polls(state)
        reads = device.reads
        device.level = 3.5
        await asyncio.sleep(0.3)  # six of the lane's periods: nothing to await
        assert device.reads == reads
        assert sink.values[uri][-1] == 2.5
    finally:
        lane.cancel()
        await asyncio.gather(lane, return_exceptions=True)


async def test_a_confirmed_subscription_is_never_read_by_the_lane() -> None:
    device, sink = Device(), Sink()
    device.failing = False
    link, state = link_with(device, sink)
    assert link.reads is not None
    await link.reads.first_reads([state])  # the one read of its polling buffer
    assert sink.values[state.channel.uri] == [1.5]
    link.handle(EventItem(state, state.generation, "live"))  # data-less confirmation
    event = Reading(2.5, time.time_ns(), 0, "")
    link.handle(EventItem(state, state.generation, "value", event))
    assert not state.unconfirmed and not link.polls(state)
