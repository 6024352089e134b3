"""HDB++ ``data_time`` from nanosecond stamps: exact, one row per microsecond."""

from __future__ import annotations

from datetime import UTC, datetime

from synoptic_bus.hdbpp import data_time


def test_a_stamp_is_truncated_to_its_microsecond() -> None:
    ns = 1_764_114_040_123_456_789
    assert data_time(ns) == datetime(2025, 11, 25, 23, 40, 40, 123456, tzinfo=UTC)


def test_stamps_a_microsecond_apart_never_share_a_row_time() -> None:
    # Through a float (ns / 1e9) some of these pairs round to the same instant.
    base = 1_764_114_040_000_000_000
    for frac in range(0, 1_000_000, 997):
        t = base + frac * 1000 + 499
        times = [data_time(t + k * 1000) for k in range(3)]
        assert times[1] - times[0] == times[2] - times[1]
        assert (times[1] - times[0]).microseconds == 1
