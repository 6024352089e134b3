"""The history benchmark runs end to end on a tiny workload and reports every case."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.timeout(330)  # the run's own bound is 300 s; busy machines need 2 min+
def test_history_bench_smoke() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "synoptic_benchmarks.history.bench", "--scale", "0.01",
         "--window", "1", "--pairs", "2"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    read = report["read_reduce"]
    assert read["channels"] == 100 and all(r["errors"] == 0 for r in read["runs"])
    assert read["runs"][0]["points_out"] == read["values_read"]  # fits: all of it
    raw = report["raw"]["read_reduce"]  # the same read without the rollup's blocks
    assert raw["runs"][0]["points_out"] == read["runs"][0]["points_out"]
    assert read["messages"] < raw["messages"] == raw["values_read"]
    trends = report["open_trends"]
    assert trends["trends"] == 20 and trends["errors"] == 0
    assert len(trends["drawn_after_open_ms"]) == 20
    storm = report["storm"]
    assert storm["alone"]["n"] > 0 and storm["during_storm"]["n"] > 0
    assert storm["answered"] == 50 and storm["pairs"] == 2
    assert len(storm["pair_ratios"]) == 2 and storm["alone_vs_alone_ratio"] > 0
    # images beside the fill: every value still read back, none in the raw history
    images = report["images"]
    assert images["images_published"] > 0 and images["arrays_kept"] >= 1
    assert images["blocks"]["coverage"] == images["raw"]["coverage"] == 1.0
    assert images["raw_max_msg"] == 4096
