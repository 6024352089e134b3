"""The gateway bench's per-client bookkeeping (numpy per frame) against the
per-update loop it replaced."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from synoptic_benchmarks.gateway.clients import UpdateCounter, slice_p99s_ms


def _reference(
    frames: list[tuple[int, list[int], list[dict[str, Any]], bool]],
) -> tuple[int, int, int, list[int]]:
    """The bench's older per-update loop: delivered, gaps, value gaps, latencies."""
    delivered = gaps = value_gaps = 0
    latencies: list[int] = []
    last: dict[int, tuple[int, int, Any]] = {}
    for received, indexes, values, counted in frames:
        for i, v in zip(indexes, values, strict=True):
            ep, seq, count = v["ep"], v["seq"], v["v"]
            prev = last.get(i)
            if counted:
                delivered += 1
                if prev is not None and prev[0] == ep and seq > prev[1] + 1:
                    gaps += seq - prev[1] - 1
                if (
                    prev is not None
                    and isinstance(prev[2], float | int)
                    and isinstance(count, float | int)
                    and count > prev[2] + 1
                ):
                    value_gaps += int(count - prev[2] - 1)
                latencies.append(received - v["t"])
            last[i] = (ep, seq, count)
    return delivered, gaps, value_gaps, latencies


def _frames(seed: int) -> list[tuple[int, list[int], list[dict[str, Any]], bool]]:
    """Counting channels with lost updates, epoch changes, disconnects (v None),
    text values, and frames that hold a channel twice (a catch-up)."""
    rng = random.Random(seed)
    channels = 50
    seq = [0] * channels
    ep = [1000] * channels
    frames = []
    for k in range(200):
        n = rng.randint(1, 60)
        indexes = [rng.randrange(channels) for _ in range(n)]
        if rng.random() < 0.7:
            indexes = list(dict.fromkeys(indexes))  # most frames: once each
        values = []
        for i in indexes:
            if rng.random() < 0.02:
                ep[i] += 1
                seq[i] = 0
            seq[i] += rng.choice([1, 1, 1, 1, 2, 5])  # some lost
            roll = rng.random()
            v: Any = float(seq[i]) if roll < 0.9 else None if roll < 0.95 else "OPEN"
            if roll > 0.98:
                v = seq[i]  # an int count
            values.append({"ep": ep[i], "seq": seq[i], "v": v, "t": 10**18 + k})
        frames.append((10**18 + 10**6 * k, indexes, values, 20 <= k < 180))
    return frames


def test_update_counter_counts_what_the_per_update_loop_counted() -> None:
    for seed in range(20):
        frames = _frames(seed)
        counter = UpdateCounter(50)
        for received, indexes, values, counted in frames:
            counter.frame(received, indexes, values, counted)
        delivered, gaps, value_gaps, latencies = _reference(frames)
        assert (counter.delivered, counter.gaps, counter.value_gaps) == (
            delivered,
            gaps,
            value_gaps,
        )
        assert gaps > 0 and value_gaps > 0
        np.testing.assert_array_equal(counter.latencies_ns(), latencies)


def test_update_counter_decoded_latency_adds_each_frames_decode_lag() -> None:
    counter = UpdateCounter(3)
    values = [
        {"ep": 1, "seq": 1, "v": 1.0, "t": 100},
        {"ep": 1, "seq": 1, "v": 1.0, "t": 90},
    ]
    counter.decode_lags.append(7)
    counter.frame(200, [0, 1], values, True)
    np.testing.assert_array_equal(counter.latencies_ns(), [100, 110])
    np.testing.assert_array_equal(counter.latencies_ns(decoded=True), [107, 117])


def test_each_second_of_the_window_gets_its_own_p99() -> None:
    start = 10**18
    counter = UpdateCounter(200)
    # second 0: latencies 1..200 ms; second 1: 1..200 ms plus 50 ms; second 2:
    # too few updates to say (left out)
    for second, extra in ((0, 0), (1, 50)):
        for k in range(2):  # two frames of 100 in each second
            at = start + second * 10**9 + k * 10**8
            values = [{"ep": 1, "seq": second * 2 + k + 1, "v": 1.0,
                       "t": at - (1 + 100 * k + i + extra) * 10**6}
                      for i in range(100)]  # fmt: skip
            counter.frame(at, list(range(100 * k, 100 * k + 100)), values, True)
    counter.frame(start + 2 * 10**9, [0], [{"ep": 1, "seq": 9, "v": 1.0,
                  "t": start}], True)  # fmt: skip
    arrivals, latencies = counter.arrivals_ns(), counter.latencies_ns()
    assert len(arrivals) == len(latencies) == 401
    p99 = [float(np.percentile(np.arange(1, 201) + extra, 99)) for extra in (0, 50)]
    assert slice_p99s_ms(arrivals, latencies, start) == [round(x, 1) for x in p99]
