"""Snapshots, ordered updates, shared groups, reference counting and demand against
a real gateway process and nats-server."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict

import pytest
from websockets.asyncio.client import connect

from synoptic_bus.connect import NatsClient
from synoptic_bus.store import StoreConfig
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import Publisher, start_gateway
from synoptic_schemas import Subjects, frames
from synoptic_schemas.codec import decode_want

pytestmark = pytest.mark.system


async def test_snapshot_then_updates_neither_lost_nor_reordered(
    gateway, publisher, names, nc: NatsClient
) -> None:
    channels = names[:150]
    for uri in channels[:100]:  # in the store before the subscription
        await publisher.value(uri)
    await publisher.meta(channels[0])
    await nc.flush()
    seen: dict[int, list[int]] = defaultdict(list)

    def on_update(sub, indexes, values) -> None:
        for i, v in zip(indexes, values, strict=True):
            seen[i].append(v["seq"])

    stop = asyncio.Event()

    async def pour() -> None:  # updates while the snapshot is being read
        while not stop.is_set():
            for uri in channels:
                await publisher.value(uri)
            await asyncio.sleep(0.005)

    task = asyncio.create_task(pour())
    snaps: list[dict] = []
    async with GatewayClient(
        gateway.ws_url,
        on_frame=lambda f: snaps.append(f) if f["op"] == "snap" else None,
    ) as client:
        sub = await client.subscribe(list(reversed(channels)), on_update=on_update)
        assert sub.channels == sorted(channels)
        assert sub.meta(channels[0])["unit"] == "mA"
        (snap,) = snaps
        snap_seq = [v["seq"] if v else 0 for v in snap["val"]]
        stored = [sub.index[u] for u in channels[:100]]
        assert all(snap_seq[i] >= 1 for i in stored)
        await asyncio.sleep(0.5)
        stop.set()
        await task
        await nc.flush()
        final = {sub.index[u]: publisher.seq[u] for u in channels}
        await sub.wait_for(
            lambda s: all(
                s.values[i] and s.values[i]["seq"] == n for i, n in final.items()
            ),
            timeout=10,
        )
    for index, last in final.items():
        expected = list(range(snap_seq[index] + 1, last + 1))
        assert seen[index] == expected, f"channel {index}: gaps or reordering"


async def test_same_channel_set_shares_one_group_and_the_same_bytes(
    gateway, publisher, names, nc: NatsClient
) -> None:
    channels = names[:20]
    raw_frames: list[list[bytes]] = [[], []]
    async with connect(gateway.ws_url) as ws_a, connect(gateway.ws_url) as ws_b:
        for ws, order in ((ws_a, channels), (ws_b, list(reversed(channels)))):
            await ws.recv()  # hello
            await ws.send(frames.pack(frames.sub(1, order)))
        snap_a, snap_b = (
            frames.unpack(await ws_a.recv()),
            frames.unpack(await ws_b.recv()),
        )
        assert snap_a["sid"] == snap_b["sid"] and snap_a["ch"] == snap_b["ch"]
        assert gateway.metrics()["synoptic_gateway_groups"] >= 1
        for _ in range(5):
            for uri in channels:
                await publisher.value(uri)
            await nc.flush()
            await asyncio.sleep(0.02)
        for index, ws in enumerate((ws_a, ws_b)):
            total = 0
            while total < 5 * len(channels):
                data = await asyncio.wait_for(ws.recv(), 10)
                frame = frames.unpack(data)
                assert frame["op"] == "upd"
                total += len(frame["i"])
                raw_frames[index].append(data)
    assert raw_frames[0] == raw_frames[1]  # encoded once, the same bytes to both


async def test_subscriptions_are_reference_counted_and_demand_announced(
    nats_server, names, nc: NatsClient
) -> None:
    x, y, z = names[:3]
    wants: list[tuple[float, dict]] = []

    async def on_want(msg) -> None:
        wants.append((time.monotonic(), decode_want(msg.data)))

    await nc.subscribe("cs.want.ca", cb=on_want)
    await nc.flush()
    # renew every 0.3 s; released channels go at once (no linger)
    gateway = start_gateway(nats_server.url, "--want-lease", "0.9", "--linger", "0")

    def subs() -> float:
        return gateway.metrics()["synoptic_gateway_nats_subscriptions"]

    try:
        async with (
            GatewayClient(gateway.ws_url) as a,
            GatewayClient(gateway.ws_url) as b,
        ):
            await a.subscribe([x, y])
            sub_b = await b.subscribe([y, z])
            assert subs() == 3
            await sub_b.close()
            assert subs() == 2
            released = time.monotonic()
            await asyncio.sleep(1.0)
            later = [w for t, w in wants if t > released + 0.1]
            assert later and all(w["lease"] == 0.9 for w in later)
            renewed = {u for w in later for u in w["ch"]}
            assert {x, y} <= renewed and z not in renewed  # z is left to lapse
        announced = {u for _, w in wants for u in w["ch"]}
        assert {x, y, z} <= announced
        for _ in range(100):
            if subs() == 0:
                break
            await asyncio.sleep(0.05)
        assert subs() == 0
    finally:
        gateway.stop()


async def test_json_mode_unsub_and_errors_keep_the_connection(
    gateway, publisher, names, nc: NatsClient
) -> None:
    await publisher.value(names[0], 2.5)
    await nc.flush()
    async with GatewayClient(gateway.ws_url, json_mode=True) as client:
        sub = await client.subscribe([names[0]])
        assert sub.value(names[0])["v"] == 2.5
        again = await client.subscribe([names[0]])  # same set: same sid
        assert again.sid == sub.sid
        await publisher.value(names[0], 3.5)
        await nc.flush()
        await sub.wait_for(lambda s: s.values[0]["v"] == 3.5)
        await client.send_raw('{"op":"unsub","id":99,"sid":12345}')
        await client.send_raw("not json")
        for _ in range(100):
            if len(client.errors) >= 1:
                break
            await asyncio.sleep(0.02)
        assert await client.ping() < 5
        assert {e["code"] for e in client.errors} == {"bad_frame", "unknown_sid"}


async def test_updates_are_batched_under_load_and_a_lone_update_goes_at_once(
    gateway, publisher, names, nc: NatsClient
) -> None:
    channels = names[:10]
    upd_frames: list[dict] = []
    async with GatewayClient(
        gateway.ws_url,
        on_frame=lambda f: upd_frames.append(f) if f["op"] == "upd" else None,
    ) as client:
        sub = await client.subscribe(channels)
        for _ in range(50):  # 500 updates in one burst
            for uri in channels:
                await publisher.value(uri)
        await nc.flush()
        last = publisher.seq[channels[-1]]
        await sub.wait_for(lambda s: (s.value(channels[-1]) or {}).get("seq") == last)
        assert sum(len(f["i"]) for f in upd_frames) == 500
        assert len(upd_frames) <= 50  # batched, never one frame per update
        await asyncio.sleep(0.5)  # the group is idle now
        upd_frames.clear()
        sent = time.monotonic()
        await publisher.value(channels[0])
        await nc.flush()
        await sub.wait_for(lambda s: len(upd_frames) == 1)
        assert time.monotonic() - sent < 1.0
        assert upd_frames[0]["i"] == [0]


async def test_a_stream_without_the_barrier_subject_still_serves_snapshots(
    nats_server, nc: NatsClient, names
) -> None:
    """An older stream layout (no ``<prefix>.sync.>``): the barrier is refused, the
    gateway says so once and reads the store after a plain round trip."""
    config = StoreConfig(prefix="old")
    layout = config.stream_config()
    layout.subjects = ["old.val.>", "old.meta.>"]
    await nc.jetstream().add_stream(layout)
    publisher = Publisher(nc, subjects=Subjects("old"))
    for uri in names[:3]:
        await publisher.value(uri)
    # stored, not only sent: without a barrier the gateway reads what the
    # stream holds by then, and JetStream stores asynchronously
    async with asyncio.timeout(30):
        while (await nc.jetstream().stream_info(layout.name)).state.messages < 3:  # noqa: ASYNC110 - no event for a stream count
            await asyncio.sleep(0.05)
    gw = start_gateway(nats_server.url, "--prefix", "old")
    try:
        async with GatewayClient(gw.ws_url) as client:
            sub = await client.subscribe(names[:3])
            assert [v["seq"] for v in sub.values] == [1, 1, 1]
            await publisher.value(names[0])
            await sub.wait_for(lambda s: s.value(names[0])["seq"] == 2)
        gw.proc.wait_for(r"no store barrier", timeout=10)
    finally:
        gw.stop()
