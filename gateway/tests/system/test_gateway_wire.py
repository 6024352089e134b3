"""The gateway's NATS protocol reader (:mod:`synoptic_gateway.wire`) against a real
nats-server: live messages of any size and content reach their handlers intact
and in order, whatever else shares the connection (nats-py subscriptions, headers,
requests, pings), and a long burst lets the event loop run while it is read."""

from __future__ import annotations

import asyncio
import time

from nats.aio.msg import Msg

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.bus import Bus
from synoptic_gateway.wire import FastParser


async def _nothing() -> None:
    return None


async def _bus(nats_server: NatsServer) -> Bus:
    bus = Bus(nats_server.url, "cs", "wire-test", _nothing, _nothing)
    bus.start()
    await bus.wait_connected(10)
    assert isinstance(bus.nc._ps.parse.__self__, FastParser)
    return bus


def _payloads() -> list[bytes]:
    """Sizes around nats-py's 32 KiB reads, empty ones, and protocol look-alikes."""
    tricky = b"\r\nMSG cs.val.x 1 5\r\nhello\r\nPING\r\nHMSG a 1 2 3\r\n"
    out = [b"", b"x", tricky, bytes(range(256)) * 200, b"\r\n" * 40_000]
    out += [bytes([i % 251]) * (i * 997 % 70_000) for i in range(60)]
    return out


async def test_live_messages_arrive_intact_beside_nats_py_traffic(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    bus = await _bus(nats_server)
    try:
        got: dict[str, list[bytes]] = {"a": [], "b": []}
        await bus.subscribe("wire.a.>", lambda s, d: got["a"].append(s + b"|" + d))
        await bus.subscribe("wire.b", lambda s, d: got["b"].append(d))
        plain: list[Msg] = []
        done = asyncio.Event()

        async def on_plain(msg: Msg) -> None:
            plain.append(msg)
            if len(plain) == 20:
                done.set()

        await bus.nc.subscribe("wire.plain", cb=on_plain)

        async def echo(msg: Msg) -> None:
            await msg.respond(b"re:" + msg.data)

        await nc.subscribe("wire.echo", cb=echo)
        await bus.flush()
        await nc.flush()
        payloads = _payloads()
        for round_ in range(3):
            for i, payload in enumerate(payloads):
                await nc.publish(f"wire.a.{round_}.{i}", payload)
                await nc.publish("wire.b", payload)
                if i % 9 == 0:  # interleaved: headers (HMSG) and a reply subject
                    await nc.publish(
                        "wire.plain", payload[:50], headers={"K": f"{round_}-{i}"}
                    )
            reply = await bus.request("wire.echo", b"%d" % round_, timeout=5)
            assert reply.data == b"re:%d" % round_
        await nc.flush()
        await asyncio.wait_for(done.wait(), 10)
        await bus.flush()  # a PING/PONG round trip through the reader
        expected_a = [
            f"wire.a.{r}.{i}".encode() + b"|" + p
            for r in range(3)
            for i, p in enumerate(payloads)
        ]
        assert got["a"] == expected_a
        assert got["b"] == payloads * 3
        assert [m.headers for m in plain][:2] == [{"K": "0-0"}, {"K": "0-9"}]
        assert [m.data for m in plain][:2] == [payloads[0][:50], payloads[9][:50]]
    finally:
        await bus.close()


async def test_a_long_burst_lets_the_loop_run_while_it_is_read(
    nats_server: NatsServer,
) -> None:
    bus = await _bus(nats_server)
    try:
        total = 40_000
        received = 0

        def on_msg(subject: bytes, data: bytes) -> None:
            nonlocal received
            received += 1

        sid = await bus.subscribe("wire.burst", on_msg)
        await bus.flush()
        seen_by_ticker: list[int] = []
        running = True

        async def ticker() -> None:
            while running:
                seen_by_ticker.append(received)
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        # a burst as one read (as when the socket holds more than the gateway has
        # parsed so far), handed to the connection's reader
        message = b"MSG wire.burst %d 40\r\n" % sid + b"v" * 40 + b"\r\n"
        await bus.nc._ps.parse(message * total)
        running = False
        await task
        assert received == total
        during = [n for n in seen_by_ticker if 0 < n < total]
        assert during, "the loop never ran between the first and the last message"
    finally:
        await bus.close()


async def test_a_large_payload_in_many_reads_costs_linear_time(
    nats_server: NatsServer,
) -> None:
    """A detector image (MiBs) arrives in many small reads: each read is only
    appended until the message is whole, then parsed once. (Re-parsing the whole
    buffer on every read copied it each time: quadratic, ~130 MB of copies per
    2 MiB image in 32 KiB reads, a third of a core at 10 images/s.)"""
    bus = await _bus(nats_server)
    try:
        got: list[bytes] = []
        sid = await bus.subscribe("wire.big", lambda s, d: got.append(d))
        big = bytes(range(256)) * (8 * 4096 + 3)  # 8 MiB and 768 bytes
        small = b"tail\r\nMSG x"
        stream = (
            b"MSG wire.big %d %d\r\n" % (sid, len(big)) + big + b"\r\n"
            + b"MSG wire.big %d %d\r\n" % (sid, len(small)) + small + b"\r\n"
        )  # fmt: skip
        reads = [stream[i : i + 4096] for i in range(0, len(stream), 4096)]
        parse = bus.nc._ps.parse
        cpu: list[float] = []
        for _ in range(3):
            began = time.thread_time()
            for read in reads:
                await parse(read)
            cpu.append(time.thread_time() - began)
        assert got == [big, small] * 3
        assert not bus.nc._ps.buf
        # 2049 reads: linear, under 10 ms of CPU; re-parsing every read took 0.3 s
        assert min(cpu) < 0.1, cpu
    finally:
        await bus.close()
