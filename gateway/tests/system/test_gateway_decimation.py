"""Arrays sized to the screen (real gateway, real nats-server): ``sub.pts`` gets a
min/max envelope whose extremes per bucket are the full array's, reduced once per
(channel, points) and shared by the viewers asking the same rounded size; bad
point counts and endless new sizes get clear errors, never unbounded groups."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_schemas import frames

pytestmark = pytest.mark.system

RNG = np.random.default_rng(3)
WAVE = (np.sin(np.arange(100_000) / 700) + RNG.normal(0, 0.3, 100_000)).astype("<f8")


def buckets(n: int, points: int) -> list[tuple[int, int]]:
    b = points // 2 - 1
    starts = sorted({(i * n) // b for i in range(b)})
    return list(zip(starts, [*starts[1:], n], strict=True))


def assert_envelope(value: dict, full: np.ndarray, points: int) -> None:
    x, v = np.asarray(value["x"]), np.asarray(value["v"])
    assert value["n"] == len(full) and len(v) <= points
    assert x[0] == 0 and x[-1] == len(full) - 1
    for lo, hi in buckets(len(full), points):
        inside = (x >= lo) & (x < hi)
        assert v[inside].min() == full[lo:hi].min()
        assert v[inside].max() == full[lo:hi].max()


async def test_envelope_min_max_equal_the_full_arrays_per_bucket(
    gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    wave, scalar = names[:2]
    await publisher.value(wave, WAVE)
    await publisher.value(scalar, 4.25)
    await publisher.nc.flush()
    async with GatewayClient(gateway.ws_url) as client:
        # 700 and 1000 points both round up to 1024: one group, one reduction
        small = await client.subscribe([wave, scalar], points={wave: 700, scalar: 300})
        other = await client.subscribe([wave, scalar], points={wave: 1000, scalar: 400})
        full = await client.subscribe([wave, scalar])
        assert_envelope(small.value(wave), WAVE, 1024)
        assert small.value(scalar)["v"] == 4.25  # a scalar is sent as it is
        assert "x" not in small.value(scalar)
        assert other.sid == small.sid and full.sid != small.sid
        await full.wait_for(lambda s: s.value(wave) is not None)  # after its snap
        np.testing.assert_array_equal(full.value(wave)["v"], WAVE)
        # a live update is reduced the same way, for each group its own size
        new = WAVE[::-1].copy()
        await publisher.value(wave, new)
        await small.wait_for(lambda s: s.value(wave)["v"][0] == new[0])
        await full.wait_for(lambda s: s.value(wave)["v"][0] == new[0])
        assert_envelope(small.value(wave), new, 1024)
        np.testing.assert_array_equal(full.value(wave)["v"], new)
        many = await client.subscribe([wave], points={wave: 4096})
        await many.wait_for(lambda s: s.value(wave) is not None)  # 48 KB: large
        assert_envelope(many.value(wave), new, 4096)


@pytest.mark.parametrize("n", [0, -1, 10**7, 2.5, True, "400"])
async def test_bad_point_counts_get_an_err_and_the_connection_stays(
    gateway: GatewayProc, names: list[str], n: object
) -> None:
    async with GatewayClient(gateway.ws_url) as client:
        with pytest.raises(GatewayError) as info:
            await client._request(
                {"op": "sub", "id": 5, "ch": [names[0]], "pts": {names[0]: n}}, 10
            )
        assert info.value.code == "bad_frame"
        assert "integer from 1 to 16384" in info.value.frame["msg"]
        assert await client.ping() >= 0


@pytest.fixture(scope="module")
def tight_gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """20 subscriptions per connection; a control-frame rate the test cannot hit."""
    gw = start_gateway(nats_server.url, "--max-subs", "20", "--rate", "1000",
                       "--burst", "1000")  # fmt: skip
    try:
        yield gw
    finally:
        gw.stop()


async def test_a_new_size_on_every_frame_is_bounded_per_connection(
    tight_gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    gateway = tight_gateway
    wave = names[0]
    await publisher.value(wave, WAVE)
    await publisher.nc.flush()
    async with GatewayClient(gateway.ws_url) as client:
        limit = client.hello["limits"]["subs"]
        sids = set()
        # the same channel, point counts 1..limit+50: only the 7 rounded sizes
        # make groups of their own
        for n in range(1, 16384, 16384 // (limit + 50)):
            sub = await client.subscribe([wave], points={wave: n})
            sids.add(sub.sid)
        assert len(sids) == len(frames.POINT_SIZES)
        before = gateway.metrics()["synoptic_gateway_groups"]
        # other channel sets: refused at the limit, nothing grows
        with pytest.raises(GatewayError) as info:
            for i in range(1, limit + 5):
                await client.subscribe([wave, names[i]], points={wave: 512})
        assert info.value.code == "too_many_subscriptions"
        groups = gateway.metrics()["synoptic_gateway_groups"]
        assert groups - before <= limit - len(sids)
