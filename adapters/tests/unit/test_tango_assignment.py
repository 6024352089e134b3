"""Dealing whole Tango devices out to subscription workers."""

from __future__ import annotations

from collections import Counter

from synoptic_adapters.tango.assignment import Assignment, WorkerShard
from synoptic_schemas import parse_channel


def _channels(devices: int, attributes: int, host: str = "h:1") -> list:
    return [
        parse_channel(f"tango://{host}/bench/d/{d}/a{n}")
        for d in range(1, devices + 1)
        for n in range(attributes)
    ]


def test_ten_devices_over_five_workers_are_two_each() -> None:
    assignment = Assignment(5)
    dealt = assignment.deal(_channels(10, 400))
    assert sorted(len(devices) for devices in dealt.values()) == [2] * 5
    assert Counter(assignment.owner.values()) == dict.fromkeys(range(5), 2)


def test_uneven_counts_and_sizes() -> None:
    assignment = Assignment(4)
    assignment.deal(_channels(10, 3))
    assert sorted(Counter(assignment.owner.values()).values()) == [2, 2, 3, 3]
    # the largest device first, to the least loaded worker
    assignment = Assignment(2)
    big = [parse_channel(f"tango://h:1/x/y/big/a{n}") for n in range(50)]
    small = _channels(3, 1)
    assignment.deal(small + big)
    assert assignment.owner["h:1/x/y/big"] == 0
    assert Counter(assignment.owner.values()) == {0: 2, 1: 2}


def test_a_device_keeps_its_worker_and_new_ones_fill_the_gaps() -> None:
    assignment = Assignment(3)
    first = assignment.deal(_channels(2, 5))
    assert first == {0: ["h:1/bench/d/1"], 1: ["h:1/bench/d/2"]}
    again = assignment.deal([*_channels(2, 5), parse_channel("tango://h:1/o/t/h/a")])
    assert again == {2: ["h:1/o/t/h"]}
    assert assignment.devices_of(0) == ["h:1/bench/d/1"]


def test_worker_shard_owns_only_its_devices() -> None:
    shard = WorkerShard(0, 1, 1, 2, {"h:1/bench/d/2"})
    assert shard.owns(parse_channel("tango://h:1/bench/d/2/a0"))
    assert not shard.owns(parse_channel("tango://h:1/bench/d/1/a0"))
    shard.devices.add("h:1/bench/d/1")
    assert shard.owns(parse_channel("tango://H:1/Bench/D/1/A0"))
    assert str(shard) == "0/1 worker 1/2"
