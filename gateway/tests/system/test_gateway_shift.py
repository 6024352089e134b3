"""Circular buffers as shifts (real gateway, real nats-server): a subscription with
``shift`` gets each update of a "last N samples" array as its new samples only, and
rebuilds exactly the array a full subscription gets, for every update; a socket
that joins mid-stream or catches up after conflation rebuilds it too, and a new
adapter epoch sends the full array."""

from __future__ import annotations

import asyncio
import base64
import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import ClientConnection, connect

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_schemas import frames

pytestmark = pytest.mark.system

RNG = np.random.default_rng(5)
N = 1000


class Buffer:
    """A compress record in circular-buffer mode: fills to ``N`` samples, then
    each update drops the oldest ``step`` and appends ``step`` new ones; every
    published array is kept by seq."""

    def __init__(
        self, publisher: Publisher, uri: str, start: int = N - 50, n: int = N
    ) -> None:
        self.n = n
        self.publisher = publisher
        self.uri = uri
        self.v = RNG.random(start)
        self.sent: dict[tuple[int, int], np.ndarray] = {}

    async def push(self, step: int = 1) -> int:
        new = RNG.random(step)
        new[new < 0.05] = np.nan  # NaN samples too (a disconnected sensor)
        self.v = np.concatenate((self.v, new))[-self.n :]
        seq = await self.publisher.value(self.uri, self.v)
        self.sent[self.publisher.ep, seq] = self.v
        return seq

    async def pour(self, count: int, hz: float = 200.0, step: int = 1) -> int:
        seq = 0
        for _ in range(count):
            seq = await self.push(step)
            await asyncio.sleep(1 / hz)
        return seq


