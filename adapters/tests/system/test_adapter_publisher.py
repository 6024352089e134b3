"""The publisher against a real nats-server: seq, payloads, disconnects, overflow,
republish after a NATS restart."""

from __future__ import annotations

import asyncio
from typing import Any

from synoptic_adapters.publisher import Publisher
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last
from synoptic_schemas import (
    Subjects,
    decode_meta,
    decode_sev,
    decode_value,
    parse_channel,
)

SUBJECTS = Subjects()


async def collect(nc: NatsClient, subject: str) -> tuple[list[Any], asyncio.Event]:
    received: list[Any] = []
    changed = asyncio.Event()

    async def on_msg(msg: Any) -> None:
        received.append(msg)
        changed.set()

    await nc.subscribe(subject, cb=on_msg)
    await nc.flush()
    return received, changed


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while True:
            if predicate():
                return
            await asyncio.sleep(0.01)


async def test_values_carry_gap_free_seq_from_one_and_the_epoch(nc: NatsClient) -> None:
    channel = parse_channel("ca://PUB:SEQ")
    received, _ = await collect(nc, SUBJECTS.val(channel))
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=1234)
    await publisher.start()
    for i in range(100):
        publisher.value(channel, float(i), t=1_000_000_000 + i, sev=i % 3, st="X")
    await wait_until(lambda: len(received) == 100)
    values = [decode_value(m.data) for m in received]
    assert [v["seq"] for v in values] == list(range(1, 101))
    assert [v["v"] for v in values] == [float(i) for i in range(100)]
    assert values[7] == {
        "ver": 1, "v": 7.0, "t": 1_000_000_007, "sev": 1, "st": "X", "seq": 8,
        "ep": 1234, "c": True,
    }  # fmt: skip
    assert publisher.stats.published == 100
    await publisher.stop()


async def test_disconnected_and_meta_messages(nc: NatsClient) -> None:
    channel = parse_channel("ca://PUB:DISC")
    values, _ = await collect(nc, SUBJECTS.val(channel))
    metas, _ = await collect(nc, SUBJECTS.meta(channel))
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=99)
    await publisher.start()
    publisher.meta(channel, {"dt": "f8", "shape": [], "w": True, "unit": "mm"})
    publisher.value(channel, 1.5, t=5, sev=0, st="NO_ALARM")
    publisher.disconnected(channel, "disconnected")
    await wait_until(lambda: len(values) == 2 and len(metas) == 1)
    gone = decode_value(values[1].data)
    assert (gone["v"], gone["sev"], gone["c"], gone["st"], gone["seq"]) == (
        None, 3, False, "disconnected", 2,
    )  # fmt: skip
    meta = decode_meta(metas[0].data)
    assert (meta["unit"], meta["dt"], meta["ep"]) == ("mm", "f8", 99)
    assert publisher.connected_count == 0 and publisher.channel_count == 1
    await publisher.stop()


async def test_severity_transitions_go_on_their_own_subject_only_when_they_change(
    nc: NatsClient,
) -> None:
    channel = parse_channel("ca://PUB:SEV")
    values, _ = await collect(nc, SUBJECTS.val(channel))
    transitions, _ = await collect(nc, "cs.sev.>")
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=42)
    await publisher.start()
    steps = [(0, "NO_ALARM")] * 3 + [(1, "HIGH"), (2, "HIHI"), (2, "HIHI"),
             (2, "HIHI"), (2, "LOLO"), (0, "NO_ALARM"), (0, "NO_ALARM")]  # fmt: skip
    for i, (sev, st) in enumerate(steps):
        publisher.value(channel, float(i), t=100 + i, sev=sev, st=st)
    publisher.disconnected(channel, "disconnected")
    publisher.disconnected(channel, "disconnected")
    await wait_until(lambda: len(values) == len(steps) + 2 and len(transitions) == 6)
    assert {m.subject for m in transitions} == {"cs.sev.ca.PUB:SEV"}
    sevs = [decode_sev(m.data) for m in transitions]
    # the first value, each change of severity or status, the disconnect
    assert [(s["seq"], s["sev"], s["st"], s["c"]) for s in sevs] == [
        (1, 0, "NO_ALARM", True), (4, 1, "HIGH", True), (5, 2, "HIHI", True),
        (8, 2, "LOLO", True), (9, 0, "NO_ALARM", True), (11, 3, "disconnected", False),
    ]  # fmt: skip
    assert sevs[1] == {"ver": 1, "sev": 1, "st": "HIGH", "c": True, "t": 103,
                       "seq": 4, "ep": 42, "v": 3.0}  # fmt: skip
    assert "v" not in sevs[-1]
    assert publisher.stats.sev_published == 6
    await publisher.stop()


