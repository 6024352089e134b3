"""What the Tango benchmarks share: simulated device servers, and measurements that
each run in a fresh child process (:mod:`synoptic_benchmarks.tango.child`), one at a
time or several told to start at the same moment."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from synoptic_adapters.sim.tango_command import READY
from synoptic_bus.procs import Process, free_port

DEVICES_PER_SERVER = 2
#: Longest wait for the reference client's subscriptions, seconds.
SETTLE_TIMEOUT = 120.0
#: The module a measurement child runs (``--child KIND --child-spec @FILE``).
CHILD_MODULE = "synoptic_benchmarks.tango.child"


class Servers:
    """``devices`` simulated devices of ``bulk`` counters, 2 per server process."""

    def __init__(self, devices: int, bulk: int, rate: float) -> None:
        self.devices, self.bulk = devices, bulk
        self.procs: list[Process] = []
        self.hosts: list[str] = []  # host:port per device
        for first in range(0, devices, DEVICES_PER_SERVER):
            count = min(DEVICES_PER_SERVER, devices - first)
            port = free_port()
            names = ",".join(f"bench/d/{first + i + 1}" for i in range(count))
            argv = [
                sys.executable, "-m", "synoptic_adapters.sim.tango_command",
                "--port", str(port), "--bulk", str(bulk), "--rate", str(rate),
                "--instance", f"b{first}", "--dlist", names,
            ]  # fmt: skip
            self.procs.append(Process(f"sim-{first}", argv))
            self.hosts += [f"127.0.0.1:{port}"] * count
        for proc in self.procs:
            proc.wait_for(READY, timeout=120)

    def devices_urls(self) -> list[str]:
        return [
            f"tango://{host}/bench/d/{i + 1}#dbase=no"
            for i, host in enumerate(self.hosts)
        ]

    def uris(self) -> list[str]:
        return [
            f"tango://{host}/bench/d/{i + 1}/bulk_{n:04d}"
            for i, host in enumerate(self.hosts)
            for n in range(self.bulk)
        ]

    def cpu_seconds(self) -> float:
        total = 0.0
        for proc in self.procs:
            times = psutil.Process(proc.pid).cpu_times()
            total += times.user + times.system
        return total

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()


def child_argv(kind: str, spec_path: str) -> list[str]:
    """The command line of one measurement child."""
    return [
        sys.executable, "-m", CHILD_MODULE, "--child", kind, "--child-spec", f"@{spec_path}",
    ]  # fmt: skip


def in_child(kind: str, spec: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
    """Run one ``kind`` measurement of ``spec`` in a fresh process; its RESULT."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        proc = Process(f"bench-{kind}", child_argv(kind, handle.name))
        try:
            match = proc.wait_for(r"^RESULT (.*)$", timeout=timeout)
        finally:
            proc.stop(5)
        return json.loads(match.group(1))
    finally:
        os.unlink(handle.name)


def children_together(
    kind: str, specs: dict[int, dict[str, Any]], name: str
) -> tuple[list[dict[str, Any]], float]:
    """Run one ``--child kind`` process per spec, all told to go at the same
    moment (a file they wait for); their RESULT objects and that moment."""
    folder = tempfile.mkdtemp(prefix=f"synoptic-{name}-")
    go_file = os.path.join(folder, "go")
    procs: list[Process] = []
    try:
        for index, spec in specs.items():
            path = os.path.join(folder, f"spec-{index}.json")
            with open(path, "w") as handle:
                json.dump({**spec, "go_file": go_file}, handle)
            procs.append(Process(f"{name}-{index}", child_argv(kind, path)))
        for proc in procs:
            proc.wait_for("CHILD READY", timeout=60)
        go_at = time.time()
        Path(go_file).touch()
        results = [
            json.loads(proc.wait_for(r"^RESULT (.*)$", timeout=120).group(1))
            for proc in procs
        ]
    finally:
        for proc in procs:
            proc.stop(5)
        for entry in os.listdir(folder):
            os.unlink(os.path.join(folder, entry))
        os.rmdir(folder)
    return results, go_at


def slowest(results: list[dict[str, Any]], go_at: float) -> dict[str, float]:
    """Seconds from ``go_at`` until the slowest child had its first values and
    every subscription live."""
    return {
        key: max(r["started_at"] + r[key] for r in results) - go_at
        for key in ("first_values_s", "subscribed_s")
    }


def per_event(cpu_s: float, elapsed_s: float, events_per_s: float) -> float | None:
    """Microseconds of CPU per event."""
    if not events_per_s:
        return None
    return round(cpu_s / elapsed_s / events_per_s * 1e6, 1)


def cpu_seconds(procs: list[psutil.Process]) -> float:
    """User + system CPU seconds of ``procs`` so far."""
    return sum(sum(proc.cpu_times()[:2]) for proc in procs)
