"""Tango workers' epochs: distinct even when started in the same millisecond."""

from __future__ import annotations

import time
from itertools import pairwise

from synoptic_adapters.tango.supervisor import next_epoch


def test_an_epoch_is_now_in_ms_when_that_is_later() -> None:
    before = time.time_ns() // 1_000_000
    assert next_epoch(0) >= before


def test_epochs_given_at_once_are_distinct_and_increasing() -> None:
    last = time.time_ns() // 1_000_000
    given = []
    for _ in range(1000):  # far more than one millisecond's worth
        last = next_epoch(last)
        given.append(last)
    assert all(b > a for a, b in pairwise(given))
