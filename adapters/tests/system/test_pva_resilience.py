"""The PV Access adapter when its server disappears mid-stream and comes back, when
one of two servers goes, when a server stops answering a put, split over two
shards (configured and wanted channels), and stopped by SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import pytest

from synoptic_adapters.testing import EpicsAdapter, SimPva, Tap, bus_put, eventually
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_heartbeat,
    decode_meta,
    encode,
    parse_channel,
)

pytestmark = pytest.mark.system
SUBJECTS = Subjects()


async def test_a_server_gone_mid_stream_is_published_and_followed_back(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    sim = SimPva(records=2, image_rate=10).start()  # 2 MiB images in flight too
    names = ["CNT:00000", "CNT:00001", "SINE", "TABLE", "MOTOR", "IMAGE"]
    adapter = EpicsAdapter(
        nats_server.url, sim, [sim.uri(n) for n in names], protocol="pva"
    )
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        counter = sim.uri("CNT:00000")
        await eventually(lambda: len(tap.values[counter]) >= 3, timeout=20)
        # this nats-server takes 1 MiB payloads: the 2 MiB image is a status
        image = await eventually(lambda: tap.latest(sim.uri("IMAGE")), timeout=20)
        assert (image["v"], image["sev"], image["c"]) == (None, 3, True)
        assert "exceeds the limit of 1044480 bytes" in image["st"]
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


async def test_one_of_two_servers_gone_leaves_the_others_channels_alone(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """Two servers behind one adapter: the killed one's channels are published
    disconnected, the other's keep counting without a gap, and they come back."""
    first = SimPva(records=1, image_rate=0, extras=False).start()
    second = SimPva(records=1, image_rate=0, extras=False).start()
    gone, kept = first.uri("CNT:00000"), second.uri("CNT:00000")
    addresses = f"127.0.0.1:{first.port} 127.0.0.1:{second.port}"
    adapter = EpicsAdapter(
        nats_server.url, first, [gone, kept], protocol="pva",
        extra={"pva": {"connect_timeout": 2.0, "addr_list": addresses}},
    )  # fmt: skip
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        await eventually(lambda: len(tap.values[gone]) >= 3, timeout=30)
        await eventually(lambda: len(tap.values[kept]) >= 3, timeout=30)
        first.kill()
        down = await eventually(
            lambda: tap.latest(gone) if not tap.latest(gone)["c"] else None, 60
        )
        assert (down["sev"], down["st"]) == (3, "disconnected")
        count = len(tap.values[kept])
        await eventually(lambda: len(tap.values[kept]) >= count + 10, timeout=30)
        seqs = [v["seq"] for v in tap.values[kept]]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # never a gap
        assert all(v["c"] and v["sev"] == 0 for v in tap.values[kept])
        first.start()
        await eventually(lambda: tap.latest(gone)["c"], timeout=60)
        assert adapter.process is not None and adapter.process.alive()
    finally:
        adapter.close()
        first.stop()
        second.stop()