async def test_transitions_are_never_dropped_for_values(nc: NatsClient) -> None:
    channels = [parse_channel(f"ca://PUB:STORM{i}") for i in range(50)]
    transitions, _ = await collect(nc, "cs.sev.ca.>")
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=1, max_queue=10)
    await publisher.start()
    for round_ in range(4):  # no await: all of it queued before a flush
        for channel in channels:
            publisher.value(channel, round_, t=round_, sev=round_ % 2, st="")
    assert publisher.stats.dropped == 190 and publisher.stats.sev_dropped == 190
    await wait_until(lambda: len(transitions) >= 60)
    await asyncio.sleep(0.2)
    latest = {m.subject: decode_sev(m.data) for m in transitions}
    # 10 queued, then each channel's latest state: every channel ends on sev 1
    assert len(transitions) == 60 and len(latest) == 50
    assert {(s["seq"], s["sev"]) for s in latest.values()} == {(4, 1)}
    await publisher.stop()


async def test_overflow_drops_and_counts_but_ends_on_the_latest_value(
    nc: NatsClient,
) -> None:
    channel = parse_channel("ca://PUB:OVER")
    received, _ = await collect(nc, SUBJECTS.val(channel))
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=1, max_queue=10)
    await publisher.start()
    for i in range(1000):  # no await: the flusher cannot run in between
        publisher.value(channel, i, t=i, sev=0, st="")
    assert publisher.stats.dropped == 990
    await wait_until(lambda: received and decode_value(received[-1].data)["v"] == 999)
    await asyncio.sleep(0.2)
    values = [decode_value(m.data) for m in received]
    assert len(values) == 11  # the 10 queued, then the latest
    assert values[-1]["seq"] == 1000  # the consumer sees the gap in seq
    await publisher.stop()


async def test_sustains_a_burst_of_100k_updates_over_5000_channels(
    nc: NatsClient,
) -> None:
    channels = [parse_channel(f"ca://PUB:BULK{i}") for i in range(5000)]
    count = 0
    done = asyncio.Event()

    async def on_msg(_msg: Any) -> None:
        nonlocal count
        count += 1
        if count == 100_000:
            done.set()

    await nc.subscribe("cs.val.ca.>", cb=on_msg)
    await nc.flush()
    publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=1)
    await publisher.start()
    for round_ in range(20):
        for channel in channels:
            publisher.value(channel, round_, t=round_, sev=0, st="")
        await asyncio.sleep(0)
    async with asyncio.timeout(60):
        await done.wait()
    assert publisher.stats.dropped == 0 and publisher.stats.published == 100_000
    await publisher.stop()


async def test_republishes_everything_after_nats_restarts() -> None:
    server = NatsServer().start()
    try:
        publisher: Publisher | None = None

        async def restore() -> None:
            await ensure_store(nc, StoreConfig())
            assert publisher is not None
            publisher.republish_all()

        reconnected = asyncio.Event()

        async def on_reconnect() -> None:
            asyncio.get_running_loop().create_task(restore()).add_done_callback(
                lambda _t: reconnected.set()
            )

        nc = await connect(server.url, name="pub-test", on_reconnect=on_reconnect)
        await ensure_store(nc, StoreConfig())
        publisher = Publisher(nc, SUBJECTS, "pub-test", epoch_ms=7)
        await publisher.start()
        channels = [parse_channel(f"ca://PUB:RE:{i}") for i in range(50)]
        for i, channel in enumerate(channels):
            publisher.meta(channel, {"dt": "i4", "shape": [], "w": False})
            publisher.value(channel, i, t=i, sev=0, st="")
        await wait_until(lambda: publisher.stats.published == 50)
        transitions, _ = await collect(nc, "cs.sev.>")  # kept across the reconnect
        server.restart()  # memory stream: the store is empty afterwards
        async with asyncio.timeout(30):
            await reconnected.wait()
        subjects = [SUBJECTS.val(c) for c in channels]
        subjects += [SUBJECTS.meta(c) for c in channels]
        async with asyncio.timeout(10):
            while True:
                snap = await fetch_last(nc, subjects)
                if len(snap.messages) == 100:
                    break
                await asyncio.sleep(0.05)
        last = decode_value(snap.messages[SUBJECTS.val(channels[42])])
        assert (last["v"], last["seq"], last["ep"]) == (42, 1, 7)
        assert publisher.stats.republished >= 100
        await wait_until(lambda: len(transitions) >= 50)  # each latest, once more
        again = decode_sev(transitions[-1].data)
        assert (again["seq"], again["ep"], again["sev"]) == (1, 7, 0)
        await publisher.stop()
        await nc.close()
    finally:
        server.close()
