"""The client keeps to the frame rate the gateway announced: a burst at once, then
one frame per 1/rate, and no waiting before the first ``hello``."""

from __future__ import annotations

from synoptic_gateway.client.pace import MARGIN, Pace
from synoptic_gateway.limits import TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_no_limit_before_hello() -> None:
    pace = Pace(Clock())
    assert [pace.delay() for _ in range(1000)] == [0.0] * 1000


def test_a_burst_then_the_rate_and_the_gateway_takes_every_frame() -> None:
    clock = Clock()
    pace = Pace(clock)
    pace.limit({"rate": 50, "burst": 100})
    gateway = TokenBucket(50, 100, clock=clock)
    sent_at: list[float] = []
    for _ in range(1000):  # a program asking in a loop, answers taking no time
        clock.now += pace.delay()
        sent_at.append(clock.now)
        assert gateway.take(), f"frame {len(sent_at)} dropped at {clock.now:.3f} s"
    assert sent_at[int(100 * MARGIN) - 1] == 0.0  # the burst at once
    rate = (len(sent_at) - 100) / (sent_at[-1] - sent_at[99])
    assert abs(rate - 50 * MARGIN) < 0.5, rate


def test_a_new_hello_refills_and_a_missing_rate_lifts_the_limit() -> None:
    clock = Clock()
    pace = Pace(clock)
    pace.limit({"rate": 10, "burst": 2})
    assert pace.delay() == 0.0
    assert pace.delay() > 0.0  # the bucket (1.8 frames) is spent
    pace.limit({"rate": 10, "burst": 2})
    assert pace.delay() == 0.0
    pace.limit({})
    assert pace.delay() == 0.0 and pace.delay() == 0.0
