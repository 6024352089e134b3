"""Smoke runs of the load-test kit: the orchestrator starts nats-server, the
synthetic publisher and a real gateway, runs a short k6 scenario and writes its
results; the tests assert on that JSON (small and short, so the kit never rots)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "run.py"

pytestmark = pytest.mark.system


def run_scenario(out: Path, scenario: str, *options: str) -> dict:
    """Run ``loadtest/run.py`` as a process; return its result.json."""
    argv = [
        sys.executable,
        str(RUN),
        "--scenario",
        scenario,
        "--out",
        str(out),
        *options,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=110)
    result_path = out / "result.json"
    assert result_path.exists(), f"no result.json:\n{done.stdout}\n{done.stderr}"
    result = json.loads(result_path.read_text())
    assert done.returncode == (0 if result["pass"] else 1), done.stderr
    return result


def assert_clean(result: dict) -> None:
    """No protocol errors, no unexpected closes, no gaps, no replays. (Latency
    thresholds are not asserted here: on a loaded CI machine they measure the
    machine; the smoke runs prove the kit works and the data path is exact.)"""
    for metric in ("update_gaps", "protocol_errors", "unexpected_closes"):
        assert all(result["k6"]["thresholds"][metric].values()), metric
    metrics = result["metrics"]
    assert metrics["errors"] == 0, result["k6"]["output_tail"]
    assert metrics["unexpected_closes"] == 0, metrics["closes_by_code"]
    assert metrics["gaps"] == 0
    assert metrics["regressions"] == 0


def test_fanout_smoke_delivers_every_update(tmp_path: Path) -> None:
    viewers, channels, rate, seconds = 3, 20, 10, 6
    result = run_scenario(tmp_path, "fanout", "--vus", str(viewers),
                          "--channels", str(channels), "--rate", str(rate),
                          "--duration", str(seconds))  # fmt: skip

    assert_clean(result)
    assert all(result["k6"]["thresholds"]["screens_opened"].values())
    metrics = result["metrics"]
    # no gap means nothing was lost; the count shows the viewers kept reading
    # (at least half of what was published while they watched, a CI margin)
    offered_per_viewer = channels * rate * seconds
    assert metrics["updates"] >= viewers * offered_per_viewer / 2
    assert metrics["screens_opened"] == viewers
    assert metrics["screen_open_ms"]["count"] == viewers
    assert 0 < metrics["screen_open_ms"]["max"] < 5000
    assert 0 <= metrics["latency_ms"]["p50"] <= metrics["latency_ms"]["p99"] < 5000
    # server-side samples of every process the orchestrator started
    for role in ("gateway", "nats", "source", "k6"):
        assert result["processes"][role]["rss_max_mib"] > 0, role
    assert result["throughput"]["deliveries_per_s"] > 0
    assert result["timeseries"]["latency"]["p95"], "latency over time"
    assert sum(result["timeseries"]["throughput"]["updates_per_s"]) > 0
    html = (tmp_path / "report.html").read_text()
    assert "echarts.init" in html and (tmp_path / "echarts.min.js").exists()


def test_storm_smoke_opens_every_screen(tmp_path: Path) -> None:
    viewers = 20
    result = run_scenario(tmp_path, "storm", "--vus", str(viewers), "--channels", "50",
                          "--storm-s", "1", "--duration", "5")  # fmt: skip

    assert_clean(result)
    opened = result["metrics"]["screen_open_ms"]
    assert result["metrics"]["screens_opened"] == viewers
    assert opened["count"] == viewers
    assert 0 < opened["p95"] <= opened["max"] < 5000  # contract 2 s; CI margin
    assert result["metrics"]["updates"] > 0


def test_fanout_over_two_gateways_on_a_nats_cluster(tmp_path: Path) -> None:
    viewers, channels, rate, seconds = 4, 10, 10, 5
    result = run_scenario(tmp_path, "fanout", "--vus", str(viewers),
                          "--channels", str(channels), "--rate", str(rate),
                          "--duration", str(seconds), "--nats-nodes", "3",
                          "--gateways", "2")  # fmt: skip

    assert result["stack"]["nats_nodes"] == 3
    assert len(result["stack"]["gateway_urls"]) == 2
    assert_clean(result)
    metrics = result["metrics"]
    assert metrics["screens_opened"] == viewers
    assert metrics["updates"] >= viewers * channels * rate * seconds / 2
    assert result["processes"]["gateway"]["cpu_avg_pct"] > 0


def test_waveform_smoke_reports_bytes_per_viewer_full_and_reduced(
    tmp_path: Path,
) -> None:
    """The waveform scenario: viewers of a 100 000-point array at 1 Hz, full and
    with sub.pts 1024; the report's bytes/s per viewer show the difference."""
    common = ("--vus", "3", "--rate", "1", "--duration", "6")
    full = run_scenario(tmp_path / "full", "waveform", *common, "--pts", "0")
    reduced = run_scenario(tmp_path / "reduced", "waveform", *common, "--pts", "1024")
    for result in (full, reduced):
        assert_clean(result)
        assert result["metrics"]["updates"] >= 3 * 3  # >= half of 6 s at 1 Hz each
    full_bps = full["throughput"]["bytes_per_s_per_viewer"]
    reduced_bps = reduced["throughput"]["bytes_per_s_per_viewer"]
    assert full_bps > 400_000  # ~800 kB per update
    assert reduced_bps < 40_000  # ~12 kB per update
