"""Adapter liveness end to end: a real soft IOC and EPICS adapter behind a real
gateway. An adapter killed (SIGKILL) or hung (SIGSTOP) stops beating: every client
watching its channels is told (``src`` up false, ``snap.stale``) within 5 s; the
same epoch beating again (SIGCONT) says ``src`` up true; a restarted adapter's
values (new epoch) clear the mark."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from synoptic_adapters.testing import EpicsAdapter, SimIoc, eventually
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient, Subscription
from synoptic_gateway.testing import GatewayProc, Publisher
from synoptic_schemas import Subjects, decode_heartbeat

pytestmark = pytest.mark.system

#: Told within this many seconds of the adapter's end (3 missed 1 s heartbeats,
#: plus the gateway's check period and delivery).
TOLD_WITHIN = 5.0
#: Two counters (10 Hz) and two static records (only src up true clears those).
NAMES = ["CNT:00000", "CNT:00001", "SP", "MSG"]


@pytest.fixture(scope="module")
def ioc() -> Iterator[SimIoc]:
    sim = SimIoc(records=2, rate=10.0).start()
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture
def adapter(nats_server: NatsServer, ioc: SimIoc) -> Iterator[EpicsAdapter]:
    channels = [
        ioc.uri("CNT:00000"),
        ioc.uri("CNT:00001"),
        ioc.uri("SP"),
        ioc.uri("MSG"),
    ]
    proc = EpicsAdapter(nats_server.url, ioc, channels).start()
    try:
        yield proc
    finally:
        if proc.process is not None:
            proc.process.signal(signal.SIGCONT)
        proc.close()


def _uris(ioc: SimIoc) -> list[str]:
    return [ioc.uri(name) for name in NAMES]


async def _epoch(nc: NatsClient, adapter: EpicsAdapter) -> int:
    """The adapter process's epoch, from its next heartbeat."""
    sub = await nc.subscribe(Subjects().hb(adapter.id))
    try:
        return decode_heartbeat((await sub.next_msg(timeout=10)).data)["ep"]
    finally:
        await sub.unsubscribe()


async def _live(
    client: GatewayClient, uris: list[str], nc: NatsClient, adapter: EpicsAdapter
) -> Subscription:
    """Subscribe; return once every value comes from the adapter's epoch and none
    is stale (the store may first answer with an earlier adapter's values)."""
    ep = await _epoch(nc, adapter)
    sub = await client.subscribe(uris)
    await sub.wait_for(
        lambda s: (
            all(v is not None and v["ep"] == ep for v in s.values) and not s.stale
        ),
        timeout=30,
    )
    return sub


async def test_killed_adapter_marks_its_channels_stale_and_a_restart_clears_them(
    gateway: GatewayProc, adapter: EpicsAdapter, ioc: SimIoc, nc: NatsClient
) -> None:
    uris = _uris(ioc)
    src_frames: list[dict[str, Any]] = []
    watcher = GatewayClient(
        gateway.ws_url,
        on_frame=lambda f: src_frames.append(f) if f["op"] == "src" else None,
    )
    await watcher.connect()
    try:
        sub = await _live(watcher, uris, nc, adapter)
        assert gateway.metrics()["synoptic_gateway_silent_adapters"] == 0
        old_ep = sub.value(uris[0])["ep"]

        assert adapter.process is not None
        adapter.process.kill()
        killed = time.monotonic()
        await sub.wait_for(lambda s: len(s.stale) == len(uris), timeout=15)
        told = time.monotonic() - killed
        assert told <= TOLD_WITHIN, told
        assert sorted(sub.stale_channels) == sorted(sub.channels)
        assert [f["up"] for f in src_frames] == [False] * len(src_frames)
        metrics = await eventually(
            lambda: (
                (m := gateway.metrics())["synoptic_gateway_silent_adapters"] == 1 and m
            )
        )
        assert metrics["synoptic_gateway_stale_channels"] == len(uris)

        # a late viewer is told in its snapshot: a join of the existing group, and a
        # fresh group on part of the channels (a JSON-mode client: the JSON snap)
        async with GatewayClient(gateway.ws_url, json_mode=True) as late:
            joined = await late.subscribe(uris)
            assert len(joined.stale) == len(uris)
            fresh = await late.subscribe(uris[:2])
            assert fresh.sid != joined.sid
            assert sorted(fresh.stale_channels) == sorted(fresh.channels)

        adapter.start()  # a new epoch: its values clear the mark
        await sub.wait_for(lambda s: not s.stale, timeout=60)
        assert sub.value(uris[0])["ep"] != old_ep
        await eventually(
            lambda: gateway.metrics()["synoptic_gateway_silent_adapters"] == 0
        )
    finally:
        await watcher.close()


async def test_hung_adapter_goes_stale_and_comes_back_when_it_beats_again(
    gateway: GatewayProc, adapter: EpicsAdapter, ioc: SimIoc, nc: NatsClient
) -> None:
    uris = _uris(ioc)
    static = {ioc.uri("SP"), ioc.uri("MSG")}  # no update clears these: src up true
    seen: list[dict[str, Any]] = []  # src and upd frames
    watcher = GatewayClient(
        gateway.ws_url,
        on_frame=lambda f: seen.append(f) if f["op"] in ("src", "upd") else None,
    )
    await watcher.connect()
    try:
        sub = await _live(watcher, uris, nc, adapter)
        ep = sub.value(uris[0])["ep"]
        assert adapter.process is not None
        adapter.process.signal(signal.SIGSTOP)
        stopped = time.monotonic()
        await sub.wait_for(lambda s: len(s.stale) == len(uris), timeout=15)
        assert time.monotonic() - stopped <= TOLD_WITHIN
        assert [f["up"] for f in seen if f["op"] == "src"] == [False]
        count = len(seen)

        adapter.process.signal(signal.SIGCONT)
        await sub.wait_for(lambda s: not s.stale, timeout=15)
        back = [f for f in seen[count:] if f["op"] == "src"]
        assert [f["up"] for f in back] == [True]  # the same epoch beats again
        assert static <= {sub.channels[i] for i in back[0]["i"]}
        assert sub.value(uris[0])["ep"] == ep
    finally:
        await watcher.close()


async def test_a_source_that_never_beats_goes_stale_after_the_grace(
    gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    await ensure_store(nc, StoreConfig())
    mute, beating = Publisher(nc), Publisher(nc, ep=Publisher(nc).ep + 1)
    for uri in names[:2]:
        await mute.value(uri)
    for uri in names[2:4]:
        await beating.value(uri)
    await beating.heartbeat("test-beating")
    async with GatewayClient(gateway.ws_url) as client:
        sub = await client.subscribe(names[:4])
        seen = time.monotonic()
        while time.monotonic() - seen < 6.0 and sub.stale_channels != sorted(names[:2]):
            await beating.heartbeat("test-beating")
            with contextlib.suppress(TimeoutError):
                await sub.wait_for(lambda s: bool(s.stale), timeout=0.5)
        assert sub.stale_channels == sorted(names[:2])
        assert time.monotonic() - seen <= TOLD_WITHIN
