"""The in-process hub measurement drives the real hub path end to end (no servers)."""

from __future__ import annotations

from synoptic_benchmarks.gateway.hub_path import FIGURES, measure


async def test_every_update_reaches_the_member_and_is_timed() -> None:
    # measure() asserts that the member was handed channels x (bursts + 1) updates
    result = await measure(channels=1200, bursts=2)  # > batch_max: inline flushes
    assert result["channels"] == 1200 and result["bursts"] == 2
    for key in FIGURES:
        assert result[key] > 0
    assert result["us_per_update_min"] <= result["us_per_update_median"]
