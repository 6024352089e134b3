"""Unit tests of the orchestrator's pure parts (no servers)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit.plan import (
    DEFAULTS,
    SCENARIO_DIR,
    Plan,
    make_screens,
    window_ms,
)
from kit.report import breaking_point, rates

URIS = [f"sim://lt:c{k:05d}" for k in range(100)]


def test_every_scenario_has_a_script() -> None:
    for name in DEFAULTS:
        assert (SCENARIO_DIR / f"{name}.js").exists(), name


def test_distinct_screens_are_distinct_sets_of_the_asked_size() -> None:
    screens = make_screens(URIS, 50, 40)
    assert len(screens) == 40
    assert all(len(screen) == 50 for screen in screens)
    assert len({frozenset(screen) for screen in screens}) == 40


def test_full_size_screens_are_still_distinct() -> None:
    screens = make_screens(URIS, 0, 5)
    assert len({frozenset(screen) for screen in screens}) == 5


def test_one_screen_is_the_first_channels() -> None:
    assert make_screens(URIS, 10, 1) == [URIS[:10]]


def test_window_fits_sixty_windows() -> None:
    assert window_ms(30) == 1000
    assert window_ms(300) == 5000


def test_rates_are_per_second_deltas() -> None:
    timeline = {"t": [1.0, 2.0, 4.0], "vus": [1, 2, 2], "updates": [0, 100, 500]}
    assert rates(timeline) == {"t": [2.0, 4.0], "vus": [2, 2],
                               "updates_per_s": [100.0, 200.0]}  # fmt: skip


def test_breaking_point_is_the_first_second_delivery_falls_short() -> None:
    plan = Plan("ramp", vus=10, channels=10, rate=10, duration_s=10, format="json")
    per_s = {"t": [3, 4, 5, 6], "vus": [2, 4, 6, 8],
             "updates_per_s": [200, 400, 500, 500]}  # fmt: skip
    latency = {"t": [], "p50": [], "p95": [], "p99": []}
    found = breaking_point(plan, per_s, latency)
    assert found["found"] and found["at_s"] == 5 and found["vus"] == 6
    assert found["max_deliveries_per_s"] == 500
