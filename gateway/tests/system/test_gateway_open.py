"""Screen open and close: a closed screen's channels linger (subscribed, current)
for ``--linger`` seconds, so that re-opening it (a page reload) needs no store
read and closing it costs no unsubscribes on the way of the next open; after the
linger, subscriptions and channel state are released, and at most
``--linger-max`` channels linger at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

pytestmark = pytest.mark.system


async def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def _gauges(gateway: GatewayProc) -> tuple[float, float, float, float]:
    m = gateway.metrics()
    return (
        m["synoptic_gateway_connections"],
        m["synoptic_gateway_channels"],
        m["synoptic_gateway_nats_subscriptions"],
        m["synoptic_gateway_lingering_channels"],
    )


async def test_a_reopened_screen_reuses_lingering_channels_then_they_are_released(
    nats_server: NatsServer, publisher: Publisher, names: list[str], nc: NatsClient
) -> None:
    screen = names[:50]
    for uri in screen:
        await publisher.value(uri)
        await publisher.meta(uri)
    await nc.flush()
    gateway = start_gateway(nats_server.url, "--linger", "1.5")
    try:
        async with GatewayClient(gateway.ws_url) as first:
            await first.subscribe(screen)
        # closed: nobody watches, the channels linger with their subscriptions
        await _until(lambda: _gauges(gateway)[0] == 0)
        assert _gauges(gateway) == (0, 50, 50, 50)
        reads = gateway.metrics()["synoptic_gateway_snapshot_seconds_count"]
        await publisher.value(screen[0])  # changes while lingering: kept current
        await nc.flush()
        async with GatewayClient(gateway.ws_url) as again:
            sub = await again.subscribe(screen)
            assert sub.value(screen[0])["seq"] == 2
            assert all(sub.value(uri)["seq"] == 1 for uri in screen[1:])
            assert all(sub.meta(uri) is not None for uri in screen)
            assert gateway.metrics()["synoptic_gateway_snapshot_seconds_count"] == reads
            assert _gauges(gateway)[1:] == (50, 50, 0)  # taken back, not lingering
            await publisher.value(screen[1])
            await nc.flush()
            await sub.wait_for(lambda s: s.value(screen[1])["seq"] == 2)
        # one node: the barrier closes the snapshot window, no settle read
        assert gateway.metrics()["synoptic_gateway_settle_reads_total"] == 0
        # the linger ends: subscriptions and channel state are released
        await _until(lambda: _gauges(gateway) == (0, 0, 0, 0))
        received = gateway.metrics()["synoptic_gateway_updates_in_total"]
        for uri in screen:
            await publisher.value(uri)
        await nc.flush()
        async with GatewayClient(gateway.ws_url) as probe:  # a round trip later
            await probe.subscribe([names[60]])
        # none of the 50 reached the gateway: no NATS subscription is left
        assert gateway.metrics()["synoptic_gateway_updates_in_total"] == received
    finally:
        gateway.stop()


async def test_lingering_is_bounded_oldest_first(
    nats_server: NatsServer, publisher: Publisher, names: list[str], nc: NatsClient
) -> None:
    for uri in names[:50]:
        await publisher.value(uri)
        await publisher.meta(uri)
    await nc.flush()
    gateway = start_gateway(nats_server.url, "--linger", "60", "--linger-max", "20")
    try:
        async with GatewayClient(gateway.ws_url) as client:
            old = await client.subscribe(names[:30])
            await client.subscribe(names[30:50])
            await client.unsubscribe(old)  # 30 released: only 20 may linger
            await _until(lambda: _gauges(gateway)[3] == 20)
            assert _gauges(gateway) == (1, 40, 40, 20)
        await _until(lambda: _gauges(gateway)[0] == 0)
        # 50 released, 20 linger: the newest (names[30:50])
        assert _gauges(gateway) == (0, 20, 20, 20)
        async with GatewayClient(gateway.ws_url) as client:
            reads = gateway.metrics()["synoptic_gateway_snapshot_seconds_count"]
            await client.subscribe(names[30:50])
            assert gateway.metrics()["synoptic_gateway_snapshot_seconds_count"] == reads
    finally:
        gateway.stop()
