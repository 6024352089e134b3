"""Stateless scale-out: two gateway processes serve identically; killing one moves
its clients to the other with a fresh snapshot; a hung (SIGSTOPped) one is found
by the client's pings and left the same way. NATS restarts: sockets stay, the
bus-down frame, then fresh snapshots."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, start_gateway

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def pair(nats_server: NatsServer) -> Iterator[tuple[GatewayProc, GatewayProc]]:
    first = start_gateway(nats_server.url)
    second = start_gateway(nats_server.url)
    yield first, second
    first.stop()
    second.stop()


async def test_two_gateways_serve_identically_and_failover_gets_a_fresh_snapshot(
    pair, publisher, names, nc: NatsClient
) -> None:
    gw1, gw2 = pair
    channels = names[:30]
    for uri in channels:
        await publisher.value(uri)
    await nc.flush()
    seen: list[list[tuple[int, int]]] = [[], []]

    def recorder(slot: int):
        def on_update(sub, indexes, values) -> None:
            seen[slot].extend(
                (i, v["seq"]) for i, v in zip(indexes, values, strict=True)
            )

        return on_update

    one = GatewayClient([gw1.ws_url], backoff_base=0.05)
    moving = GatewayClient([gw2.ws_url, gw1.ws_url], backoff_base=0.05, shuffle=False)
    await one.connect()
    await moving.connect()
    assert one.gateway_id != moving.gateway_id
    sub1 = await one.subscribe(channels, on_update=recorder(0))
    sub2 = await moving.subscribe(channels, on_update=recorder(1))
    assert sub1.channels == sub2.channels and sub1.values == sub2.values
    for _ in range(3):
        for uri in channels:
            await publisher.value(uri)
    await nc.flush()
    last = publisher.seq[channels[-1]]
    for sub in (sub1, sub2):
        await sub.wait_for(lambda s: s.value(channels[-1])["seq"] == last)
    assert sorted(seen[0]) == sorted(seen[1])  # the same updates from both

    gw2.proc.kill()  # a crash, not a shutdown
    await sub2.wait_snapshot(2, timeout=30)
    assert moving.url == gw1.ws_url and moving.gateway_id == gw1.gateway_id()
    assert moving.close_codes[0] in (1006, 1012, 4000)
    assert [v["seq"] for v in sub2.values] == [publisher.seq[u] for u in sub2.channels]
    await publisher.value(channels[0])
    await nc.flush()
    await sub2.wait_for(
        lambda s: s.value(channels[0])["seq"] == publisher.seq[channels[0]]
    )
    await one.close()
    await moving.close()


async def test_nats_restart_tells_clients_and_sends_fresh_snapshots(
    gateway, nats_server: NatsServer, publisher, names
) -> None:
    channels = names[:5]
    for uri in channels:
        await publisher.value(uri)
    bus_frames: list[bool] = []
    client = GatewayClient(
        gateway.ws_url,
        on_frame=lambda f: bus_frames.append(f["up"]) if f["op"] == "bus" else None,
    )
    await client.connect()
    sub = await client.subscribe(channels)
    assert gateway.get("/readyz")[0] == 200
    nats_server.restart()
    await sub.wait_snapshot(2, timeout=30)
    assert bus_frames == [False, True]
    assert client.connects == 1  # the socket stayed open throughout
    assert gateway.get("/readyz")[0] == 200
    await publisher.nc.flush(timeout=10)  # the test's own client has reconnected too
    await publisher.value(channels[0], 42.0)
    await sub.wait_for(lambda s: s.value(channels[0])["v"] == 42.0, timeout=15)
    await client.close()


async def test_subscriptions_while_the_bus_is_down_are_refused_and_roll_back(
    gateway, nats_server: NatsServer, names
) -> None:
    async with GatewayClient(gateway.ws_url) as client:
        nats_server.stop()
        try:
            await client.wait_for_bus(False, timeout=15)
            with pytest.raises(GatewayError) as info:
                await client.subscribe(names[:3])
            assert info.value.code == "unavailable"
            assert gateway.get("/readyz")[0] == 503
            assert gateway.metrics()["synoptic_gateway_nats_subscriptions"] == 0
            assert gateway.metrics()["synoptic_gateway_groups"] == 0
        finally:
            nats_server.start()
        await client.wait_for_bus(True, timeout=30)
        sub = await client.subscribe(names[:3])
        assert len(sub.channels) == 3


async def test_a_hung_gateway_is_detected_by_pings_and_left_for_another(
    gateway, nats_server: NatsServer, publisher, names, nc: NatsClient
) -> None:
    """SIGSTOP a gateway: its TCP connections stay open and nothing closes, only
    the client's application pings tell that it went silent."""
    channels = names[:5]
    for uri in channels:
        await publisher.value(uri)
    await nc.flush()
    hung = start_gateway(nats_server.url)
    pongs: list[dict] = []
    answered = asyncio.Event()

    def on_frame(frame: dict) -> None:
        if frame["op"] == "pong":
            pongs.append(frame)
            if len(pongs) >= 2:
                answered.set()

    client = GatewayClient(
        [hung.ws_url, gateway.ws_url],
        shuffle=False,
        backoff_base=0.05,
        ping_interval=0.5,
        ping_timeout=2.0,
        on_frame=on_frame,
    )
    try:
        await client.connect()
        assert client.url == hung.ws_url
        sub = await client.subscribe(channels)
        await asyncio.wait_for(answered.wait(), 15)  # a live gateway is kept
        assert client.hung_closes == 0 and client.connects == 1
        hung.proc.signal(signal.SIGSTOP)
        started = time.monotonic()
        await sub.wait_snapshot(2, timeout=30)
        detected = time.monotonic() - started
        assert client.hung_closes == 1
        assert client.url == gateway.ws_url
        assert client.gateway_id == gateway.gateway_id()
        assert detected < 2.0 + 0.5 + 10.0, detected  # timeout + interval + margin
        await publisher.value(channels[0])
        await nc.flush()
        await sub.wait_for(
            lambda s: s.value(channels[0])["seq"] == publisher.seq[channels[0]]
        )
    finally:
        await client.close()
        hung.proc.signal(signal.SIGCONT)
        hung.stop()
