"""The archive is asked only for what the bus does not hold of a channel: each gap
(the one before its first block, one between the blocks and the raw history) is
cut where the bus's first value within it is."""

from __future__ import annotations

import numpy as np

from synoptic_gateway.history.busbackend import before, until_held


def held(*t: int) -> np.ndarray:
    return np.array(t, np.int64)


def test_the_leading_gap_ends_at_the_first_value_held() -> None:
    gaps = [(0, 100), (500, 600)]
    assert until_held(gaps, held(90, 95)) == [(0, 90), (500, 600)]
    assert until_held(gaps, held(100, 400)) == [(0, 100), (500, 600)]
    assert until_held(gaps, held(0, 50)) == [(500, 600)]  # held from the start


def test_a_gap_the_raw_history_holds_from_some_value_on_ends_there() -> None:
    # no block covers 500..600; the raw history's oldest message was stored at
    # 560, its value stamped 530 at the source: held from 530, not 560
    gaps = before([(0, 100), (500, 600)], 560)
    assert gaps == [(0, 100), (500, 560)]
    assert until_held(gaps, held(100, 200, 530, 545)) == [(0, 100), (500, 530)]


def test_no_value_held_leaves_the_gaps() -> None:
    assert until_held([(0, 100)], held()) == [(0, 100)]
    assert until_held([], held(50)) == []
