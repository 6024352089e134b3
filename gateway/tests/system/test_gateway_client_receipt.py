"""The Python client's receipt time: taken when a frame reaches the process, not
when the frame's turn to be decoded and handled comes."""

from __future__ import annotations

import time

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher

pytestmark = pytest.mark.system

BUSY_S = 0.03  # a slow callback: frames that arrive meanwhile queue behind it


async def test_received_ns_is_each_frames_arrival_not_its_turn(
    gateway: GatewayProc, publisher: Publisher, names: list[str], nc: NatsClient
) -> None:
    channels = names[:200]
    marks: list[tuple[int, int, int]] = []  # received_ns, callback start, end

    def on_update(sub, indexes, values) -> None:
        began = time.time_ns()
        while time.time_ns() - began < BUSY_S * 1e9:  # busy, as a slow consumer
            pass
        marks.append((sub.client.received_ns, began, time.time_ns()))

    async with GatewayClient(gateway.ws_url) as client:
        sub = await client.subscribe(channels, on_update=on_update)
        sent = time.time_ns()
        for _ in range(8):  # 1600 updates: several frames (batch window, batch_max)
            for uri in channels:
                await publisher.value(uri)
        await nc.flush()
        last = publisher.seq[channels[-1]]
        await sub.wait_for(
            lambda s: (s.value(channels[-1]) or {}).get("seq") == last, timeout=30
        )
    assert len(marks) >= 3, f"expected several frames, got {len(marks)}"
    for received, began, _ in marks:
        assert sent <= received <= began
    assert [m[0] for m in marks] == sorted(m[0] for m in marks)
    # frames that came while an earlier callback was busy keep their arrival
    # time (stamped before they waited their turn, were decoded or handled)
    queued = [k for k in range(1, len(marks)) if marks[k][0] < marks[k - 1][2]]
    assert queued, "every frame was stamped only when its turn came"
