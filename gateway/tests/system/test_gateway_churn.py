"""Sockets that keep joining and leaving groups under a steady update stream never
see a gap: each join's snapshot plus the updates after it hold every value, for
joins of existing groups and for groups created anew (the store barrier)."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

pytestmark = pytest.mark.system

#: The most a churning client goes on past its time to make its joins.
MORE_S = 30.0


class GapCounter:
    """Checks one client's frames: after a ``snap`` (answering a ``sub``, or the
    catch-up of a socket that fell behind), each channel's updates continue its
    snapshot's ``seq`` by exactly 1."""

    def __init__(self) -> None:
        self.last: dict[int, list[int | None]] = {}  # sid -> seq per index
        self.gaps: list[tuple[int, int, int, int]] = []  # (sid, index, had, got)
        # the same on a channel's first update after its snapshot (the window
        # between a new NATS subscription and the last-value read, now closed)
        self.snapshot_gaps: list[tuple[int, int, int, int]] = []
        self.fresh: dict[int, set[int]] = {}  # sid -> indexes not updated since snap
        self.updates = 0
        self.joins = 0

    def on_frame(self, frame: dict[str, Any]) -> None:
        op = frame["op"]
        if op == "snap":
            self.joins += frame["id"] is not None
            self.last[frame["sid"]] = [v["seq"] if v else None for v in frame["val"]]
            self.fresh[frame["sid"]] = set(range(len(frame["val"])))
        elif op == "upd":
            seqs = self.last[frame["sid"]]  # never an update before its snapshot
            fresh = self.fresh[frame["sid"]]
            for i, value in zip(frame["i"], frame["val"], strict=True):
                had = seqs[i]
                if had is not None and value["seq"] != had + 1:
                    found = self.snapshot_gaps if i in fresh else self.gaps
                    found.append((frame["sid"], i, had, value["seq"]))
                fresh.discard(i)
                seqs[i] = value["seq"]
                self.updates += 1
        elif op == "unsub":  # acknowledged: nothing more of that membership
            self.last.pop(frame["sid"], None)
            self.fresh.pop(frame["sid"], None)


async def _churn(
    gateway: GatewayProc,
    screens: list[list[str]],
    until: float,
    seed: int,
    hold: float | None = None,
    min_joins: int = 0,
) -> GapCounter:
    """Subscribe a random screen, hold it (``hold`` s, default random up to
    0.15 s), unsubscribe; again until ``until``, and on until ``min_joins``
    subscriptions were made (a busy machine makes fewer in the time; at most
    ``MORE_S`` longer)."""
    counter = GapCounter()
    client = GatewayClient(gateway.ws_url, on_frame=counter.on_frame)
    await client.connect()
    rng = random.Random(seed)
    joins = 0
    while (now := time.monotonic()) < until or (
        joins < min_joins and now < until + MORE_S
    ):
        joins += 1
        sub = await client.subscribe(rng.choice(screens))
        await asyncio.sleep(rng.uniform(0.0, 0.15) if hold is None else hold)
        await client.unsubscribe(sub)
    await client.close()
    return counter


async def test_joins_of_existing_groups_under_updates_never_gap(
    gateway: GatewayProc, publisher: Publisher, names: list[str], nc: NatsClient
) -> None:
    channels = names[:40]
    # overlapping screens: groups share channels, joins land on in-flight batches
    screens = [channels[:20], channels[10:30], channels[20:40], channels]
    for uri in channels:
        await publisher.value(uri)
    await nc.flush()
    anchors = [GatewayClient(gateway.ws_url) for _ in screens]
    for anchor, screen in zip(anchors, screens, strict=True):
        await anchor.connect()
        await anchor.subscribe(screen)  # every group stays open: joins are joins
    stop = asyncio.Event()

    async def stream() -> None:  # every channel at ~50 Hz
        while not stop.is_set():
            for uri in channels:
                await publisher.value(uri)
            await asyncio.sleep(0.02)

    streamer = asyncio.create_task(stream())
    until = time.monotonic() + 10
    counters = await asyncio.gather(
        *(_churn(gateway, screens, until, seed, min_joins=20) for seed in range(6))
    )
    stop.set()
    await streamer
    for anchor in anchors:
        await anchor.close()
    joins = sum(c.joins for c in counters)
    updates = sum(c.updates for c in counters)
    assert joins >= 6 * 20, joins  # it churned
    assert updates > 2_000, updates
    assert [g for c in counters for g in c.gaps] == []
    assert [g for c in counters for g in c.snapshot_gaps] == []


@pytest.mark.parametrize("linger", ["0", "5"], ids=["fresh", "lingering"])
async def test_fresh_groups_on_hot_channels_never_gap(
    nats_server: NatsServer, publisher: Publisher, names: list[str], linger: str
) -> None:
    """Each ``sub`` creates the group anew (nobody else watches the channel): live
    subscription, then the last-value store, while the channel changes every few
    ms behind bursts of other channels' values that keep the stream's ingest
    busy. A value published just before the subscription may still sit in the
    stream's ingest queue when a Direct Get answers: neither in the snapshot nor
    live. The gateway's store barrier (an acknowledged publish into the stream
    before the read) closes that window: no gap at all. Without it this test saw
    5-11 gaps in ~300 fresh groups (``--no-snapshot-barrier``).

    With ``--linger 5`` the same churn re-opens groups whose channels kept their
    subscriptions (no store read at all): just as gap-free."""
    gateway = start_gateway(nats_server.url, "--linger", linger)
    channels = names[:4]
    fillers = names[100:200]
    for uri in channels:
        await publisher.value(uri)
        await publisher.meta(uri)  # (a channel without metadata is read each time)
    stop = asyncio.Event()

    async def blast() -> None:  # 1000 other values, then each hot channel
        while not stop.is_set():
            for _ in range(10):
                for uri in fillers:
                    await publisher.value(uri)
            for uri in channels:
                await publisher.value(uri)
            await asyncio.sleep(0.002)

    blaster = asyncio.create_task(blast())
    until = time.monotonic() + 10
    # one channel per client, ~40 frames/s each (under the rate limit of 50)
    counters = await asyncio.gather(
        *(
            _churn(gateway, [[uri]], until, seed, 0.045, min_joins=25)
            for seed, uri in enumerate(channels)
        )
    )
    stop.set()
    await blaster
    metrics = gateway.metrics()
    gateway.stop()
    joins = sum(c.joins for c in counters)
    assert joins >= 4 * 25, joins  # it churned
    assert [g for c in counters for g in c.gaps] == []
    assert [g for c in counters for g in c.snapshot_gaps] == []
    assert metrics["synoptic_gateway_snapshot_rereads_total"] == 0
    reads = metrics["synoptic_gateway_snapshot_seconds_count"]
    if linger == "0":
        assert reads >= joins  # every group was new: one store read each
    else:
        assert reads <= 4  # only the first open of each channel read the store
