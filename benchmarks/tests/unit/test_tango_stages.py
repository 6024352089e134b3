"""Stage lines of a Tango subscription (opt-in, for the benchmark)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from synoptic_benchmarks.tango.workers import stage_times

_SCRIPT = """
from synoptic_adapters.tango.stages import stage
stage("want", "bench-tw")
stage("names", "bench/d/1")
stage("names", "bench/d/2")
"""


def _run(enabled: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "SYNOPTIC_TANGO_STAGES"}
    if enabled:
        env["SYNOPTIC_TANGO_STAGES"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    return done.stdout


def test_stage_lines_give_first_and_last_time_of_each_stage() -> None:
    asked_at = time.time()
    output = _run(enabled=True)
    times = stage_times(output, asked_at)
    assert list(times) == ["want", "names"]
    assert all(0 <= first <= last < 60 for first, last in times.values())
    assert times["want"][0] <= times["names"][0]


def test_no_stage_lines_unless_asked() -> None:
    assert _run(enabled=False) == ""
    assert stage_times("tango worker x: every event subscription live", 0.0) == {}
