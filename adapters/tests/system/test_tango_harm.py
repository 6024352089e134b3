"""The Tango adapter does no harm to a standard device: a real device server in
Tango's default serialisation model (a slow read blocks the whole device, its
events included) with slow, timing-out and failing attributes, short timings."""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import tango
from tango_support import (
    CollectingSink,
    StandardServer,
    start_standard,
    started_source,
)

from synoptic_adapters.sim.tango_standard import BROKEN_DESC, BROKEN_REASON
from synoptic_adapters.tango.attr import Events
from synoptic_adapters.testing import eventually
from synoptic_bus.procs import Process
from synoptic_schemas import Channel

pytestmark = pytest.mark.system

EVENTS, RATE = 60, 5.0  # 300 events/s nominal
COUNTED = r"counted (\d+) at ([\d.]+)"


@pytest.fixture
def device(request: pytest.FixtureRequest) -> Iterator[StandardServer]:
    """A fresh device per test (a blocked device would carry over)."""
    options = getattr(request, "param", ())
    server = start_standard(
        "--events", str(EVENTS), "--rate", str(RATE), "--polled", "4", *options
    )
    try:
        yield server
    finally:
        server.proc.stop()


def names(server: StandardServer) -> list[str]:
    listed = tango.DeviceProxy(server.url).get_attribute_list()
    return [n for n in listed if n not in ("State", "Status")]


