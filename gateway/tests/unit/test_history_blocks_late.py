"""Reading a channel's blocks: a value that reached the rollup after its window
closed sits in the next (growing) block, and is read from there; a growing block
read after it closed adds nothing twice."""

from __future__ import annotations

import numpy as np

from synoptic_gateway.history.blocks import BlockRead, Coverage, _take
from synoptic_schemas.blocks import encode_block
from synoptic_schemas.series import Columns

S = 1_000_000_000


def cols(*ts: int) -> Columns:
    t = np.array(ts, np.int64)
    return Columns(t, t.astype(np.float64) / S, np.zeros(len(t), np.uint8))


def read(blocks: list[tuple[int, int, Columns, bool]]) -> np.ndarray:
    c, state = Coverage(), BlockRead({})
    for a, b, values, growing in blocks:
        _take(c, encode_block(a, b, values), 0, 100 * S, state, 10**6, growing=growing)
    return Columns.concat(c.parts).t


def test_a_late_value_in_the_current_growing_block_is_read() -> None:
    # window [0, 10 s) closed before the value stamped 9.5 s arrived: it went into
    # the block of [10 s, ...), still growing
    closed = (0, 10 * S, cols(1 * S, 5 * S), False)
    growing = (10 * S, 13 * S, cols(9 * S + S // 2, 11 * S, 12 * S), True)
    assert read([closed, growing]).tolist() == [1 * S, 5 * S, 9 * S + S // 2,
                                                11 * S, 12 * S]  # fmt: skip


def test_a_growing_block_read_after_it_closed_adds_nothing_twice() -> None:
    # the stream still holds the open copy of [0, 10 s) beside its closed block
    closed = (0, 10 * S, cols(1 * S, 5 * S, 9 * S), False)
    stale = (0, 6 * S, cols(1 * S, 5 * S), True)
    assert read([closed, stale]).tolist() == [1 * S, 5 * S, 9 * S]
