"""A moment of the protocol (ms, µs resolution) as ns: exact to the µs, so a value
stored some ns after the µs asked for is not taken in (``t * 1e6`` in floating
point is off by up to 128 ns for today's times)."""

from __future__ import annotations

import random

from synoptic_gateway.history.moment import ns_of_ms


def test_every_microsecond_of_today_is_exact() -> None:
    rng = random.Random(7)
    for _ in range(100_000):
        us = rng.randrange(1_790_000_000_000_000, 1_800_000_000_000_000)
        t_ms = us / 1000  # what a client sends
        assert ns_of_ms(t_ms) == us * 1000, t_ms


def test_the_float_product_is_not() -> None:
    # the case met: asked for …802 µs, a value stored at …802 042 ns was shown
    t_ms = 1795818914300.802
    assert ns_of_ms(t_ms) == 1795818914300802000 < 1795818914300802042
    assert round(t_ms * 1e6) > 1795818914300802042
