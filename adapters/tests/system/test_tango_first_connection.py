"""A put or command to a device seen for the first time, on a host that never
answers: bounded by the request's timeout, no read held up, threads bounded.
Monitoring devices on such hosts beside live ones: the live ones' values come at
once, the silent ones are said to be away and retried."""

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


async def test_devices_on_a_silent_host_delay_no_other_device(
    sim: SimServer, source: tuple[TangoSource, CollectingSink], silent_port: int
) -> None:
    """Three devices on a host that accepts and never answers (device servers
    without a database, and one through a silent database), monitored with two
    live devices: the live ones' first values come at once; each silent one is
    published "never connected" with why, and retried."""
    src, sink = source
    silent = [
        parse_channel(f"tango://127.0.0.1:{silent_port}/sim/hang/{i}/double#dbase=no")
        for i in range(2)
    ] + [parse_channel(f"tango://127.0.0.1:{silent_port}/sim/hang/db/double")]
    live = [sim.channel("double"), sim.channel("long", device=2)]
    started = time.monotonic()
    await src.monitor([*silent, *live])  # the silent devices' links start first
    await sink.wait(lambda: all(sink.of(c) for c in live), 20)
    first_values = time.monotonic() - started
    for channel in silent:
        await sink.wait(lambda c=channel: sink.of(c, "disconnected"), 20)
        said = sink.of(channel, "disconnected")[0].st
        assert said.startswith("never connected: "), said
        assert not sink.of(channel)
    assert first_values < 3.0, first_values
    # retried: the creation in flight is taken up, then omniORB's reason said
    await sink.wait(
        lambda: all(len(sink.of(c, "disconnected")) >= 2 for c in silent), 40
    )
    seen = [len(sink.of(c)) for c in live]
    await sink.wait(
        lambda: all(len(sink.of(c)) > n for c, n in zip(live, seen, strict=True))
    )
    print(f"live devices' first values after {first_values:.2f} s")
