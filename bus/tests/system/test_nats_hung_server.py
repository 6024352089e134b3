"""``synoptic_bus.connect`` against a real nats-server that hangs."""

from __future__ import annotations

import asyncio
import signal
import time

from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer


async def test_a_hung_server_is_left_after_unanswered_pings_and_rejoined_when_it_wakes() -> (
    None
):
    """A SIGSTOPped server answers no PING: the client drops the connection within
    ``ping_interval × (max_outstanding_pings + 1)`` plus slack, instead of waiting for
    the kernel (minutes), and reconnects once the server runs again."""
    lost, back = asyncio.Event(), asyncio.Event()

    async def on_disconnect() -> None:
        lost.set()

    async def on_reconnect() -> None:
        back.set()

    with NatsServer(name="hung") as server:
        nc = await connect(server.url, name="test-hung", ping_interval=0.25,
                           max_outstanding_pings=2, on_disconnect=on_disconnect,
                           on_reconnect=on_reconnect)  # fmt: skip
        try:
            assert server.process is not None
            stopped_at = time.monotonic()
            server.process.signal(signal.SIGSTOP)
            try:
                await asyncio.wait_for(lost.wait(), 5.0)
                detected_s = time.monotonic() - stopped_at
            finally:
                server.process.signal(signal.SIGCONT)
            assert detected_s <= 0.25 * 3 + 1.5, detected_s
            await asyncio.wait_for(back.wait(), 10.0)
            await nc.publish("probe", b"x")
            await nc.flush(timeout=5)
        finally:
            await nc.close()
