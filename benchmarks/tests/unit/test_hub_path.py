"""The in-process hub measurement drives the real hub path end to end (no servers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synoptic_benchmarks.gateway.hub_path import FIGURES, gateway_dir, main, measure

ROOT = Path(__file__).parents[3]


async def test_every_update_reaches_the_member_and_is_timed() -> None:
    # measure() asserts that the member was handed channels x (bursts + 1) updates
    result = await measure(channels=1200, bursts=2)  # > batch_max: inline flushes
    assert result["channels"] == 1200 and result["bursts"] == 2
    for key in FIGURES:
        assert result[key] > 0
    assert result["us_per_update_min"] <= result["us_per_update_median"]


def test_compare_takes_a_checkout_root_or_its_gateway_folder() -> None:
    assert gateway_dir(ROOT) == gateway_dir(ROOT / "gateway") == ROOT / "gateway"


def test_compare_refuses_a_folder_without_the_gateway(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--compare", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "no synoptic_gateway/hub.py" in capsys.readouterr().err
