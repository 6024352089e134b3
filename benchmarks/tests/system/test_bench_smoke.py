"""Every ``make bench-*`` of the benchmarks home starts its real parts and prints
one JSON report, with its smallest options (so a benchmark cannot rot unseen
between two full runs). Figures are not judged here, only that they are there."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.system

SHORT = ["--warmup", "1", "--window", "2"]


def run(module: str, *args: str, timeout: float = 110) -> dict[str, Any]:
    argv = [sys.executable, "-m", f"synoptic_benchmarks.{module}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize(("channels", "reads"), [(1000, [1000]), (300, [300])])
def test_store(channels: int, reads: list[int]) -> None:
    # fewer channels than the 1000 of the first read: that read is of all of them
    report = run("bus.store", "--channels", str(channels), "--messages", "2000")
    assert [r["storage"] for r in report["results"]] == ["memory", "file"]
    for result in report["results"]:
        assert sorted(k for k in result if k.startswith("read_")) == [
            f"read_{n}_ms" for n in reads
        ]
        assert all(result[f"read_{n}_ms"] > 0 for n in reads)


def test_epics_adapter() -> None:
    report = run("epics.adapter", "--cases", "100x1", *SHORT)
    (case,) = report["runs"]
    assert case["channels_seen"] == 100 and case["published_updates_per_s"] > 0


@pytest.mark.parametrize("source", ["auto", "synthetic"])
def test_gateway_fanout(source: str) -> None:
    report = run("gateway.fanout", "--cases", "1x100", "--source", source, *SHORT)
    expected = "EPICS adapter" if source == "auto" else "synthetic"
    assert expected in report["source"]  # auto: the adapters are installed here
    (case,) = report["cases"]
    assert case["case"] == "1x100" and case["delivered_per_s"] > 0


def test_gateway_screen_open() -> None:
    report = run("gateway.screen_open", "--channels", "100", "--repeat", "2")
    assert report["results"] and report["machine"]["cpus"]


def test_tango_adapter() -> None:
    # (the throughput path, adapter -> NATS -> counting subscriber, is the EPICS
    # case's: only the subscription timing here)
    report = run("tango.adapter", "--subscription", "2x10", "--reps", "1",
                 "--workers", "2", "--throughput")  # fmt: skip
    (sub,) = report["subscription"]
    assert sub["attributes"] == 20 and report["throughput"] == []
    for client in ("adapter", "pytango_asyncread", "adapter_2_workers"):
        assert sub[client]["subscribed_s"] > 0, client


@pytest.mark.timeout(620)
def test_faults() -> None:
    # about 50 s on a quiet machine, 260 s at load 15: bounded well beyond that
    report = run(
        "faults.bench", "--parts", "sigterm,restarts,hang", "--tries", "1",
        "--demo-tries", "0", "--cluster-tries", "0", "--restarts", "1",
        "--outage", "0", timeout=600,
    )  # fmt: skip
    assert {r["process"] for r in report["sigterm"]} >= {"sim pva", "gateway"}
    assert all(r["tries_left_running"] == 0 for r in report["sigterm"])
    assert [r["restarts"] for r in report["restarts"]] == [1, 1]
    assert report["hanging_host"]["valued_devices"] == 10, report["hanging_host"]


def test_alarms() -> None:
    report = run("alarms.bench", "--channels", "4000", "--storm", "400", "--pages", "1",
                 "--acks", "10", "--window", "3", "--procs", "1", "--no-browser")  # fmt: skip
    steady = report["steady"]
    # 1 % of 4000 channels cross each second and go back the next: 80 states a second
    assert 60 <= steady["states_per_s"] <= 100 and steady["repeats"] == 0
    assert report["storm"]["listed_on_every_socket_page_s"] > 0
    ack = report["ack"]
    assert ack["acks"] == 10 and ack["to_every_socket_page_ms"]["p99"] > 0
