"""Limits answer with clear error frames and keep the connection; a fuzzer's
random and mutated frames never stop the gateway serving the others."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas import frames

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def limited(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gw = start_gateway(
        nats_server.url, "--max-channels", "10", "--max-frame-bytes", "2048",
        "--rate", "300", "--burst", "300",
    )  # fmt: skip
    yield gw
    gw.stop()


@pytest.mark.parametrize(
    ("channels", "code"),
    [
        (["xx://A"], "bad_channel"),
        (["ca://"], "bad_channel"),
        (["ca://A\x01B"], "bad_channel"),
        (["tango://h:1/a/b"], "bad_channel"),
        ([f"ca://N{i}" for i in range(11)], "too_many_channels"),
    ],
)
async def test_refused_subscriptions_keep_the_connection(
    limited, channels: list[str], code: str
) -> None:
    async with GatewayClient(limited.ws_url) as client:
        with pytest.raises(GatewayError) as info:
            await client.subscribe(channels)
        assert info.value.code == code
        assert info.value.frame["msg"]
        assert await client.ping() < 5


async def test_channel_limit_counts_over_all_subscriptions(limited, names) -> None:
    async with GatewayClient(limited.ws_url) as client:
        await client.subscribe(names[:6])
        await client.subscribe(names[3:10])  # 10 distinct: at the limit
        with pytest.raises(GatewayError, match="too_many_channels"):
            await client.subscribe(names[10:11])


async def test_malformed_and_oversized_frames_get_errors(limited) -> None:
    async with GatewayClient(limited.ws_url) as client:
        await client.send_raw(b"\xc1\xff")  # not msgpack
        await client.send_raw(frames.pack([1, 2]))  # not a map
        await client.send_raw(frames.pack({"op": "fly", "id": 1}))
        await client.send_raw("{bad json")
        await client.send_raw(frames.pack({"op": "ping", "id": 1, "pad": "x" * 4096}))
        errors = await client.wait_errors(5)
        codes = [e["code"] for e in errors]
        assert codes.count("bad_frame") == 4 and "frame_too_big" in codes
        assert all(e["msg"] for e in errors)
        assert await client.ping() < 5


async def test_control_rate_is_limited_with_one_notice(limited) -> None:
    async with GatewayClient(limited.ws_url) as client:
        for i in range(600):
            await client.send_raw(frames.pack(frames.ping(i)))
        errors = await client.wait_errors(1)
        assert errors[0]["code"] == "rate_limited"
        await asyncio.sleep(1.5)  # the bucket refills
        assert await client.ping() < 5
        assert [e["code"] for e in client.errors].count("rate_limited") <= 2


def _mutations(rng: random.Random) -> Iterator[bytes | str]:
    valid = [
        frames.sub(1, ["ca://A", "tango://h:1/a/b/c/d"]), frames.unsub(2, 3),
        frames.put(3, "ca://A", 1.5), frames.ping(4),
    ]  # fmt: skip
    for n in range(400):
        kind = n % 4
        base = frames.pack(rng.choice(valid))
        if kind == 0:
            yield rng.randbytes(rng.randrange(1, 300))
        elif kind == 1:  # flip bytes of a valid frame
            data = bytearray(base)
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            yield bytes(data)
        elif kind == 2:  # truncate or extend
            yield base[: rng.randrange(len(base))] + rng.randbytes(rng.randrange(4))
        else:  # JSON with odd values
            frame = dict(rng.choice(valid))
            key = rng.choice(list(frame))
            frame[key] = rng.choice([None, -1, 2**70, "", [], {}, [None], "ca://" * 50])
            yield json.dumps(frame)


async def test_fuzzed_frames_never_disturb_other_clients(
    limited, publisher, names, nc: NatsClient
) -> None:
    channels = names[:5]
    for uri in channels:
        await publisher.value(uri)
    gaps = 0
    last: dict[int, int] = {}

    def on_update(sub, indexes, values) -> None:
        nonlocal gaps
        for i, v in zip(indexes, values, strict=True):
            gaps += i in last and v["seq"] != last[i] + 1
            last[i] = v["seq"]

    async with (
        GatewayClient(limited.ws_url) as watcher,
        GatewayClient(limited.ws_url) as fuzzer,
    ):
        sub = await watcher.subscribe(channels, on_update=on_update)
        rng = random.Random(5)
        for data in _mutations(rng):
            await fuzzer.send_raw(data)
            for uri in channels:
                await publisher.value(uri)
            await asyncio.sleep(0.004)
        await nc.flush()
        final = publisher.seq[channels[0]]
        await sub.wait_for(lambda s: s.value(channels[0])["seq"] == final)
        await asyncio.sleep(1.2)  # let the fuzzer's rate bucket refill
        assert await fuzzer.ping() < 5  # the fuzzer's own connection stays usable
        assert await watcher.ping() < 5
    assert gaps == 0
    assert limited.proc.alive()