class RawReader:
    """A msgpack socket of one subscription that counts the bytes it reads and
    rebuilds shift values itself (the protocol's client rule)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.bytes = 0
        self.value: dict[str, Any] | None = None
        self.rebuilt: list[dict[str, Any]] = []  # every value applied, in order
        self.shifted = 0
        self.snaps = 0

    async def read_until(self, ep: int, seq: int, timeout: float = 30.0) -> None:
        async with asyncio.timeout(timeout):
            while self.value is None or (self.value["ep"], self.value["seq"]) < (
                ep,
                seq,
            ):
                data = await self.ws.recv()
                self.bytes += len(data)
                self.apply(frames.unpack(data))

    def apply(self, frame: dict[str, Any]) -> None:
        if frame["op"] == "snap":
            self.snaps += 1
            self.value = frame["val"][0]
        elif frame["op"] == "upd":
            for value in frame["val"]:
                held = self.value
                if held is not None and (held["ep"], held["seq"]) >= (
                    value["ep"],
                    value["seq"],
                ):
                    continue
                if frames.is_shifted(value):
                    self.shifted += 1
                    value = frames.unshift(held, value)
                    assert value is not None, "a shift whose base is not held"
                self.value = value
                self.rebuilt.append(value)


async def open_raw(url: str, uri: str, shift: bool, rcvbuf: int = 0) -> RawReader:
    sock = None
    if rcvbuf:  # a reader that takes nothing unless asked (tiny kernel buffer)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        host, port = url.removeprefix("ws://").split("/")[0].split(":")
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    ws = await connect(url, sock=sock, max_queue=1, compression=None, max_size=None,
                       ping_interval=None)  # fmt: skip
    assert frames.unpack(await ws.recv())["op"] == "hello"
    await ws.send(frames.pack(frames.sub(1, [uri], shift=shift)))
    reader = RawReader(ws)
    data = await ws.recv()
    reader.bytes += len(data)
    reader.apply(frames.unpack(data))
    return reader


def assert_rebuilt(values: list[dict[str, Any]], buffer: Buffer) -> None:
    assert values
    for value in values:
        sent = buffer.sent[value["ep"], value["seq"]]
        assert np.array_equal(value["v"], sent, equal_nan=True), value["seq"]


@pytest.fixture(scope="module")
def patient_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """Small mailbox, long stall limit: a socket that reads nothing conflates."""
    gw = start_gateway(
        nats_server.url, "--mailbox-frames", "8", "--stall-timeout", "60"
    )
    try:
        yield gw
    finally:
        gw.stop()


async def test_shift_values_rebuild_every_update_of_a_full_subscription(
    patient_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    uri, scalar = names[:2]
    buffer = Buffer(publisher, uri)
    await buffer.push()
    await publisher.value(scalar, 1.5)
    await publisher.nc.flush()
    full_seen: dict[int, np.ndarray] = {}
    shift_seen: dict[int, np.ndarray] = {}

    def keep(into: dict[int, np.ndarray]):
        def on_update(sub: Any, indexes: list[int], values: list[Any]) -> None:
            for i, v in zip(indexes, values, strict=True):
                if sub.channels[i] == uri:
                    into[v["seq"]] = v["v"]

        return on_update

    async with GatewayClient(patient_gateway.ws_url) as client:
        full = await client.subscribe([uri, scalar], keep(full_seen))
        shift = await client.subscribe([uri, scalar], keep(shift_seen), shift=True)
        assert shift.sid != full.sid  # never one group with a full subscription
        raw_full = await open_raw(patient_gateway.ws_url, uri, shift=False)
        raw_shift = await open_raw(patient_gateway.ws_url, uri, shift=True)
        ep, last = publisher.ep, publisher.seq[uri] + 220
        reading = [  # both read as data comes (neither conflates)
            asyncio.create_task(raw.read_until(ep, last))
            for raw in (raw_full, raw_shift)
        ]
        await buffer.pour(50)  # filling: the array grows by one
        await buffer.pour(150)  # full: shifted by one
        assert await buffer.pour(20, step=7) == last  # by seven
        await publisher.value(scalar, 2.5)
        await publisher.nc.flush()
        await asyncio.gather(*reading)
        await full.wait_for(lambda s: s.value(uri)["seq"] == last)
        await shift.wait_for(lambda s: s.value(uri)["seq"] == last)
        await shift.wait_for(lambda s: s.value(scalar)["v"] == 2.5)
    assert shift_seen.keys() == full_seen.keys() and len(shift_seen) == 220
    for seq, v in full_seen.items():
        assert np.array_equal(shift_seen[seq], v, equal_nan=True), seq
    assert shift.shift_misses == 0
    assert_rebuilt(raw_shift.rebuilt, buffer)
    assert_rebuilt(raw_full.rebuilt, buffer)
    assert len(raw_shift.rebuilt) == len(raw_full.rebuilt) == 220
    assert raw_shift.shifted == 220
    # 8 KB per update in full; tens of bytes as a shift
    assert raw_shift.bytes * 20 < raw_full.bytes, (raw_shift.bytes, raw_full.bytes)
    await raw_full.ws.close()
    await raw_shift.ws.close()


async def test_joining_mid_stream_and_catching_up_after_conflation_rebuild(
    patient_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    uri = names[0]
    big = 16384  # 128 KiB in full: a socket that reads nothing is soon behind
    buffer = Buffer(publisher, uri, start=big, n=big)
    await buffer.push()
    await publisher.nc.flush()
    first = await open_raw(patient_gateway.ws_url, uri, shift=True)
    ep = publisher.ep
    # reads nothing: its mailbox fills and its group conflates
    sluggish = await open_raw(patient_gateway.ws_url, uri, shift=True, rcvbuf=4096)
    pouring = asyncio.create_task(buffer.pour(100, hz=200, step=40))
    joined: list[RawReader] = []
    reading = [asyncio.create_task(first.read_until(ep, 10**9, timeout=120))]
    async with asyncio.timeout(60):  # sockets join while the group sends
        while len(joined) < 3 and not pouring.done():
            joined.append(await open_raw(patient_gateway.ws_url, uri, shift=True))
            reading.append(
                asyncio.create_task(joined[-1].read_until(ep, 10**9, timeout=120))
            )
            await asyncio.sleep(0.02)
        while not patient_gateway.metrics()["synoptic_gateway_conflating_sockets"]:
            await buffer.pour(5, hz=200, step=9000)  # sent in full: 128 KiB each
    await pouring
    last = await buffer.pour(50, step=3)  # shifts after its catch-up
    await publisher.nc.flush()
    for task in reading:  # (recv is safe to cancel: no message is lost)
        task.cancel()
    await asyncio.gather(*reading, return_exceptions=True)
    for reader in (first, sluggish, *joined):
        await reader.read_until(ep, last, timeout=60)
        assert_rebuilt(reader.rebuilt, buffer)
        np.testing.assert_array_equal(reader.value["v"], buffer.v)
        await reader.ws.close()
    assert sluggish.snaps >= 2  # its catch-up snapshot, then shifts again
    assert sluggish.shifted and first.shifted and all(r.shifted for r in joined)


async def test_a_new_adapter_epoch_sends_the_full_array(
    patient_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    uri = names[0]
    buffer = Buffer(publisher, uri, start=N)
    await buffer.pour(3)
    await publisher.nc.flush()
    reader = await open_raw(patient_gateway.ws_url, uri, shift=True)
    last = await buffer.pour(3)
    await reader.read_until(publisher.ep, last)
    shifted = reader.shifted
    assert shifted >= 1
    # the adapter restarts: a new epoch, seq from 1, the same buffer shifted once
    publisher.ep = int(time.time() * 1000) + 1
    publisher.seq.clear()
    restarted = await buffer.push()
    assert restarted == 1
    await reader.read_until(publisher.ep, 1)
    assert reader.shifted == shifted  # sent in full
    assert reader.rebuilt[-1]["ep"] == publisher.ep
    last = await buffer.pour(3)
    await reader.read_until(publisher.ep, last)
    assert reader.shifted == shifted + 3  # and shifts against it again
    assert_rebuilt(reader.rebuilt, buffer)
    await reader.ws.close()


async def test_with_pts_an_array_that_fits_shifts_and_a_reduced_one_does_not(
    patient_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    fits, big = names[:2]
    small = Buffer(publisher, fits, start=N)
    large = Buffer(publisher, big, start=50_000, n=50_000)
    await small.push()
    await large.push()
    await publisher.nc.flush()
    shapes: list[tuple[str, bool, bool]] = []  # (channel, shift form, reduced)

    def note(frame: dict[str, Any]) -> None:
        if frame["op"] == "upd":
            for i, value in zip(frame["i"], frame["val"], strict=True):
                shapes.append((sub.channels[i], frames.is_shifted(value), "x" in value))

    async with GatewayClient(patient_gateway.ws_url, on_frame=note) as client:
        sub = await client.subscribe(
            [fits, big], points={fits: 1000, big: 1000}, shift=True
        )
        for _ in range(5):
            await small.push()
            last = await large.push()
        await publisher.nc.flush()
        await sub.wait_for(lambda s: s.value(big)["seq"] == last)
        await sub.wait_for(lambda s: s.value(fits)["seq"] == last)
        np.testing.assert_array_equal(sub.value(fits)["v"], small.v)
        assert len(sub.value(big)["v"]) <= 1024  # the envelope
    assert {(c, s, r) for c, s, r in shapes} == {
        (fits, True, False),
        (big, False, True),
    }


async def test_json_sockets_get_and_rebuild_the_shift_form_too(
    patient_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    uri = names[0]
    buffer = Buffer(publisher, uri, start=N)
    await buffer.push()
    await publisher.nc.flush()
    shifted = 0

    def note(frame: dict[str, Any]) -> None:
        nonlocal shifted
        if frame["op"] == "upd":
            shifted += sum(frames.is_shifted(v) for v in frame["val"])

    async with GatewayClient(
        patient_gateway.ws_url, json_mode=True, on_frame=note
    ) as client:
        sub = await client.subscribe([uri], shift=True)
        last = await buffer.pour(10, step=2)
        await publisher.nc.flush()
        await sub.wait_for(lambda s: s.value(uri)["seq"] == last)
        view = sub.value(uri)["v"]  # the JSON view of a typed array
        assert view["dtype"] == "f8" and view["shape"] == [N]
        rebuilt = np.frombuffer(base64.b64decode(view["b64"]), "<f8")
        np.testing.assert_array_equal(rebuilt, buffer.v)
    assert shifted == 10 and sub.shift_misses == 0
