"""What the Tango adapter learns, as kept on the bus: keys and documents."""

from __future__ import annotations

import json
import re

from synoptic_adapters.tango.memory import Learned, decode, device_key, encode

KV_KEY = re.compile(r"^[-/_=.a-zA-Z0-9]+$")  # what a NATS KV key may hold


def test_a_device_key_holds_only_what_a_kv_key_may_and_keeps_names_apart() -> None:
    a = device_key("127.0.0.1:10000/sim/standard/1")
    assert a == "127.0.0.1=3A10000/sim/standard/1"
    b = device_key("tg=1:10000/sim/standard/1")  # "=" itself escaped
    assert b == "tg=3D1=3A10000/sim/standard/1"
    assert KV_KEY.match(a) and KV_KEY.match(b)
    assert device_key("h:1/a/b/c") != device_key("h=3A1/a/b/c")


def test_a_document_round_trips_and_bad_ones_are_nothing() -> None:
    learned = {
        "slow": Learned(cost=2.01, strikes=3, next_try=1_800_000_000.5),
        "po_00": Learned(cost=0.01, proven=True),
    }
    assert decode(encode(learned)) == learned
    assert decode(b"not json") == {}
    assert decode(json.dumps({"v": 2, "attrs": {"x": {}}}).encode()) == {}
    extra = {"v": 1, "attrs": {"x": {"cost": 1.0, "later_field": 5}}}
    assert decode(json.dumps(extra).encode()) == {"x": Learned(cost=1.0)}
    assert not Learned(cost=1.0).known and Learned(strikes=1).known
