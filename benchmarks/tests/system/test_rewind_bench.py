"""``make bench-rewind`` at a small scale: every case runs and reports (the full
run's numbers are in ``docs/benchmarks.md``)."""

import json
import subprocess
import sys

import pytest


@pytest.mark.timeout(330)  # the run's own bound is 300 s; busy machines need 2 min+
def test_rewind_bench_smoke() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "synoptic_benchmarks.rewind", "--rounds", "5",
         "--repeats", "2", "--play-history", "4", "--window", "1", "--pairs", "1"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    at = report["at"]
    assert at["oldest"]["values"] == at["newest"]["values"] == 1000
    assert at["before_first"]["not_kept"] == 100
    play = report["play"]
    assert play["end"] == "now" and play["frames"] > 0 and play["values_per_frame"] > 0
    for case in ("viewers", "viewers_history_process"):
        viewers = report[case]
        assert viewers["alone"]["n"] > 0 and viewers["during"]["n"] > 0
        asked = viewers["rewinder_requests"]
        assert asked["errors"] == 0 and asked["play"] > 0 and asked["frames"] > 0
        assert viewers["cpu_s"]["during"]["history_process" if "process" in case
                                          else "gateway"] > 0  # fmt: skip