async def test_a_put_the_server_never_answers_times_out(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """A server stopped (SIGSTOP) while connected: the put is answered ``timeout``
    within its own timeout, and the adapter stays responsive."""
    sim = SimPva(records=1, image_rate=0).start()
    adapter = EpicsAdapter(
        nats_server.url, sim, [sim.uri("SP"), sim.uri("CNT:00000")], protocol="pva"
    )
    assert sim.process is not None
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        await eventually(lambda: tap.latest(sim.uri("SP")), timeout=30)
        sim.process.signal(signal.SIGSTOP)  # connected, but answers nothing
        started = time.monotonic()
        # (whether the server had answered the put's get before it stopped or not)
        reply = await bus_put(nc, sim.uri("SP"), 7.0, timeout=1.0)
        assert time.monotonic() - started < 5
        assert (reply["ok"], reply["err"]) == (False, "timeout")
        assert "no completion within 1 s" in reply["msg"]
        sim.process.signal(signal.SIGCONT)
        assert (await bus_put(nc, sim.uri("SP"), 8.0, timeout=10.0))["ok"]
        await eventually(lambda: tap.latest(sim.uri("SP"))["v"] == 8.0, timeout=30)
        assert adapter.process is not None and adapter.process.alive()
    finally:
        adapter.close()
        sim.process.signal(signal.SIGCONT)
        sim.stop()


async def test_two_shards_split_the_channels_and_the_demand_and_each_beats(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """Configured channels and channels wanted later are each owned by one shard:
    both shards hear every announcement, only the owner monitors."""
    sim = SimPva(records=12, image_rate=0, extras=False).start()
    uris = [sim.uri(f"CNT:{i:05d}") for i in range(12)]
    configured, wanted = uris[:8], uris[8:]
    shards = [
        EpicsAdapter(
            nats_server.url, sim, configured, protocol="pva", shard=f"{i}/2",
            extra={"demand": {"sweep_period": 0.2}},
        )
        for i in range(2)
    ]  # fmt: skip
    try:
        for shard in shards:
            shard.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        beats: dict[str, dict] = {}

        async def on_beat(msg: Any) -> None:
            beat = decode_heartbeat(msg.data)
            beats[beat["id"]] = beat

        await nc.subscribe("cs.hb.*", cb=on_beat)
        await eventually(lambda: all(len(tap.values[u]) >= 3 for u in configured), 30)
        await eventually(
            lambda: all(s.id in beats and beats[s.id]["conn"] > 0 for s in shards), 30
        )
        counts = [beats[s.id]["n"] for s in shards]
        assert sum(counts) == len(configured) and all(n > 0 for n in counts)
        assert all(beats[s.id]["proto"] == "pva" for s in shards)
        want = {"ver": SCHEMA_VERSION, "ch": wanted, "lease": 30.0, "by": "test-gw"}
        await nc.publish(SUBJECTS.want("pva"), encode(want))
        await eventually(lambda: all(len(tap.values[u]) >= 5 for u in wanted), 30)
        await eventually(lambda: sum(beats[s.id]["n"] for s in shards) == len(uris), 10)
        # one owner per channel: a single sequence per channel, no duplicates
        for uri in uris:
            seqs = [v["seq"] for v in tap.values[uri]]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert len({v["ep"] for v in tap.values[uri]}) == 1
    finally:
        for shard in shards:
            shard.close()
        sim.stop()


async def test_sigterm_publishes_disconnected_and_exits_cleanly(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    sim = SimPva(records=1, image_rate=0, extras=False).start()
    uri = sim.uri("CNT:00000")
    adapter = EpicsAdapter(nats_server.url, sim, [uri], protocol="pva").start()
    try:
        tap = await Tap().start(nc, "cs.val.pva.>")
        await eventually(lambda: tap.latest(uri) and tap.latest(uri)["c"], 30)
        assert await asyncio.to_thread(adapter.stop) == 0
        stopped = await eventually(
            lambda: tap.latest(uri) if not tap.latest(uri)["c"] else None, 30
        )
        assert (stopped["st"], stopped["sev"]) == ("adapter stopped", 3)
    finally:
        adapter.close()
        sim.stop()


async def test_a_restarted_server_s_pvs_are_back_within_5_s_with_their_new_types(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """A server that sends no beacons (its clients find it by searching alone)
    is killed, away long enough for p4p's own searches to back off beyond 5 s,
    and restarted with SWAP a table; then stopped and restarted at once with
    SWAP a string. Each time every channel is back, SWAP with its new type and
    metadata, within 5 s of the server serving again."""
    sim = SimPva(records=1, image_rate=0, beacons=False).start()
    names = ["CNT:00000", "SINE", "TABLE", "SWAP"]
    adapter = EpicsAdapter(
        nats_server.url, sim, [sim.uri(n) for n in names], protocol="pva"
    )
    swap, counter = sim.uri("SWAP"), sim.uri("CNT:00000")
    metas = await nc.subscribe(SUBJECTS.meta(parse_channel(swap)))
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.pva.>")
        await eventually(lambda: len(tap.values[counter]) >= 3, timeout=30)

        async def restart(
            kind: int, dt: str, away: float, kill: bool
        ) -> tuple[dict, dict]:
            sim.kill() if kill else sim.stop()
            for name in names:
                await eventually(lambda n=name: not tap.latest(sim.uri(n))["c"], 30)
            await asyncio.sleep(away)  # the outage: how long p4p searches alone
            sim.swap_type = kind
            sim.start()
            served = time.monotonic()
            for name in names:
                await eventually(lambda n=name: tap.latest(sim.uri(n))["c"], 30)
            took = time.monotonic() - served
            assert took <= 5.0, f"back {took:.1f} s after the server served again"
            async with asyncio.timeout(10):  # the old type's come first
                while (meta := decode_meta((await metas.next_msg(10)).data))[
                    "dt"
                ] != dt:
                    pass
            return tap.latest(swap), meta

        table, meta = await restart(3, "table", away=20.0, kill=True)
        assert table["v"]["name"] == ["a"] and list(table["v"]["x"]) == [1.0]
        assert [c["name"] for c in meta["cols"]] == ["name", "x"]
        text, meta = await restart(1, "str", away=0.0, kill=False)
        assert (text["v"], text["sev"], meta["dt"]) == ("text", 0, "str")
        assert adapter.process is not None and adapter.process.alive()
    finally:
        await metas.unsubscribe()
        adapter.close()
        sim.stop()
