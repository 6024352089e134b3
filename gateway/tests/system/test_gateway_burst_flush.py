"""A burst's last updates leave once the burst is read, not at the end of the
group's batch window (ADR 0013, amendment of 2026-11-23)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

pytestmark = pytest.mark.system

WINDOW_S = 10.0  # a batch window far longer than any burst takes to arrive
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
            # a live source: no liveness change (whose src frame flushes first)
            await publisher.heartbeat()
            frames.clear()
            sent = time.monotonic()
            # 250 updates at once: full batches of 100, then 50 more (the rest)
            for uri in channels + channels[:50]:
                await publisher.value(uri)
            await nc.flush()
            last = publisher.seq[channels[49]]
            await sub.wait_for(
                lambda s, last=last: (s.value(channels[49]) or {}).get("seq") == last,
                timeout=2 * WINDOW_S,
            )
            took = time.monotonic() - sent
            # before: the last 50 waited for the window (10 s after a full batch;
            # 3-3.5 s here, when the source's one heartbeat ran out and the
            # liveness check flushed the group); now ~20 ms
            assert took < 1.5, f"burst {burst}: the rest took {took:.1f} s"
            assert sum(frames) == 250
            # not a frame per update either: full batches, then the rest
            assert len(frames) <= 6, f"burst {burst}: frames of {frames}"
            assert max(frames) == BATCH_MAX
