"""Small values first (real gateway, real nats-server): a snapshot never makes
scalars wait behind large arrays, nor does an update window."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

pytestmark = pytest.mark.system

BIG = np.arange(60_000, dtype="<f8")  # 480 KB: above the default 32 KiB


@pytest.fixture(scope="module")
def slow_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """Batch windows of 300 ms: updates of one window meet in one flush."""
    gw = start_gateway(nats_server.url, "--batch-ms", "300")
    try:
        yield gw
    finally:
        gw.stop()


def as_array(v: Any) -> np.ndarray:
    """A typed array as the client holds it (msgpack: numpy; JSON: dtype/b64)."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["b64"]), dtype="<" + v["dtype"])
    return np.asarray(v)


def same(v: Any, expected: np.ndarray) -> bool:
    got = as_array(v)
    return got.shape == expected.shape and bool((got == expected).all())


def recorder() -> tuple[list[dict[str, Any]], Any]:
    seen: list[dict[str, Any]] = []
    return seen, seen.append


@pytest.mark.parametrize("json_mode", [False, True])
async def test_scalars_of_a_snapshot_arrive_before_its_large_arrays(
    gateway: GatewayProc, publisher: Publisher, names: list[str], json_mode: bool
) -> None:
    big_a, scalar, big_b, scalar2 = names[:4]
    await publisher.value(big_a, BIG)
    await publisher.value(scalar, 1.5)
    await publisher.value(big_b, BIG[:5000] * 2)
    await publisher.value(scalar2, 7)
    await publisher.nc.flush()
    seen, on_frame = recorder()
    async with GatewayClient(
        gateway.ws_url, json_mode=json_mode, on_frame=on_frame
    ) as c:
        sub = await c.subscribe([big_a, scalar, big_b, scalar2])
        # subscribe returns with the values that follow the snapshot in hand
        assert not sub.following
        assert same(sub.value(big_a)["v"], BIG)
        assert same(sub.value(big_b)["v"], BIG[:5000] * 2)
    frames = [f for f in seen if f.get("sid") == sub.sid]
    snap = frames[0]
    assert snap["op"] == "snap"
    index = {uri: i for i, uri in enumerate(snap["ch"])}
    # the scalars are in the first frame, the arrays left out and announced
    assert snap["val"][index[scalar]]["v"] == 1.5
    assert snap["val"][index[scalar2]]["v"] == 7
    assert snap["val"][index[big_a]] is None and snap["val"][index[big_b]] is None
    assert snap["more"] == sorted([index[big_a], index[big_b]])
    # then one upd per array, right after it, before anything else of the group
    follow = frames[1:3]
    assert [f["op"] for f in follow] == ["upd", "upd"]
    assert sorted(f["i"][0] for f in follow) == snap["more"]
    assert all(len(f["i"]) == 1 for f in follow)


async def test_an_update_window_sends_its_scalars_before_its_arrays(
    slow_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    big, scalar, other = names[:3]
    for uri in (big, scalar, other):
        await publisher.value(uri, 0)
    await publisher.nc.flush()
    seen, on_frame = recorder()
    async with GatewayClient(slow_gateway.ws_url, on_frame=on_frame) as client:
        sub = await client.subscribe([big, scalar, other])
        # an update now makes the group's next window a full 300 ms one
        await publisher.value(other, 1)
        await sub.wait_for(lambda s: s.value(other)["v"] == 1)
        mark = len(seen)
        await publisher.value(big, BIG)  # the array first, the scalar after it
        await publisher.value(scalar, 2.5)
        await publisher.nc.flush()
        await sub.wait_for(lambda s: s.value(scalar)["v"] == 2.5)
        await sub.wait_for(lambda s: same(s.value(big)["v"], BIG))
    window = [f for f in seen[mark:] if f.get("op") == "upd"]
    i_big, i_scalar = sub.index[big], sub.index[scalar]
    order = [i for f in window for i in f["i"]]
    assert order.index(i_scalar) < order.index(i_big), window
    # the array has a frame of its own
    assert [f["i"] for f in window if i_big in f["i"]] == [[i_big]]


async def test_a_caught_up_or_resubscribed_snapshot_is_split_the_same_way(
    gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    big, scalar = names[:2]
    await publisher.value(big, BIG)
    await publisher.value(scalar, 3)
    await publisher.nc.flush()
    seen, on_frame = recorder()
    async with GatewayClient(gateway.ws_url, on_frame=on_frame) as client:
        sub = await client.subscribe([big, scalar])
        await sub.wait_for(lambda s: s.value(big) is not None)
        mark = len(seen)
        again = await client.subscribe([scalar, big])  # the same set: a fresh snap
        assert again.sid == sub.sid
        await again.wait_snapshot()
        await asyncio.sleep(0)  # the frames were already read with the snap's
    later = [f for f in seen[mark:] if f.get("sid") == sub.sid]
    assert later[0]["op"] == "snap" and later[0]["more"] == [sub.index[big]]
    assert later[1]["op"] == "upd" and later[1]["i"] == [sub.index[big]]
