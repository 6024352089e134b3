"""The alarm service against a real nats-server: transitions to states, requests,
shelve expiry, no data, tree changes (transitions from a stand-in adapter)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from synoptic_alarms.requests import apply_request
from synoptic_alarms.service import AlarmService
from synoptic_alarms.testing import FakeAdapter, StateTap, request
from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.connect import NatsClient
from synoptic_schemas import Subjects
from synoptic_schemas.alarms import SYSTEM
from synoptic_schemas.jsonschemas import validator

Start = Callable[..., Awaitable[AlarmService]]
TREE = {
    "name": "Plant",
    "children": [
        {"name": "Vacuum", "channels": [
            {"ch": "ca://VAC:P1", "desc": "pump 1"}, "ca://VAC:P2"]},
        {"name": "Magnets", "patterns": ["ca://MAG:*"], "latch": False},
    ],
}  # fmt: skip


async def setup(nc: NatsClient, start: Start, **kw: object) -> tuple:
    service = await start(TREE, **kw)
    prefix = service.settings.prefix
    tap = await StateTap().attach(nc, Subjects(prefix))
    adapter = FakeAdapter(nc, prefix=prefix)
    return service, prefix, tap, adapter


async def test_transitions_latch_and_an_acknowledge_clears_them(
    nc: NatsClient, alarm_service: Start
) -> None:
    _, prefix, tap, adapter = await setup(nc, alarm_service)
    await adapter.beat()
    await adapter.sev("ca://VAC:P1", 0)
    await adapter.sev("ca://OTHER:X", 2)  # not in the tree
    await adapter.sev("ca://VAC:P1", 2, "HIHI", v=9.5)
    state = await tap.wait("ca://VAC:P1", lambda s: s["lat"] == 2)
    validator("alarm").validate(state)
    assert (state["n"], state["ev"], state["area"], state["desc"], state["v"]) == (
        1, "sev", "Plant/Vacuum", "pump 1", 9.5,
    )  # fmt: skip
    await adapter.sev("ca://VAC:P1", 0)
    state = await tap.wait("ca://VAC:P1", lambda s: s["sev"] == 0)
    assert (state["lat"], state["ackd"]) == (2, False)  # latched
    reply = await request(nc, "ack", ["ca://VAC:P1", "ca://VAC:P2", "ca://NOPE:1"],
                          "alice", prefix=prefix)  # fmt: skip
    assert reply == {"ver": 1, "ok": False, "n": 1,
                     "fail": {"ca://VAC:P2": "not_active", "ca://NOPE:1": "unknown"}}  # fmt: skip
    state = await tap.wait("ca://VAC:P1", lambda s: s["ev"] == "ack")
    assert (state["lat"], state["who"], state["n"]) == (0, "alice", 3)
    assert "ca://OTHER:X" not in tap.states and "ca://VAC:P2" not in tap.states
    assert tap.repeats == 0


async def test_pattern_channels_and_requests_refused_whole(
    nc: NatsClient, alarm_service: Start
) -> None:
    service, prefix, tap, adapter = await setup(nc, alarm_service)
    await adapter.sev("ca://MAG:Q1", 1, "HIGH")
    state = await tap.wait("ca://MAG:Q1", lambda s: s["lat"] == 1)
    assert state["area"] == "Plant/Magnets"
    await adapter.sev("ca://MAG:Q1", 0)
    await tap.wait("ca://MAG:Q1", lambda s: s["lat"] == 0)  # no latching there
    for bad in (b"\x93garbage", b"{}"):
        reply = await nc.request(f"{prefix}.alarm.req", bad, timeout=10)
        from synoptic_schemas.alarms import decode_alarm_reply

        answer = decode_alarm_reply(reply.data)
        assert (answer["ok"], answer["err"]) == (False, "bad_request")
    assert service.stats.refused == 2


async def test_shelves_end_by_themselves(nc: NatsClient, alarm_service: Start) -> None:
    _, prefix, tap, adapter = await setup(nc, alarm_service)
    await adapter.sev("ca://VAC:P2", 2)
    await tap.wait("ca://VAC:P2", lambda s: s["lat"] == 2)
    reply = await request(nc, "shelve", ["ca://VAC:P2"], "bob", why="pump swap",
                          minutes=1.5 / 60, prefix=prefix)  # fmt: skip
    assert reply["ok"] and reply["n"] == 1
    state = await tap.wait("ca://VAC:P2", lambda s: "shelf" in s)
    assert state["shelf"]["why"] == "pump swap" and state["who"] == "bob"
    state = await tap.wait("ca://VAC:P2", lambda s: s["ev"] == "unshelve")
    assert state["who"] == SYSTEM and "shelf" not in state and state["lat"] == 2


async def test_silent_adapters_and_unheard_channels_show_no_data(
    nc: NatsClient, alarm_service: Start
) -> None:
    _, _, tap, adapter = await setup(nc, alarm_service, no_data_after=1.0)
    await adapter.beat()
    await adapter.sev("ca://VAC:P1", 0)
    # VAC:P2 is listed and nothing publishes it: no data after a second
    state = await tap.wait("ca://VAC:P2", lambda s: s["ev"] == "nodata")
    assert (state["sev"], state["st"], state["c"], state["lat"]) == (
        3,
        "no data",
        False,
        3,
    )
    beating = True

    async def beat() -> None:
        while beating:
            await adapter.beat()
            await asyncio.sleep(0.3)

    task = asyncio.create_task(beat())
    await asyncio.sleep(1.5)
    assert tap.latest("ca://VAC:P1") is None  # quiet, alive: nothing said
    beating = False
    await task
    state = await tap.wait("ca://VAC:P1", lambda s: s["ev"] == "nodata", timeout=15)
    assert (state["sev"], state["c"], state["lat"]) == (3, False, 3)
    await adapter.beat()  # the adapter is back: its channel's own state again
    state = await tap.wait("ca://VAC:P1", lambda s: s["c"])
    assert (state["sev"], state["lat"], state["ev"]) == (0, 3, "sev")  # latched


async def test_a_channel_that_leaves_the_tree_is_published_gone(
    nc: NatsClient, alarm_service: Start
) -> None:
    service, prefix, tap, adapter = await setup(nc, alarm_service)
    await adapter.sev("ca://VAC:P1", 2)
    await tap.wait("ca://VAC:P1", lambda s: s["lat"] == 2)
    store = await TreeStore.ensure(nc, TreeStoreConfig(service.settings.tree_bucket))
    current = await store.latest()
    moved = {"name": "Plant", "children": [
        {"name": "Pumps", "channels": ["ca://VAC:P2"]}]}  # fmt: skip
    await store.put(moved, current.revision, "carol", "pumps apart")
    state = await tap.wait("ca://VAC:P1", lambda s: s.get("gone", False))
    assert state["ev"] == "tree"
    reply = await request(nc, "ack", ["ca://VAC:P1"], prefix=prefix)
    assert reply["fail"] == {"ca://VAC:P1": "unknown"}


async def test_a_storm_of_5000_transitions_is_stored_within_seconds(
    nc: NatsClient, alarm_service: Start
) -> None:
    tree = {"name": "Storm", "patterns": ["ca://STORM:*"]}
    service = await alarm_service(tree)
    prefix = service.settings.prefix
    tap = await StateTap().attach(nc, Subjects(prefix))
    adapter = FakeAdapter(nc, prefix=prefix)
    t0 = time.monotonic()
    for i in range(5000):
        await adapter.sev(f"ca://STORM:{i:05d}", 2)
    await nc.flush()
    await tap.wait_count(5000, timeout=60)
    assert time.monotonic() - t0 < 30
    await service.publisher.commit(timeout=10)
    assert service.publisher.stats.stored >= 5000 and tap.repeats == 0


async def test_a_persons_acknowledge_goes_ahead_of_a_storms_states_in_channel_order(
    nc: NatsClient, alarm_service: Start
) -> None:
    service = await alarm_service({"name": "Storm", "patterns": ["ca://STORM:*"]})
    tap = await StateTap().attach(nc, Subjects(service.settings.prefix))
    publisher = service.publisher
    await publisher.stop()  # the states wait here: a storm's, then a person's
    storm = [service.alarm_for(f"ca://STORM:{i:04d}") for i in range(3000)]
    for alarm in storm:
        assert alarm is not None
        alarm.source(2, "HIHI", True, time.time_ns())
        service.changed(alarm, "sev")
    first = publisher.added
    request = {"ver": 1, "op": "ack", "ch": [storm[7].ch], "who": "alice", "by": "t"}
    assert apply_request(request, service, time.time_ns())["n"] == 1  # type: ignore[arg-type,index]
    publisher.start()
    await publisher.commit(timeout=30, gens=range(first, publisher.added))
    await tap.wait_count(3000)
    # the acknowledged alarm's storm state went with it, ahead of the others
    assert tap.order[:2] == [(storm[7].ch, 1, "sev"), (storm[7].ch, 2, "ack")]
    await tap.wait(storm[-1].ch, lambda s: s["n"] == 1)
    assert len(tap.order) == 3001 and tap.repeats == 0
    await publisher.commit(timeout=30)
    assert publisher.pending == 0 and publisher.stats.stored == 3001
