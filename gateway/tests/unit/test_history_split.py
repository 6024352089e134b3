"""The archive is asked only for what the bus does not hold of a channel: each gap
(the one before its first block, one between the blocks and the raw history) is
cut where the bus's first value within it is."""

from __future__ import annotations

import numpy as np

from synoptic_gateway.history.busbackend import before, until_held
from synoptic_gateway.history.hdbpp import HdbppArchive
from synoptic_gateway.history.service import _within
from synoptic_schemas.series import Columns


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


def test_an_archive_row_in_the_microsecond_of_the_first_value_held_is_the_bus_s() -> (
    None
):
    # the bus holds from 1_000_278 ns on; the archive keeps times to the
    # microsecond: its row at 1_000_000 is that value, one at 999_000 is before it
    cols = Columns(held(999_000, 1_000_000), np.array([1.0, 2.0]),
                   np.zeros(2, np.uint8), 0)  # fmt: skip
    gaps = until_held([(0, 2_000_000)], held(1_000_278))
    assert _within(cols, gaps, HdbppArchive.resolution_ns).t.tolist() == [999_000]
    assert _within(cols, gaps).t.tolist() == [999_000, 1_000_000]  # to the ns
