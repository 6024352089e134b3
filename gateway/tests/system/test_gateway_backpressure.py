"""Back-pressure: a slow socket conflates and is told what it missed; a stalled
one is closed, and neither changes what the other sockets receive."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator

import numpy as np
import psutil
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.uri import parse_uri

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_schemas import frames

pytestmark = pytest.mark.system

HEAVY = np.zeros(16_384, dtype="<f8")  # 128 KiB per update


@pytest.fixture(scope="module")
def patient_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """Small mailbox, long stall limit: slow sockets conflate and catch up."""
    gw = start_gateway(
        nats_server.url, "--mailbox-frames", "8", "--stall-timeout", "60"
    )
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def strict_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """Stalled sockets are closed after 2 s."""
    gw = start_gateway(nats_server.url, "--mailbox-frames", "8", "--stall-timeout", "2")
    yield gw
    gw.stop()


async def _sluggish_socket(url: str) -> ClientConnection:
    """A WebSocket whose client reads nothing unless asked (tiny kernel buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    ws = await connect(url, sock=sock, max_queue=1, compression=None, max_size=None)
    assert frames.unpack(await ws.recv())["op"] == "hello"
    return ws


async def _pour(publisher: Publisher, uri: str, seconds: float, hz: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await publisher.value(uri, HEAVY)
        await asyncio.sleep(1 / hz)


async def test_slow_socket_conflates_then_gets_latest_values_and_stats(
    patient_gateway, publisher, names, nc: NatsClient
) -> None:
    heavy = names[0]
    ws = await _sluggish_socket(patient_gateway.ws_url)
    await ws.send(frames.pack(frames.sub(1, [heavy])))
    snap = frames.unpack(await ws.recv())
    async with asyncio.timeout(60):  # the client reads nothing until it is behind
        while not patient_gateway.metrics()["synoptic_gateway_conflating_sockets"]:
            await _pour(publisher, heavy, 0.5, 40)
    await _pour(publisher, heavy, 0.5, 40)  # and more while it conflates
    await nc.flush()
    last_seq = publisher.seq[heavy]
    seqs: list[int] = []
    stats = None
    unsolicited = 0
    async with asyncio.timeout(30):
        while stats is None or not seqs or seqs[-1] < last_seq:
            frame = frames.unpack(await ws.recv())
            if frame["op"] == "upd":
                seqs.extend(v["seq"] for v in frame["val"])
            elif frame["op"] == "snap" and frame["id"] is None:
                unsolicited += 1
                # a 128 KiB value is large: it follows in the next upd (more)
                assert frame["val"] == [None] and frame["more"] == [0]
            elif frame["op"] == "stats":
                stats = frame
    await ws.close()
    assert stats is not None and stats["sid"] == snap["sid"]
    assert stats["missed"] > 0 and stats["conflated"] == 1
    assert unsolicited >= 1
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # never older
    assert len(seqs) < last_seq  # it did skip values
    metrics = patient_gateway.metrics()
    assert metrics["synoptic_gateway_missed_total"] >= stats["missed"]


async def test_stalled_socket_among_50_changes_nothing_for_the_others(
    strict_gateway, publisher, names, nc: NatsClient
) -> None:
    shared, heavy = names[:20], names[20]
    received: list[tuple[float, float]] = []  # (receipt time, latency) of all
    gaps = 0
    last: dict[tuple[int, int], int] = {}

    def on_update(sub, indexes, values) -> None:
        nonlocal gaps
        now = time.time_ns()
        for i, v in zip(indexes, values, strict=True):
            key = (id(sub), i)
            if key in last and v["seq"] != last[key] + 1:
                gaps += 1
            last[key] = v["seq"]
            received.append((time.monotonic(), (now - v["t"]) / 1e9))

    for uri in shared:
        await publisher.value(uri)
    clients = [GatewayClient(strict_gateway.ws_url) for _ in range(49)]
    for client in clients:
        await client.connect()
        await client.subscribe(shared, on_update=on_update)
    gateway_proc = psutil.Process(strict_gateway.proc.pid)
    stop = asyncio.Event()

    async def tick() -> None:  # the shared screen at 10 Hz
        while not stop.is_set():
            for uri in shared:
                await publisher.value(uri)
            await asyncio.sleep(0.1)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(3)
    t_stall = time.monotonic()
    rss_before = gateway_proc.memory_info().rss
    stalled = await _sluggish_socket(strict_gateway.ws_url)
    await stalled.send(frames.pack(frames.sub(1, shared)))  # joins the shared group
    await stalled.send(frames.pack(frames.sub(2, [heavy])))
    await _pour(publisher, heavy, 3.0, 25)
    async with asyncio.timeout(60):  # until the gateway gives up on it
        while not strict_gateway.metrics()["synoptic_gateway_slow_closes_total"]:
            await _pour(publisher, heavy, 0.5, 25)
    rss_after = gateway_proc.memory_info().rss
    stop.set()
    await ticker
    for client in clients:
        await client.close()

    def p99(samples: list[float]) -> float:
        return float(np.percentile(samples, 99))

    before = [lat for t, lat in received if t < t_stall]
    during = [lat for t, lat in received if t >= t_stall]
    assert len(during) > 49 * 20 * 20  # the others kept receiving at 10 Hz
    assert gaps == 0
    assert p99(during) <= max(1.0, 2 * p99(before) + 0.25), (p99(before), p99(during))
    assert rss_after - rss_before < 64 * 1024 * 1024
    assert strict_gateway.metrics()["synoptic_gateway_slow_closes_total"] >= 1
    with pytest.raises(ConnectionClosed) as closed:  # drains, then sees the end
        async with asyncio.timeout(30):
            while True:
                await stalled.recv()
    assert closed.value.rcvd is None or closed.value.rcvd.code == 4001


async def test_slow_reader_gets_stats_and_no_stale_data_healthy_one_everything(
    gateway, publisher, names, nc: NatsClient
) -> None:
    """A socket that reads, but slower than data comes: the capped send buffer
    (``ws_send_buffer``) and the mailbox's age bound (``mailbox_age``) make it
    conflate and get ``stats``; it never reads a value older than ~5 s (10 s
    asserted) nor sees a gap between snapshots; a healthy socket on the same group
    gets every update."""
    uri = names[0]
    payload = np.zeros(2560, dtype="<f8")  # 20 KiB per update, ~1.2 MiB/s
    await publisher.value(uri, payload)
    healthy = GatewayClient(gateway.ws_url)
    await healthy.connect()
    seen: list[int] = []
    healthy_sub = await healthy.subscribe(
        [uri], on_update=lambda sub, i, vals: seen.extend(v["seq"] for v in vals)
    )
    first_seq = healthy_sub.values[0]["seq"]
    # a fixed receive buffer: Linux would let the client's grow to megabytes of
    # stale data, which no server can see (see docs/protocol.md, back-pressure)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", gateway.port))
    slow = await connect(
        gateway.ws_url, sock=sock, max_queue=1, compression=None, max_size=None
    )
    assert frames.unpack(await slow.recv())["op"] == "hello"
    await slow.send(frames.pack(frames.sub(1, [uri])))
    ages: list[float] = []
    stats: list[dict] = []
    gaps: list[tuple[int, int]] = []
    last_seq = 0
    done = asyncio.Event()

    async def read_slowly() -> None:  # ~25 frames/s of ~20 KiB: ~500 KiB/s
        nonlocal last_seq
        while not (done.is_set() and stats and last_seq >= publisher.seq[uri]):
            frame = frames.unpack(await slow.recv())
            now = time.time_ns()
            if frame["op"] in ("upd", "snap"):
                for value in frame["val"]:
                    ages.append((now - value["t"]) / 1e9)
                    if frame["op"] == "upd" and value["seq"] != last_seq + 1:
                        gaps.append((last_seq, value["seq"]))  # not after a snap
                    last_seq = value["seq"]
            elif frame["op"] == "stats":
                stats.append(frame)
            await asyncio.sleep(0.04)

    reader = asyncio.create_task(read_slowly())
    end = time.monotonic() + 12
    while time.monotonic() < end:  # ~60 Hz
        await publisher.value(uri, payload)
        await asyncio.sleep(1 / 60)
    await nc.flush()
    done.set()
    async with asyncio.timeout(60):
        await reader
    await slow.close()
    final = publisher.seq[uri]
    await healthy_sub.wait_for(lambda sub: sub.values[0]["seq"] == final, 30)
    await healthy.close()
    assert stats and stats[0]["missed"] > 0 and stats[0]["conflated"] == 1
    # mailbox_age (2 s) + ~1 MiB of kernel and client buffers at ~500 KiB/s, with
    # the margin of a loaded machine; without the bounds: 36 s in a load test
    assert max(ages) <= 10.0, f"slow reader read data {max(ages):.1f} s old"
    assert gaps == []  # it skips values only behind a catch-up snap
    assert seen == list(range(first_seq + 1, publisher.seq[uri] + 1))  # no gap
    assert healthy_sub.missed == 0 and healthy_sub.conflated == 0


class _SlowLink:
    """A WebSocket client behind a slow link: it takes ``rate`` bytes per second
    off a socket with a small receive buffer and parses frames from them
    (websockets' sans-I/O protocol), so the gateway sees the link's pace."""

    def __init__(self, url: str, rate: int) -> None:
        self.protocol = ClientProtocol(parse_uri(url), max_size=None)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024)
        self.sock.setblocking(False)
        self.rate = rate
        self.frames: asyncio.Queue[dict] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()

    async def open(self, host: str, port: int) -> None:
        await self._loop.sock_connect(self.sock, (host, port))
        self.protocol.send_request(self.protocol.connect())
        await self._flush()

    async def send(self, frame: dict) -> None:
        self.protocol.send_binary(frames.pack(frame))
        await self._flush()

    async def _flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                await self._loop.sock_sendall(self.sock, data)

    async def pump(self) -> None:
        """Take ``rate / 10`` bytes every 100 ms, forever."""
        chunk = max(1, self.rate // 10)
        while True:
            data = await self._loop.sock_recv(self.sock, chunk)
            if not data:
                return
            self.protocol.receive_data(data)
            for event in self.protocol.events_received():
                if isinstance(event, Frame) and event.opcode is Opcode.BINARY:
                    self.frames.put_nowait(frames.unpack(event.data))
            await self._flush()
            await asyncio.sleep(0.1)


async def test_reader_on_a_slow_link_reads_recent_data_not_a_full_send_buffer(
    gateway, publisher, names, nc: NatsClient
) -> None:
    """A peer that takes 40 KiB/s of a ~600 KiB/s stream (a slow link): without a
    bound on what is in flight it would read the gateway's whole send buffer (~0.5
    MiB, ~13 s) behind; the in-flight budget (``mailbox_age`` of its drain rate)
    keeps what it reads recent, and it is told what it missed."""
    uri = names[0]
    payload = np.zeros(2560, dtype="<f8")  # 20 KiB per update
    await publisher.value(uri, payload)
    link = _SlowLink(gateway.ws_url, rate=40 * 1024)
    await link.open("127.0.0.1", gateway.port)
    pump = asyncio.create_task(link.pump())
    assert (await asyncio.wait_for(link.frames.get(), 10))["op"] == "hello"
    await link.send(frames.sub(1, [uri]))
    start = time.monotonic()
    while time.monotonic() < start + 16:  # ~30 Hz
        await publisher.value(uri, payload)
        await asyncio.sleep(1 / 30)
    pump.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await pump
    link.sock.close()
    ages: list[float] = []
    stats = []
    while not link.frames.empty():  # all it parsed, in order
        frame = link.frames.get_nowait()
        if frame["op"] in ("upd", "snap") and frame["val"][0]:
            ages.append(frame["val"][0]["t"] / 1e9)
        elif frame["op"] == "stats":
            stats.append(frame)
    assert stats and stats[0]["missed"] > 0
    end = time.time()
    assert ages and end - ages[-1] <= 6.0, (
        f"read data {end - ages[-1]:.1f} s old at the end"
    )