class ReadSpy:
    """A device link's proxy that passes every call on and notes the attribute
    names each of the adapter's reads asks for."""

    def __init__(self, proxy: Any) -> None:
        self._proxy = proxy
        self.names: list[str] = []

    def read_attribute(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.names.append(name.lower())
        return self._proxy.read_attribute(name, *args, **kwargs)

    def read_attributes(self, names: list[str], *args: Any, **kwargs: Any) -> Any:
        self.names.extend(n.lower() for n in names)
        return self._proxy.read_attributes(names, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proxy, name)


def hardware_reads(server: StandardServer, name: str) -> int:
    """Times the device's code read ``name`` (not from its polling buffer)."""
    return tango.DeviceProxy(server.url).command_inout("HardwareReads", name)


def count_now(counter: Process) -> tuple[int, float]:
    """The other client's next count line: (events so far, wall-clock time)."""
    match = counter.wait_for(COUNTED, timeout=10, since=counter.mark())
    return int(match[1]), float(match[2])


@pytest.mark.parametrize("device", [("--slow-s", "1.0", "--timeout-s", "4")],
                         indirect=True)  # fmt: skip
async def test_bad_attributes_say_what_they_are_and_harm_nobody(
    device: StandardServer,
) -> None:
    counter = Process(
        "counter",
        [sys.executable, "-m", "synoptic_adapters.sim.tango_counter", device.url],
    )
    sink = CollectingSink()
    source = await started_source(
        device.settings(read_timeout=1.5, slow_after=0.5, poll_period=0.5), sink
    )
    try:
        counter.wait_for("counter all valued", timeout=60)
        before = count_now(counter)
        await asyncio.sleep(2)
        after = count_now(counter)
        baseline = (after[0] - before[0]) / (after[1] - before[1])

        channels = {name: device.channel(name) for name in names(device)}
        events = [c for n, c in channels.items() if n.startswith("ev_")]
        healthy = [c for n, c in channels.items() if n.startswith("po_")]
        healthy.append(channels["cached"])
        slow, timeout, broken = (channels[n] for n in ("slow", "timeout", "broken"))
        assert len(events) == EVENTS and len(channels) == EVENTS + 4 + 4
        await source.monitor(channels.values())
        await sink.wait(
            lambda: (
                all(sink.last(c) for c in channels.values())
                and "busy" in sink.last(timeout).st
            ),
            timeout=40,
        )

        # first values of the event attributes never wait behind a slow read:
        # every one came before the first read of a slow attribute ended
        slow_seen = sink.first(slow).at
        assert max(sink.first(c).at for c in events) < slow_seen
        assert max(sink.first(c).at for c in healthy) < slow_seen  # fast ones first
        assert all(sink.first(c).sev == 0 for c in events + healthy)

        first_slow = sink.first(slow)
        assert first_slow.v is not None and first_slow.sev == 3
        assert re.fullmatch(
            r"read took [1-4]\.\d s \(slow: over 0.5 s\); next try in \d+ s",
            first_slow.st,
        ), first_slow.st
        statuses = [u.st for u in sink.of(timeout)]
        assert statuses[0].startswith("read timed out after 1.5 s; next try in ")
        assert re.fullmatch(
            r"read timed out after 1\.5 s \(the device was busy \d+\.\d s with it\); "
            r"next try in \d+ s",
            statuses[-1],
        ), statuses
        assert all(u.v is None and u.sev == 3 for u in sink.of(timeout))
        failed = sink.last(broken)
        assert failed.v is None and failed.sev == 3
        assert failed.st == f"read failed: {BROKEN_REASON}: {BROKEN_DESC}"
        # the device answers: nothing is reported disconnected or not responding
        assert not [u for u in sink.updates if u.kind == "disconnected"]
        (link,) = source.links.values()
        assert link.connects == 1
        assert link.attrs["slow"].strikes == link.attrs["timeout"].strikes == 1

        # backed off: the device is free again, for every client
        received = link.events_received
        start = count_now(counter)
        await asyncio.sleep(4)
        end = count_now(counter)
        other_rate = (end[0] - start[0]) / (end[1] - start[1])
        ours = (link.events_received - received) / (end[1] - start[1])
        assert other_rate >= 0.85 * baseline, (other_rate, baseline)
        assert ours >= 0.85 * baseline, (ours, baseline)
        stats = link.stats()
        assert stats["in_backoff"] == 2
        assert stats["events_expected_per_s"] == pytest.approx(EVENTS * RATE)
        assert 0 < stats["busy_fraction"] < 0.2
    finally:
        await source.stop()
        counter.stop()


@pytest.mark.parametrize(
    "device",
    [
        (
            "--slow-s",
            "0.4",
        )
    ],
    indirect=True,
)
async def test_backoff_grows_and_a_recovered_attribute_returns_to_its_period(
    device: StandardServer,
) -> None:
    sink = CollectingSink()
    settings = device.settings(
        slow_after=0.2, poll_period=0.2, busy_fraction=0.5, backoff_max=3.0
    )
    source = await started_source(settings, sink)
    slow, fast = device.channel("slow"), device.channel("po_00")
    try:
        await source.monitor([slow, fast])
        # waits: 2 x 0.4 / 0.5 = 1.6 s (more if the read took longer), then
        # 3.2 s capped at 3 s
        await sink.wait(lambda: len(sink.of(slow)) >= 3, timeout=30)
        tries = sink.of(slow)[:3]
        waits = [int(re.search(r"next try in (\d+) s$", u.st)[1]) for u in tries]
        assert waits[0] in (2, 3) and waits[1:] == [3, 3], [u.st for u in tries]
        assert all(u.sev == 3 and u.v is not None for u in tries)
        first_gap, second_gap = (b.at - a.at for a, b in itertools.pairwise(tries))
        assert first_gap >= 1.6 and second_gap >= 3.0, (first_gap, second_gap)
        fast_during = [u for u in sink.of(fast) if tries[0].at < u.at < tries[2].at]
        assert len(fast_during) >= 5  # the others keep their period meanwhile

        proxy = tango.DeviceProxy(device.url)
        await asyncio.to_thread(proxy.command_inout, "SetSlow", 0.0)
        await sink.wait(lambda: sink.last(slow).sev == 0, timeout=10)
        recovered = len(sink.of(slow))
        # read every 0.2 s again: each new value (its tick, once a second) comes
        await sink.wait(lambda: len(sink.of(slow)) >= recovered + 3, timeout=10)
        (link,) = source.links.values()
        assert link.attrs["slow"].strikes == 0
        assert sink.last(slow).st == "VALID"
    finally:
        await source.stop()


@pytest.mark.parametrize(
    "device",
    [
        (
            "--timeout-s",
            "3",
        )
    ],
    indirect=True,
)
async def test_a_busy_device_is_not_reconnected(device: StandardServer) -> None:
    """While our timed-out read still holds the device, pings that time out
    mean "busy"; the same pings with no read of ours pending mean "gone"."""
    sink = CollectingSink()
    settings = device.settings(read_timeout=0.5, ping_period=0.1, poll_period=0.2)
    source = await started_source(settings, sink)
    event, timeout = device.channel("ev_000"), device.channel("timeout")
    try:
        await source.monitor([event, timeout])
        (link,) = source.links.values()
        await eventually(lambda: link.reads is not None and link.reads.stall, 20)
        # from now on every ping times out (shorter than any round trip)
        link.settings = replace(link.settings, ping_timeout=1e-6)
        await eventually(lambda: link.busy_pings >= 3, timeout=10)
        assert link.reads is not None and link.reads.stall is not None
        assert link.connects == 1
        assert not sink.of(event, "disconnected")
        assert sink.last(timeout).v is None and sink.last(timeout).sev == 3
        assert re.fullmatch(
            r"read timed out after 0\.5 s \(the device is still busy with it: pings "
            r"time out\); next try in \d+ s",
            sink.last(timeout).st,
        ), sink.last(timeout).st
        started = time.monotonic()
        await eventually(lambda: link.connects >= 2 or link.reads is None, 20)
        assert time.monotonic() - started < 10
        assert link.reads is None or link.reads.stall is None
        # "not responding" only now, when pings fail with no read of ours pending
        down = sink.last(event, "disconnected")
        assert down is not None and down.st == "device server not responding"
    finally:
        await source.stop()


@pytest.mark.parametrize("device", [("--slow-s", "0.6", "--timeout-s", "2")],
                         indirect=True)  # fmt: skip
async def test_event_attributes_are_not_read_and_tango_polled_ones_come_from_its_buffer(
    device: StandardServer,
) -> None:
    """While their events arrive, the event attributes are never read; the one
    the device polls without events is read from its polling buffer: the
    device's code reads it only at Tango's 1 Hz polling, not at every read."""
    sink = CollectingSink()
    settings = device.settings(read_timeout=1.0, slow_after=0.3, poll_period=0.2)
    source = await started_source(settings, sink)
    try:
        await source.monitor(device.channel(n) for n in names(device))
        (link,) = source.links.values()
        events = [s for n, s in link.attrs.items() if n.startswith("ev_")]
        assert len(events) == EVENTS
        bad = [link.attrs["slow"], link.attrs["timeout"]]
        await eventually(
            lambda: (
                all(s.events is Events.LIVE and not s.confirm_read for s in events)
                and all(s.strikes for s in bad)
                and link.reads is not None
                and not link.reads.busy
            ),  # the bad ones backed off, the device free
            timeout=30,
        )
        spy = link.proxy = ReadSpy(link.proxy)
        received = link.events_received
        before = await asyncio.to_thread(hardware_reads, device, "cached")
        started = time.monotonic()
        await eventually(lambda: spy.names.count("cached") >= 10, timeout=30)
        after = await asyncio.to_thread(hardware_reads, device, "cached")
        took = time.monotonic() - started

        assert not [n for n in spy.names if n.startswith("ev_")], spy.names
        assert link.events_received > received + EVENTS  # events went on
        assert all(s.events is Events.LIVE for s in events)
        # the fast ones keep their period (time they spent queued behind the
        # timed-out read was not theirs)
        assert spy.names.count("po_00") >= 5, set(spy.names)
        assert after - before <= took * 1.0 + 2, (after - before, took)
        assert spy.names.count("cached") > after - before
    finally:
        await source.stop()


@pytest.mark.parametrize(
    "device",
    [
        (
            "--slow-s",
            "0.3",
        )
    ],
    indirect=True,
)
async def test_reads_keep_within_the_configured_share_of_the_device(
    device: StandardServer,
) -> None:
    """busy_fraction 5 %: once the bucket (5 % of 60 s) is spent, the slow
    attribute is read only as often as the budget pays for (0.3 s at 5 %: 6 s
    apart), though its backoff (at most 0.2 s) would read it twice a second; its
    status says when; the fast attribute keeps its period meanwhile."""
    sink = CollectingSink()
    settings = device.settings(
        slow_after=0.1, poll_period=0.2, busy_fraction=0.05, backoff_max=0.2
    )
    source = await started_source(settings, sink)
    began = time.monotonic()
    slow, fast = device.channel("slow"), device.channel("po_00")
    try:
        await source.monitor([slow, fast])
        (link,) = source.links.values()
        budget = link.device_time
        assert budget.capacity == pytest.approx(3.0)
        await eventually(lambda: not budget.allows(time.monotonic()), timeout=30)
        count = len(sink.of(slow))
        # the first read once the budget allows again, then the next one; the
        # device time our other reads took meanwhile (the fast group's: more on
        # a busy machine, where each read takes longer) delays the next one too
        await sink.wait(lambda: len(sink.of(slow)) >= count + 1, timeout=40)
        spent_before = budget.total
        await sink.wait(lambda: len(sink.of(slow)) >= count + 2, timeout=40)
        spent_others = budget.total - spent_before - link.attrs["slow"].cost
        first, second = sink.of(slow)[count : count + 2]
        said = int(re.search(r"next try in (\d+) s$", first.st)[1])
        gap = second.at - first.at
        assert gap >= 4.0, (gap, first.st)  # not 0.5 s: the budget holds it
        later = max(0.0, spent_others) / 0.05  # what the others' reads added
        assert said - 1.5 <= gap <= 1.5 * (said + later) + 2, (gap, later, first.st)
        assert first.sev == second.sev == 3
        ticks = [u for u in sink.of(fast) if first.at < u.at < second.at]
        assert len(ticks) >= gap - 2  # a new value each second, read every 0.2 s
        elapsed = time.monotonic() - began
        assert budget.total <= budget.capacity + 0.05 * elapsed + 0.5, (
            budget.total,
            elapsed,
        )
        assert link.stats()["in_backoff"] == 1
    finally:
        await source.stop()


@pytest.mark.parametrize("device", [("--slow-s", "1.0", "--timeout-s", "3")],
                         indirect=True)  # fmt: skip
async def test_after_a_reconnect_the_backed_off_attributes_are_read_last(
    device: StandardServer,
) -> None:
    """The device server restarts while `slow` and `timeout` are backed off (and
    due again by the time it is back): after the reconnection every event and
    healthy attribute has its value before either of them is read."""
    sink = CollectingSink()
    settings = device.settings(
        read_timeout=1.5, slow_after=0.5, poll_period=0.5, backoff_max=2.0,
        retry_period=0.5, ping_period=0.2,
    )  # fmt: skip
    source = await started_source(settings, sink)
    channels = {name: device.channel(name) for name in names(device)}
    fast = [c for n, c in channels.items() if n.startswith(("ev_", "po_"))]
    fast.append(channels["cached"])
    slow, timeout = channels["slow"], channels["timeout"]
    try:
        await source.monitor(channels.values())
        (link,) = source.links.values()
        await eventually(
            lambda: (
                link.attrs["slow"].strikes
                and link.attrs["timeout"].strikes
                and link.reads is not None
                and not link.reads.busy
            ),
            timeout=40,
        )
        assert await asyncio.to_thread(device.proc.stop) == 0
        await sink.wait(lambda: sink.last(fast[0], "disconnected"), timeout=10)
        # the device gone: "not responding" (then the reconnect attempts' reason)
        down = sink.of(fast[0], "disconnected")[0]
        assert down.st == "device server not responding"
        back = time.monotonic()  # every value from now on is the new connection's
        await asyncio.to_thread(device.restart)
        serving = time.monotonic()  # (a busy machine takes seconds to start it)
        await eventually(lambda: link.connects == 2, timeout=30)

        def since(channel: Channel) -> list[Any]:
            return [u for u in sink.of(channel) if u.at > back]

        await sink.wait(lambda: since(slow) and since(timeout), timeout=30)
        assert all(since(c) for c in fast), [c for c in fast if not since(c)]
        valued = max(since(c)[0].at for c in fast)
        assert valued - serving < 5.0
        assert since(slow)[0].at > valued and since(timeout)[0].at > valued
        assert since(slow)[0].st.startswith("read took 1.")
        assert all(since(c)[0].sev == 0 for c in fast)
    finally:
        await source.stop()
