"""The in-flight budget against real loopback TCP sockets (times are given, so the
drain rate is exact; the kernel state is real)."""

from __future__ import annotations

import asyncio
import socket

from synoptic_gateway.inflight import GRACE, RATE_INTERVAL, InflightBudget

CHUNK = 64 * 1024
FLOOR = 16 * 1024


async def _pair(
    rcvbuf: int,
) -> tuple[asyncio.StreamWriter, socket.socket, socket.socket]:
    """A writer (an asyncio transport: the gateway's side) connected to a blocking
    reader socket with a small receive buffer (the peer)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    _, writer = await asyncio.open_connection(*listener.getsockname())
    peer, _ = await asyncio.to_thread(listener.accept)
    return writer, peer, listener


async def _read_exactly(peer: socket.socket, nbytes: int) -> None:
    def read() -> None:
        left = nbytes
        while left:
            left -= len(peer.recv(min(left, 1 << 20)))

    await asyncio.to_thread(read)


async def _settled(budget: InflightBudget, now: float) -> bool:
    """``over(now)`` once the last ACKs crossed loopback (a bounded wait)."""
    for _ in range(200):
        if not budget.over(now):
            return False
        await asyncio.sleep(0.005)
    return budget.over(now)


async def test_a_peer_that_reads_nothing_is_over_after_the_grace_and_not_once_drained() -> (
    None
):
    writer, peer, listener = await _pair(rcvbuf=4096)
    try:
        budget = InflightBudget(writer.transport, horizon=2.0, floor=FLOOR,
                                ceiling=1 << 20)  # fmt: skip
        assert budget.active
        assert not budget.over(0.0)  # first look: nothing in flight, rate sampled
        for _ in range(8):  # 512 KiB: more than the peer's buffers hold
            writer.write(b"x" * CHUNK)
            budget.wrote(CHUNK)
        t = RATE_INTERVAL
        assert not budget.over(t)  # over the budget, but not yet for GRACE
        assert budget.budget == FLOOR  # it took ~nothing in RATE_INTERVAL
        assert budget.over(t + GRACE + 0.01)
        await _read_exactly(peer, 8 * CHUNK)
        await writer.drain()
        assert not await _settled(budget, t + GRACE + 0.02)
    finally:
        writer.close()
        peer.close()
        listener.close()


async def test_the_budget_follows_the_peers_drain_rate() -> None:
    writer, peer, listener = await _pair(rcvbuf=1 << 20)
    try:
        budget = InflightBudget(writer.transport, horizon=2.0, floor=FLOOR,
                                ceiling=8 << 20)  # fmt: skip
        assert not budget.over(0.0)
        writer.write(b"y" * (4 * CHUNK))  # 256 KiB taken in one RATE_INTERVAL
        budget.wrote(4 * CHUNK)
        await writer.drain()
        await _read_exactly(peer, 4 * CHUNK)
        assert not await _settled(budget, RATE_INTERVAL)
        # ~1 MiB/s of drain rate x a 2 s horizon
        assert budget.budget == 2 * 4 * CHUNK / RATE_INTERVAL
    finally:
        writer.close()
        peer.close()
        listener.close()


async def test_a_non_tcp_transport_is_never_over() -> None:
    left, right = socket.socketpair()
    try:
        _reader, writer = await asyncio.open_unix_connection(sock=left)
        budget = InflightBudget(writer.transport, horizon=2.0, floor=1, ceiling=1)
        assert not budget.active
        budget.wrote(100)
        assert not budget.over(100.0)
        writer.close()
    finally:
        right.close()
