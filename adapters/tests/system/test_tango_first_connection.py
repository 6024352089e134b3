"""A put or command to a device seen for the first time, on a host that never
answers: bounded by the request's timeout, no read held up, threads bounded."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from tango_support import CollectingSink, SimServer, start_sim, started_source

from synoptic_adapters.tango.proxies import PROXY_THREADS
from synoptic_adapters.tango.source import TangoSource
from synoptic_schemas import PutError, parse_channel

pytestmark = pytest.mark.system

TIMEOUT = 1.0


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    server = start_sim(rate=10.0, devices=2)
    try:
        yield server
    finally:
        server.proc.stop()


@pytest.fixture
async def source(sim: SimServer) -> AsyncIterator[tuple[TangoSource, CollectingSink]]:
    sink = CollectingSink()
    src = await started_source(sim.settings(poll_period=0.3), sink)
    try:
        yield src, sink
    finally:
        await src.stop()


@pytest.fixture
async def silent_port() -> AsyncIterator[int]:
    """A loopback TCP listener that accepts and never answers (a Tango
    database host as one that drops packets looks to a client)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in held:
            writer.close()


def proxy_threads() -> int:
    return sum(t.name.startswith("tango-proxy") for t in threading.enumerate())


async def test_requests_to_a_silent_host_end_in_time_while_others_go_on(
    sim: SimServer, source: tuple[TangoSource, CollectingSink], silent_port: int
) -> None:
    src, sink = source
    live = sim.channel("double")
    await src.monitor([live])
    await sink.wait(lambda: len(sink.of(live)) >= 2, 20)
    silent = [
        parse_channel(f"tango://127.0.0.1:{silent_port}/sim/silent/{i}/double")
        for i in range(4)
    ]
    init = parse_channel(f"tango://127.0.0.1:{silent_port}/sim/silent/0/Init")

    started = time.monotonic()
    seen = len(sink.of(live))
    waiting = [asyncio.create_task(src.put(c, 1.0, TIMEOUT)) for c in silent]
    waiting.append(asyncio.create_task(src.command(init, None, TIMEOUT)))
    # another device, not monitored: its first connection is not queued behind
    other = await src.put(sim.channel("double", device=2), 2.5, 5)
    assert other["ok"] is True, other
    replies = await asyncio.gather(*waiting)
    elapsed = time.monotonic() - started
    for reply in replies:
        assert reply["ok"] is False and reply["err"] == PutError.TIMEOUT, reply
    assert elapsed < TIMEOUT + 1.0, elapsed
    assert len(sink.of(live)) > seen  # values kept arriving meanwhile

    # the creations still hang (omniORB gives up after 9 s through a database):
    # asking again waits for the same ones, no thread more, and ends in time
    threads = proxy_threads()
    assert threads <= PROXY_THREADS
    started = time.monotonic()
    again = await asyncio.gather(*(src.put(c, 1.0, TIMEOUT) for c in silent))
    assert time.monotonic() - started < TIMEOUT + 1.0
    assert all(r["err"] == PutError.TIMEOUT for r in again), again
    assert proxy_threads() == threads
    seen = len(sink.of(live))
    await sink.wait(lambda: len(sink.of(live)) >= seen + 3)


async def test_a_device_that_hangs_delays_only_its_own_monitoring(
    sim: SimServer, source: tuple[TangoSource, CollectingSink], silent_port: int
) -> None:
    """Monitoring a device on a silent host and a real device at once: the real
    one's values flow at once; the silent one is published disconnected with
    its reason and retried."""
    src, sink = source
    silent = parse_channel(f"tango://127.0.0.1:{silent_port}/sim/hang/1/double")
    live = sim.channel("double", device=2)
    started = time.monotonic()
    await src.monitor([silent, live])  # the silent device's link starts first
    await sink.wait(lambda: sink.of(live), 20)
    first_value = time.monotonic() - started
    await sink.wait(lambda: sink.of(silent, "disconnected"), 20)
    waiting = sink.of(silent, "disconnected")[0]
    assert waiting.st.startswith("never connected: no answer within"), waiting.st
    # the creation itself ends when omniORB gives up: a retry reports its reason
    await sink.wait(lambda: len(sink.of(silent, "disconnected")) >= 2, 30)
    gave_up = sink.of(silent, "disconnected")[1]
    hang = gave_up.at - started
    assert gave_up.st.startswith("never connected: "), gave_up.st
    assert hang >= 3.0, hang
    assert first_value < 2.0, (first_value, hang)
    assert not sink.of(silent)
    seen = len(sink.of(live))
    await sink.wait(lambda: len(sink.of(live)) >= seen + 3)
    print(f"first value {first_value:.2f} s, hang {hang:.2f} s: {gave_up.st}")
