"""The PV Access adapter when its server disappears mid-stream and comes back, and
split over two shards."""

from __future__ import annotations

from typing import Any

import pytest

from synoptic_adapters.testing import EpicsAdapter, SimPva, Tap, bus_put, eventually
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_schemas import decode_heartbeat

pytestmark = pytest.mark.system


async def test_a_server_gone_mid_stream_is_published_and_followed_back(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    sim = SimPva(records=2, image_rate=0).start()
    names = ["CNT:00000", "CNT:00001", "SINE", "TABLE", "MOTOR"]
    adapter = EpicsAdapter(
        nats_server.url, sim, [sim.uri(n) for n in names], protocol="pva"
    )
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        counter = sim.uri("CNT:00000")
        await eventually(lambda: len(tap.values[counter]) >= 3, timeout=20)
        sim.kill()  # gone without a goodbye
        for name in names:
            gone = await eventually(
                lambda n=name: tap.latest(sim.uri(n))
                if not tap.latest(sim.uri(n))["c"] else None,
                timeout=60,
            )  # fmt: skip
            assert (gone["sev"], gone["v"], gone["st"]) == (3, None, "disconnected")
        reply = await bus_put(nc, sim.uri("SP"), 1.0, timeout=1.0)
        assert (reply["ok"], reply["err"]) == (False, "disconnected")
        before = len(tap.values[counter])
        sim.start()  # same port
        back = await eventually(
            lambda: tap.latest(counter) if tap.latest(counter)["c"] else None,
            timeout=60,
        )
        assert back["v"] >= 1 and back["sev"] == 0
        seqs = [v["seq"] for v in tap.values[counter][before - 1 :]]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one epoch, no gap
        for name in names:
            await eventually(lambda n=name: tap.latest(sim.uri(n))["c"], timeout=60)
        assert adapter.process is not None and adapter.process.alive()
    finally:
        adapter.close()
        sim.stop()


async def test_two_shards_split_the_channels_and_each_beats(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    sim = SimPva(records=12, image_rate=0, extras=False).start()
    uris = [sim.uri(f"CNT:{i:05d}") for i in range(12)]
    shards = [
        EpicsAdapter(nats_server.url, sim, uris, protocol="pva", shard=f"{i}/2")
        for i in range(2)
    ]
    try:
        for shard in shards:
            shard.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        beats: dict[str, dict] = {}

        async def on_beat(msg: Any) -> None:
            beat = decode_heartbeat(msg.data)
            beats[beat["id"]] = beat

        await nc.subscribe("cs.hb.*", cb=on_beat)
        await eventually(lambda: all(len(tap.values[u]) >= 3 for u in uris), 30)
        await eventually(
            lambda: all(s.id in beats and beats[s.id]["conn"] > 0 for s in shards), 30
        )
        counts = [beats[s.id]["n"] for s in shards]
        assert sum(counts) == len(uris) and all(n > 0 for n in counts)
        assert all(beats[s.id]["proto"] == "pva" for s in shards)
        # one owner per channel: a single sequence per channel, no duplicates
        for uri in uris:
            seqs = [v["seq"] for v in tap.values[uri]]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    finally:
        for shard in shards:
            shard.close()
        sim.stop()
