"""Adapter liveness bookkeeping and the frames that carry it (no servers)."""

from __future__ import annotations

from synoptic_bus.liveness import Liveness
from synoptic_schemas import encode, frames
from synoptic_schemas.jsonschemas import validator

VALUE = {"ver": 1, "v": 1.5, "t": 1, "sev": 0, "st": "NO_ALARM", "seq": 3,
         "ep": 7, "c": True}  # fmt: skip


def test_an_epoch_is_silent_after_three_missed_periods_and_live_when_it_beats() -> None:
    live = Liveness(misses=3, default_period=1.0)
    live.start(0.0)
    live.beat("a", 7, 0.5, now=1.0)
    assert not live.is_silent(7, 2.5)  # 1.5 s = 3 periods of 0.5 s: not yet
    assert live.is_silent(7, 2.6)
    assert live.silent_epochs(2.6) == {7}
    assert live.silent_adapters(2.6) == ["a"]
    live.beat("a", 7, 0.5, now=2.7)
    assert live.silent_epochs(2.8) == set() and live.silent_adapters(2.8) == []


def test_a_restarted_adapter_is_judged_by_its_newest_epoch() -> None:
    live = Liveness()
    live.start(0.0)
    live.beat("a", 7, 1.0, now=0.0)
    live.beat("a", 9, 1.0, now=5.0)  # the restart
    assert live.silent_epochs(5.5) == {7}  # values of the old epoch: no source
    assert live.silent_adapters(5.5) == []  # the adapter itself is fine


def test_an_epoch_never_heard_of_gets_a_grace_from_listening_and_first_sight() -> None:
    live = Liveness(misses=3, default_period=1.0)
    assert not live.is_silent(5, 100.0)  # not listening yet: nothing is known
    live.start(10.0)
    live.saw(5, 10.0)
    assert not live.is_silent(5, 12.9)
    assert live.is_silent(5, 13.1)
    live.saw(6, 20.0)  # first values of a new adapter, its heartbeat not yet in
    assert not live.is_silent(6, 22.0)
    live.beat("b", 6, 1.0, now=22.5)
    assert not live.is_silent(6, 24.0)
    assert live.silent_epochs(24.0) == {5}


def test_the_grace_restarts_after_the_bus_came_back() -> None:
    live = Liveness(misses=3, default_period=1.0)
    live.start(0.0)
    live.beat("a", 7, 1.0, now=0.0)
    live.restart_grace(10.0)  # no heartbeat could arrive while the bus was down
    assert not live.is_silent(7, 12.0)
    assert live.is_silent(7, 13.5)


def test_src_and_snap_stale_frames_match_the_schema() -> None:
    for frame in (frames.src(3, [0, 5, 7], False), frames.src(3, [1], True)):
        validator("frames").validate(frame)
        assert frames.unpack(frames.pack(frame)) == frame
    with_stale = frames.snap(1, 2, ["ca://A", "ca://B"], [VALUE, None], [None, None],
                             stale=[0])  # fmt: skip
    validator("frames").validate(with_stale)
    assert "stale" not in frames.snap(1, 2, ["ca://A"], [VALUE], [None])


def test_pack_snap_with_stale_gives_the_bytes_of_the_generic_encoding() -> None:
    channels = ["ca://A", "ca://B"]
    for stale in ([], [1], [0, 1]):
        raw = frames.pack_snap(7, 2, channels, [encode(VALUE), None], [None, None],
                               stale)  # fmt: skip
        expected = frames.snap(7, 2, channels, [VALUE, None], [None, None], stale)
        assert raw == frames.pack(expected)
        assert frames.unpack(raw).get("stale", []) == stale
