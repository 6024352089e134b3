"""The archive is asked only for what the bus does not hold of a channel: the gap
before its first block is cut where its first value is (a value that reached the
rollup late sits in a block whose window starts after it)."""

from __future__ import annotations

from synoptic_gateway.history.busbackend import until_held


def test_the_leading_gap_ends_at_the_first_value_held() -> None:
    gaps = [(0, 100), (500, 600)]
    assert until_held(gaps, 90) == [(0, 90), (500, 600)]
    assert until_held(gaps, 100) == [(0, 100), (500, 600)]
    assert until_held(gaps, 0) == [(500, 600)]  # held from the start: nothing before


def test_no_value_held_leaves_the_gaps() -> None:
    assert until_held([(0, 100)], None) == [(0, 100)]
    assert until_held([], 50) == []
