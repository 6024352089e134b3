"""``python -m synoptic_benchmarks.peers.run`` end to end on the Synoptic side (real
soft IOC, EPICS adapter, nats-server, gateway, client processes), with a peer
server that cannot start: the peer is reported as an error and the run goes on.
Coniql itself only runs in ``make bench-peers``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.system


def test_a_short_run_measures_synoptic_and_reports_a_failed_peer() -> None:
    argv = [sys.executable, "-m", "synoptic_benchmarks.peers.run", "--cases", "1x100",
            "--warmup", "1", "--window", "3",
            # our Python has no Coniql: its server exits at once
            "--coniql-python", sys.executable]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["window_s"] == 3 and report["niceness"] >= 0
    (case,) = report["cases"]
    assert case["case"] == "1x100" and "ratios" not in case
    assert "coniql" in case["coniql"]["error"]
    ours = case["synoptic"]
    assert ours["expected_per_s"] == 1000
    assert ours["delivered_per_s"] > 0
    assert ours["seq_gaps"] == 0  # nothing lost after the adapter
    assert set(ours["server_cpu_pct"]) == {"gateway", "adapter", "nats-server", "total"}
    assert ours["server_cpu_pct"]["total"] > 0
    assert ours["server_rss_mib"]["gateway"] > 10
    assert ours["latency_ms"]["p50"] is not None
    assert ours["load_avg_1m"]["start"] >= 0
    (opens,) = report["screen_open"]
    assert opens["coniql"]["error"]
    assert (
        0 < opens["synoptic"]["cold_s"] < 60 and len(opens["synoptic"]["warm_s"]) == 2
    )
