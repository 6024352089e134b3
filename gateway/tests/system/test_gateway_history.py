"""History requests (``hist``) through a real gateway against a real nats-server
with the bus's history stream."""

from __future__ import annotations

import asyncio
import math
import time

import numpy as np
import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, Publisher
from synoptic_schemas import Subjects, encode, frames, parse_channel

N = 3000  # values per channel, 1 ms apart


async def fill(nc: NatsClient, uris: list[str], t_end: int) -> int:
    """Publish N values per channel (a sine; severity 2 above 0.9) ending at
    ``t_end``; return when the history stream holds them all; the first time."""
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    js = nc.jetstream()
    before = (await js.stream_info("CS_HIST")).state.messages
    subjects = Subjects()
    t_first = t_end - (N - 1) * 1_000_000
    for i in range(N):
        v = math.sin(i / 200)
        for k, uri in enumerate(uris):
            msg = {"ver": 1, "v": v + k, "t": t_first + i * 1_000_000,
                   "sev": 2 if v > 0.9 else 0, "st": "", "seq": i + 1, "ep": 7,
                   "c": True}  # fmt: skip
            await nc.publish(subjects.val(parse_channel(uri)), encode(msg))
    async with asyncio.timeout(30):
        while (await js.stream_info("CS_HIST")).state.messages < before + N * len(uris):  # noqa: ASYNC110 - no event to await for a stream count
            await asyncio.sleep(0.05)
    return t_first


async def test_history_is_read_reduced_and_typed(
    gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    uris = names[:3]
    t_end = time.time_ns()
    t_first = await fill(nc, uris, t_end)
    t0, t1 = t_first / 1e6 - 1, t_end / 1e6 + 1
    async with GatewayClient([gateway.ws_url]) as client:
        traces = await client.history([*uris, "nope"], t0, t1, px=100)
        assert list(traces) == [*uris, "nope"]
        for k, uri in enumerate(uris):
            trace = traces[uri]
            assert trace.err is None and trace.src == "bus"
            assert trace.t is not None and trace.v is not None and trace.sev is not None
            assert 100 < len(trace.t) <= 200  # at most 2 points per pixel
            assert trace.t.dtype == np.float64 and trace.sev.dtype == np.uint8
            assert np.all(np.diff(trace.t) > 0)
            assert trace.t[0] == t_first / 1e6 and trace.t[-1] == t_end / 1e6
            expected = np.sin(np.arange(N) / 200) + k
            assert trace.v.max() == expected.max() and trace.v.min() == expected.min()
            assert set(trace.sev.tolist()) == {0, 2}  # severity changes kept
        assert traces["nope"].err["code"] == "bad_channel"
        assert traces["nope"].t is None
        whole = await client.history(uris[:1], t0, t1, px=4000)
        assert len(whole[uris[0]].t) == N  # fits: every value
    async with GatewayClient([gateway.ws_url], json_mode=True) as client:
        traces = await client.history(uris[:1], t0, t1, px=50)
        assert 50 < len(traces[uris[0]].t) <= 100


@pytest.mark.parametrize(
    ("t0", "t1", "px", "code"),
    [
        (2e12, 1e12, 100, "bad_range"),  # reversed
        ("yesterday", 1e12, 100, "bad_range"),  # not a number
        (float("nan"), 1e12, 100, "bad_range"),
        (1e12 - 10 * 365 * 86400e3, 1e12, 100, "bad_range"),  # ten years
        (1e12, 2e12, 0, "bad_range"),
        (1e12, 2e12, 10**6, "bad_range"),
    ],
)
async def test_bad_requests_get_one_clear_error(
    gateway: GatewayProc, t0: object, t1: float, px: int, code: str
) -> None:
    async with GatewayClient([gateway.ws_url], json_mode=True) as client:
        frame = {"op": "hist", "id": 5, "ch": ["ca://X"], "t0": t0, "t1": t1,
                 "px": px}  # fmt: skip
        await client.send_raw(frames.to_json(frame))
        (error,) = await client.wait_errors(1)
        assert error["code"] == code and error["id"] == 5, error
        assert await client.ping() < 5  # the connection goes on


async def test_limits_channels_and_requests_in_flight(
    gateway: GatewayProc, nc: NatsClient
) -> None:
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    now = time.time() * 1e3
    async with GatewayClient([gateway.ws_url]) as client:
        many = [f"ca://MANY:{i}" for i in range(10_000)]
        with pytest.raises(GatewayError, match="too_many_channels"):
            await client.history(many, now - 60e3, now)
        hundred = [f"ca://MANY:{i}" for i in range(100)]  # each a slower request
        results = await asyncio.gather(
            *(client.history(hundred, now - 3600e3, now) for _ in range(10)),
            return_exceptions=True,
        )
        refused = [r for r in results if isinstance(r, GatewayError)]
        assert refused and all("rate_limited" in str(r) for r in refused)
        assert any(isinstance(r, dict) for r in results)


async def test_live_updates_flow_beside_history_requests(
    gateway: GatewayProc, nc: NatsClient, publisher: Publisher, names: list[str]
) -> None:
    live = names[10]
    await publisher.value(live)
    async with (
        GatewayClient([gateway.ws_url]) as watcher,
        GatewayClient([gateway.ws_url]) as reader,
    ):
        sub = await watcher.subscribe([live])
        now = time.time() * 1e3
        storm = [
            asyncio.create_task(reader.history(names[:3], now - 3600e3, now))
            for _ in range(2)
        ]
        for _ in range(20):
            seq = await publisher.value(live)
        await sub.wait_for(lambda s: s.value(live)["seq"] == seq, timeout=10)
        await asyncio.gather(*storm)


async def test_no_history_stream_is_an_error_per_channel(
    nats_server: object, nc: NatsClient
) -> None:
    from synoptic_gateway.testing import start_gateway

    gw = start_gateway(nats_server.url, "--prefix", "nohist")  # type: ignore[attr-defined]
    try:
        async with GatewayClient([gw.ws_url]) as client:
            now = time.time() * 1e3
            traces = await client.history(["ca://A", "ca://B"], now - 60e3, now)
            for trace in traces.values():
                assert trace.err is not None and trace.err["code"] == "unavailable"
                assert (
                    "NOHIST_HIST" in trace.err["msg"] or "not found" in trace.err["msg"]
                )
            assert await client.ping() < 5
    finally:
        gw.stop()
