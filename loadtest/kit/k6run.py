"""Run one k6 scenario bounded in time, polling its REST API once a second for the
time series (delivered updates, VUs), and read its end-of-test summary."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kit.plan import LOADTEST, Plan
from synoptic_bus.procs import free_port

K6 = LOADTEST / "bin" / "k6"
BUNDLE = LOADTEST / "bin" / "msgpack.js"

#: Counters whose per-second deltas make the throughput plot.
POLLED_COUNTERS = ("updates", "upd_frames", "update_gaps", "protocol_errors")


@dataclass
class K6Result:
    """What one k6 run produced."""

    exit_code: int
    summary: dict
    wall_s: float
    timeline: dict[str, list[float]] = field(default_factory=dict)
    output_tail: str = ""

    @property
    def thresholds_passed(self) -> bool:
        # k6 exits 99 when a threshold fails; 0 when all pass. No summary: no verdict.
        return self.exit_code == 0 and bool(self.summary.get("metrics"))


def _poll_metrics(port: int) -> dict[str, dict]:
    url = f"http://127.0.0.1:{port}/v1/metrics"
    with urllib.request.urlopen(url, timeout=2) as response:
        body = json.load(response)
    return {item["id"]: item["attributes"]["sample"] for item in body["data"]}


class _Poller(threading.Thread):
    def __init__(self, port: int) -> None:
        super().__init__(daemon=True, name="k6-poller")
        self.port = port
        self.stopped = threading.Event()
        self.timeline: dict[str, list[float]] = {"t": [], "vus": []}
        for name in POLLED_COUNTERS:
            self.timeline[name] = []

    def run(self) -> None:
        started = time.monotonic()
        while not self.stopped.wait(1.0):
            try:
                metrics = _poll_metrics(self.port)
            except (urllib.error.URLError, OSError, ValueError, KeyError):
                continue
            self.timeline["t"].append(round(time.monotonic() - started, 2))
            self.timeline["vus"].append(metrics.get("vus", {}).get("value", 0))
            for name in POLLED_COUNTERS:
                self.timeline[name].append(metrics.get(name, {}).get("count", 0))


def check_installed() -> None:
    """Fail with the command to run when k6 or the msgpack bundle is missing."""
    for path in (K6, BUNDLE):
        if not path.exists():
            raise FileNotFoundError(f"{path} missing: run `make loadtest-install`")


def run_k6(plan: Plan, out_dir: Path, bound_s: float, on_start=None) -> K6Result:
    """Run ``plan.script`` with the plan in ``out_dir``; kill k6 after ``bound_s``."""
    check_installed()
    plan_path = out_dir / "plan.json"
    summary_path = out_dir / "k6-summary.json"
    plan_path.write_text(json.dumps(plan.for_k6()))
    port = free_port()
    argv = [str(K6), "run", "--quiet",
            "--address", f"127.0.0.1:{port}", "--no-usage-report",
            str(plan.script)]  # fmt: skip
    env = {**os.environ, "LT_PLAN": str(plan_path), "LT_SUMMARY": str(summary_path),
           "K6_NO_USAGE_REPORT": "true"}  # fmt: skip
    log_path = out_dir / "k6.log"
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=LOADTEST, start_new_session=True)  # fmt: skip
        if on_start:
            on_start(proc.pid)
        poller = _Poller(port)
        poller.start()
        try:
            exit_code = proc.wait(bound_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            exit_code = proc.wait(10)
        except BaseException:  # interrupted: never leave k6 running
            proc.kill()
            proc.wait(10)
            raise
        finally:
            poller.stopped.set()
            poller.join(5)
    wall = time.monotonic() - started
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    tail = log_path.read_text()[-4000:]
    return K6Result(exit_code, summary, wall, poller.timeline, tail)
