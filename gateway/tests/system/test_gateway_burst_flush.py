"""A burst's last updates leave once the burst is read, not at the end of the
group's batch window, however NATS splits the burst into reads; a burst lasts
until one window has passed since its last full batch (ADR 0013, amendments of
2026-11-23 and 2026-11-25)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, Subscription
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

pytestmark = pytest.mark.system

#: A batch window far longer than a burst takes to arrive, even on a loaded
#: machine: what waits for it is seen (a source's liveness runs out after ~3.1 s
#: without heartbeats, which would flush the group too).
WINDOW_S = 3.0
#: Well under the window: the rest of a burst that waited for it would take longer.
RESTED_S = 1.5
BATCH_MAX = 100


@pytest.fixture(scope="module")
def slow_window_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gw = start_gateway(
        nats_server.url,
        "--batch-ms", str(WINDOW_S * 1000), "--batch-max", str(BATCH_MAX),
    )  # fmt: skip
    try:
        yield gw
    finally:
        gw.stop()


async def _burst(
    publisher: Publisher, nc: NatsClient, sub: Subscription, uris: list[str]
) -> float:
    """Publish one update of each of ``uris`` at once; seconds until the client
    holds the last of them."""
    sent = time.monotonic()
    for uri in uris:
        await publisher.value(uri)
    await nc.flush()
    last_uri = uris[-1]
    last = publisher.seq[last_uri]
    await sub.wait_for(
        lambda s: (s.value(last_uri) or {}).get("seq") == last, timeout=4 * WINDOW_S
    )
    return time.monotonic() - sent


async def _quiet_window(publisher: Publisher) -> None:
    """Let more than a batch window pass with no update (the burst is over), the
    source still beating (a liveness change would flush the group itself)."""
    for _ in range(3):
        await publisher.heartbeat()
        await asyncio.sleep(WINDOW_S / 2.5)  # a condition of the case, not a sync


async def test_the_rest_of_a_burst_does_not_wait_for_the_window(
    slow_window_gateway: GatewayProc,
    publisher: Publisher,
    names: list[str],
    nc: NatsClient,
) -> None:
    channels = names[:200]
    frames: list[int] = []
    async with GatewayClient(slow_window_gateway.ws_url) as client:
        sub = await client.subscribe(
            channels, on_update=lambda s, indexes, values: frames.append(len(indexes))
        )
        for burst in range(3):
            if burst:
                await _quiet_window(publisher)  # each a burst of its own
            else:
                await publisher.heartbeat()  # a live source (no src frame)
            frames.clear()
            # 250 updates at once: full batches of 100, then the rest
            took = await _burst(publisher, nc, sub, channels + channels[:50])
            # before: the rest waited for the window (or a liveness check)
            assert took < RESTED_S, f"burst {burst}: the rest took {took:.1f} s"
            assert sum(frames) == 250
            # not a frame per update or per read either: full batches, the rest
            assert len(frames) <= 6, f"burst {burst}: frames of {frames}"
            assert max(frames) == BATCH_MAX, f"burst {burst}: frames of {frames}"


async def test_a_burst_read_in_two_parts_does_not_hold_its_second_part(
    slow_window_gateway: GatewayProc,
    publisher: Publisher,
    names: list[str],
    nc: NatsClient,
) -> None:
    """The reader found nothing new for a while inside a burst (the second part
    is sent only once the client holds all of the first): the second part,
    shorter than a batch, still leaves once read, within the burst's window."""
    channels = names[:200]
    frames: list[int] = []
    async with GatewayClient(slow_window_gateway.ws_url) as client:
        sub = await client.subscribe(
            channels, on_update=lambda s, indexes, values: frames.append(len(indexes))
        )
        await publisher.heartbeat()
        # 250: at least one full batch, however the reads split it (an idle
        # group's first read leaves at once, and it holds fewer than 100)
        assert await _burst(publisher, nc, sub, channels + channels[:50]) < RESTED_S
        assert sum(frames) == 250 and max(frames) == BATCH_MAX, frames
        frames.clear()
        # before: these waited for the window (the burst had ended at the pause)
        took = await _burst(publisher, nc, sub, channels[50:80])
        assert took < RESTED_S, f"the burst's second part took {took:.1f} s"
        assert sum(frames) == 30
