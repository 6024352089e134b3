"""``python -m synoptic_benchmarks.gateway.screens`` end to end, small."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.system


def test_a_short_run_reports_saves_viewers_and_searches() -> None:
    argv = [sys.executable, "-m", "synoptic_benchmarks.gateway.screens", "--saves", "3",
            "--widgets", "50", "--channels", "2000"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    saves = report["saves"]
    assert saves["save_round_trip"]["n"] == 3
    assert saves["viewer_on_other_gateway"]["max_ms"] < 5000
    directory = report["directory"]
    assert directory["listed"] == 2000
    assert directory["totals"]["name start"] == 3  # SR07C:BPM000007, …47, …87
    assert directory["totals"]["nothing"] == 0
