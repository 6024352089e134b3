"""The rules of one alarm: latching, acknowledging, shelving, no data."""

from __future__ import annotations

import asyncio

from synoptic_alarms.index import TreeIndex
from synoptic_alarms.model import NO_DATA, Alarm
from synoptic_schemas.alarms import AlarmFailure
from synoptic_schemas.alarmtree import check_tree
from synoptic_schemas.jsonschemas import validator


def alarm(latch: bool = True) -> Alarm:
    return Alarm("ca://X", "Plant/Area", latch=latch)


def test_an_alarm_latches_until_acknowledged_then_follows_its_source() -> None:
    a = alarm()
    a.source(0, "NO_ALARM", True, 1)
    assert not a.active and not a.worth_publishing()  # quiet: nothing to say
    a.source(2, "HIHI", True, 10, 9.1)
    assert (a.lat, a.since, a.active) == (2, 10, True) and a.worth_publishing()
    a.mark_published(1)
    a.source(1, "HIGH", True, 11)
    a.source(0, "NO_ALARM", True, 12)
    assert (a.sev, a.lat, a.since) == (0, 2, 10)  # cleared, still latched MAJOR
    assert a.acknowledge("alice", 20) is None
    assert not a.active and (a.lat, a.since, a.ack) == (0, 0, None)  # gone
    assert a.acknowledge("alice", 21) == AlarmFailure.NOT_ACTIVE


def test_an_acknowledged_alarm_follows_down_and_alarms_again_when_worse() -> None:
    a = alarm()
    a.source(1, "HIGH", True, 1)
    a.acknowledge("bob", 2)
    assert (a.lat, a.ackd, a.ack) == (1, True, {"by": "bob", "t": 2})
    assert a.acknowledge("bob", 3) is None and a.ack == {"by": "bob", "t": 2}
    a.source(1, "LOW", True, 4)
    assert a.ackd and a.lat == 1
    a.source(2, "HIHI", True, 5)  # worse than what was acknowledged
    assert (a.lat, a.ackd, a.ack) == (2, False, None)
    a.acknowledge("bob", 6)
    a.source(1, "HIGH", True, 7)
    assert (a.lat, a.ackd) == (1, True)  # acknowledged: follows its source down
    assert a.unacknowledge() is None and not a.ackd
    assert a.unacknowledge() == AlarmFailure.NOT_ACKED
    a.source(0, "NO_ALARM", True, 8)
    assert a.lat == 1 and a.since == 1  # unacknowledged again: latched


def test_without_latching_an_alarm_follows_its_source() -> None:
    a = alarm(latch=False)
    a.source(2, "STATE", True, 1)
    a.source(0, "NO_ALARM", True, 2)
    assert not a.active and a.since == 0


def test_a_disconnected_source_is_an_alarm_not_a_clear() -> None:
    a = alarm()
    a.source(0, "NO_ALARM", True, 1)
    a.source(3, "disconnected", False, 2)
    assert (a.sev, a.lat, a.c) == (3, 3, False) and a.active


def test_no_data_hides_the_source_until_it_beats_again() -> None:
    a = alarm()
    a.source(1, "HIGH", True, 1, 5.5)
    a.acknowledge("carol", 2)
    a.mark_published(3)
    a.no_data(10)
    assert (a.sev, a.st, a.c, a.lat, a.ackd) == (3, NO_DATA, False, 3, False)
    assert a.worth_publishing()
    assert a.revive()
    assert (a.sev, a.st, a.c, a.lat) == (1, "HIGH", True, 3)  # the spell latched
    assert not a.revive()


def test_shelving_and_the_published_state() -> None:
    a = alarm()
    assert a.shelve("dave", 5, 100, "maintenance") is None
    assert a.worth_publishing()  # a quiet alarm shelved is news
    msg = a.message("shelve", 6, "dave", "maintenance")
    validator("alarm").validate(msg)
    assert msg["n"] == 1 and msg["shelf"] == {
        "by": "dave", "t": 5, "until": 100, "why": "maintenance"
    }  # fmt: skip
    a.mark_published(msg["n"])
    assert not a.worth_publishing()
    assert a.unshelve() is None and a.unshelve() == AlarmFailure.NOT_SHELVED


def test_a_restored_alarm_is_what_its_stored_state_said() -> None:
    a = alarm()
    a.source(2, "HIHI", True, 10, 1.5)
    msg = a.message("sev", 11)
    b = Alarm.restore(dict(msg), ep=7, seq=8, sseq=9)
    assert (b.lat, b.sev, b.n, b.ep, b.seq, b.sseq, b.v) == (2, 2, 1, 7, 8, 9, 1.5)
    assert not b.worth_publishing()


def test_the_index_places_listed_and_matched_channels() -> None:
    tree = check_tree({
        "name": "P",
        "children": [
            {"name": "A", "channels": ["ca://X:1"], "patterns": ["ca://X:*"],
             "latch": False},
            {"name": "B", "patterns": ["ca://X:*", "tango://*/sr/*/1/current"]},
            {"name": "C", "enabled": False, "patterns": ["ca://Y:*"]},
        ],
    })  # fmt: skip
    index = TreeIndex(tree, 4)
    assert index.lookup("ca://X:1").area == "P/A"  # type: ignore[union-attr]
    matched = index.lookup("ca://X:2")
    assert matched is not None and (matched.area, matched.latch) == ("P/A", False)
    tango = index.lookup("tango://h:10000/sr/dcct/1/current")
    assert tango is not None and tango.area == "P/B"
    assert index.lookup("ca://Y:1") is None  # disabled node
    assert index.lookup("ca://Z") is None
    many = check_tree({"name": "P", "children": [
        {"name": f"N{i}", "patterns": [f"ca://AREA{i}:*"]} for i in range(1000)
    ]})  # fmt: skip
    big = TreeIndex(many)
    assert big.lookup("ca://AREA777:PRESSURE").area == "P/N777"  # type: ignore[union-attr]


async def test_no_adapter_is_called_silent_while_the_service_reads_its_backlog() -> (
    None
):
    """Heartbeats wait behind a backlog of transitions on a busy host: silence is
    judged from when it is read, not from the start (no no-data storm on a restart)."""
    from synoptic_alarms.service import AlarmService
    from synoptic_alarms.settings import AlarmSettings
    from synoptic_bus.alarmtree import TreeEntry
    from synoptic_schemas.screens import RevInfo

    service = AlarmService(None, AlarmSettings())  # type: ignore[arg-type]  # no I/O here
    service.use_tree(TreeEntry(1, {"name": "P", "channels": ["ca://X"]}, RevInfo()))
    x = service.alarm_for("ca://X")
    assert x is not None
    service._source(
        {"ep": 7, "seq": 1, "sev": 2, "st": "HIHI", "c": True, "t": 1}, 1, x
    )
    service.liveness.start(asyncio.get_running_loop().time())
    later = asyncio.get_running_loop().time() + 100  # long past the grace
    service.tick(later)  # the backlog is still being read
    assert (x.st, x.no_data_shown) == ("HIHI", False)
    service._caught_up = True
    service.tick(later)  # caught up: adapter 7 never beat, it is silent now
    assert (x.st, x.c, x.no_data_shown) == (NO_DATA, False, True)
