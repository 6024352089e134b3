"""Deterministic sharding: every channel has exactly one owner among n replicas."""

from __future__ import annotations

import subprocess
import sys

import pytest

from synoptic_adapters.sharding import Shard, channel_hash
from synoptic_schemas import parse_channel

CHANNELS = [parse_channel(f"ca://SR{i // 100}:BPM{i % 100}:X") for i in range(5000)]


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_each_channel_has_exactly_one_owner(count: int) -> None:
    shards = [Shard(i, count) for i in range(count)]
    for channel in CHANNELS:
        assert sum(shard.owns(channel) for shard in shards) == 1
    shares = [sum(shard.owns(c) for c in CHANNELS) for shard in shards]
    assert min(shares) > len(CHANNELS) / count * 0.8  # roughly even


def test_the_hash_is_the_same_in_another_process() -> None:
    code = (
        "from synoptic_adapters.sharding import channel_hash;"
        "from synoptic_schemas import parse_channel;"
        "print(channel_hash(parse_channel('ca://SR:DCCT')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert int(out.stdout) == channel_hash(parse_channel("ca://SR:DCCT"))


def test_a_tango_device_has_one_owner_and_devices_spread() -> None:
    devices = [f"tango://h:10000/sim/bench/{d}" for d in range(40)]
    shards = [Shard(i, 4) for i in range(4)]
    owners_by_device = {}
    for device in devices:
        attributes = [parse_channel(f"{device}/attr{a}") for a in range(50)]
        owners = {
            i for i, shard in enumerate(shards) for ch in attributes if shard.owns(ch)
        }
        assert len(owners) == 1, device  # every attribute of a device: one shard
        owners_by_device[device] = owners.pop()
    assert set(owners_by_device.values()) == {0, 1, 2, 3}  # devices still spread


def test_parse_and_reject() -> None:
    assert Shard.parse("2/4") == Shard(2, 4)
    assert str(Shard.parse(" 0/1 ")) == "0/1"
    for bad in ("4/4", "1", "a/b", "-1/2", "0/0"):
        with pytest.raises(ValueError, match="shard"):
            Shard.parse(bad)
