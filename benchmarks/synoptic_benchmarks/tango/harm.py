"""Tango: the adapter does no harm to a standard device
(``make bench-tango BENCH_ARGS=--harm``; decision 0018).

Workload: ``synoptic sim tango-standard``, one device in Tango's default
serialisation model with the Taurus case: 389 attributes with change events (1 Hz
each, 389 events/s nominal), 21 plain attributes without events, one polled by
Tango without change criteria, and ``slow`` (2 s), ``timeout`` (10 s, past the 3 s
client timeout) and ``broken`` (raises); ``clean`` runs the same device with the
three healthy. For each case, in one run and on the same device:

1. the floor: a bare PyTango client (a fresh process) subscribes the 389 event
   attributes (``AsyncRead``) and reads the 22 healthy ones without events in one
   call: seconds from its connection to all event attributes valued and to the
   healthy ones read;
2. a second, independent PyTango client subscribes the 389 and keeps counting;
3. ``synoptic adapter tango`` configured with all 414 attributes publishes to a
   local nats-server; this process notes each attribute's first valid value on the
   bus: seconds from the adapter's ready line to all event attributes valued and
   to the 22 healthy polled ones valued, the bad ones' statuses;
4. events/s of the event attributes over the second minute after the adapter was
   ready (``--after``, ``--window``): on the bus (Synoptic) and at the
   independent client, against the nominal 389/s; the adapter's per-device
   metrics at the end (busy fraction, attributes in backoff).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import msgpack

from synoptic_adapters.sim.tango_command import READY
from synoptic_adapters.sim.tango_standard import BAD, StandardSettings
from synoptic_adapters.testing import synoptic_command
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_port

DEVICE = "sim/standard/1"
COUNTER = "synoptic_adapters.sim.tango_counter"
#: Seconds the device runs before anything connects (its polling settles).
SETTLE = 3.0


def _at(proc: Process, pattern: str, timeout: float = 60.0) -> float:
    """The wall-clock stamp ``at T`` of the first line matching ``pattern``."""
    return float(proc.wait_for(rf"{pattern}.* at ([\d.]+)", timeout)[1])


def _count_at(proc: Process, when: float) -> tuple[int, float]:
    """The independent client's first count line stamped at or after ``when``."""
    while True:
        match = proc.wait_for(r"counted (\d+) at ([\d.]+)", 30, since=proc.mark())
        if float(match[2]) >= when:
            return int(match[1]), float(match[2])


def _floor(url: str, healthy: list[str]) -> dict[str, float]:
    argv = [sys.executable, "-m", COUNTER, url, "--read", ",".join(healthy)]
    proc = Process("bench-floor", argv)
    try:
        start = _at(proc, "counter proxy")
        read = _at(proc, "counter read")
        valued = _at(proc, "counter all valued")
    finally:
        proc.stop(5)
    return {
        "events_valued_s": round(valued - start, 3),
        "healthy_polled_valued_s": round(read - start, 3),
    }


class Bus:
    """First valid value per attribute and the arrival times of event values."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}
        self.event_arrivals: list[float] = []
        self.last: dict[str, dict[str, Any]] = {}

    async def start(self, url: str) -> Any:
        nc = await connect(url, name="bench-harm")

        async def on_msg(msg: Any) -> None:
            now = time.time()
            value = msgpack.unpackb(msg.data)
            name = msg.subject.rsplit(".", 1)[1]
            self.last[name] = value
            if value.get("c") and value.get("v") is not None and value["sev"] < 3:
                self.first.setdefault(name, now)
                if name.startswith("ev_"):
                    self.event_arrivals.append(now)

        await nc.subscribe("cs.val.tango.>", cb=on_msg, pending_msgs_limit=1_000_000)
        await nc.flush()
        return nc


def _metrics(port: int) -> dict[str, float]:
    """The adapter's per-device figures from its /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
    figures = {}
    for line in text.decode().splitlines():
        match = re.match(r"synoptic_adapter_device_(\w+?)(?:_total)?\{.*\} (\S+)", line)
        if match and not match[1].endswith("_created"):
            figures[match[1]] = round(float(match[2]), 4)
    return figures


async def harm_case(
    clean: bool, slow_s: float, timeout_s: float, after: float, window: float
) -> dict[str, Any]:
    """One case (see the module docstring); its figures."""
    settings = StandardSettings(slow_s=slow_s, timeout_s=timeout_s, clean=clean)
    port = free_port()
    hostport = f"127.0.0.1:{port}"
    url = f"tango://{hostport}/{DEVICE}#dbase=no"
    argv = [
        synoptic_command(), "sim", "tango-standard", "--port", str(port),
        "--slow-s", str(slow_s), "--timeout-s", str(timeout_s),
        *(["--clean"] if clean else []),
    ]  # fmt: skip
    sim = Process("sim-standard", argv)
    events = settings.event_names()
    healthy = [n for n in settings.polled_names() if n not in BAD]
    procs: list[Process] = [sim]
    result: dict[str, Any] = {"case": "clean" if clean else "slow, timeout, broken"}
    try:
        await asyncio.to_thread(sim.wait_for, READY, 60)
        await asyncio.sleep(SETTLE)
        result["pytango_floor"] = await asyncio.to_thread(_floor, url, healthy)
        other = Process("bench-other-client", [sys.executable, "-m", COUNTER, url])
        procs.append(other)
        await asyncio.to_thread(_at, other, "counter all valued")
        with tempfile.TemporaryDirectory(prefix="synoptic-bench-harm-") as tmp:
            result |= await _through_adapter(
                Path(tmp), hostport, events, healthy, settings, other, after, window
            )
    finally:
        for proc in reversed(procs):
            proc.stop(5)
    result["nominal_events_per_s"] = settings.events * settings.rate_hz
    return result


async def _through_adapter(
    tmp: Path,
    hostport: str,
    events: list[str],
    healthy: list[str],
    settings: StandardSettings,
    other: Process,
    after: float,
    window: float,
) -> dict[str, Any]:
    nats = NatsServer(store_dir=tmp / "js").start()
    bus = Bus()
    nc = await bus.start(nats.url)
    metrics_port = free_port()
    names = events + settings.polled_names()
    config = {
        "id": "bench-harm",
        "nats": {"url": nats.url},
        "channels": [f"tango://{hostport}/{DEVICE}/{n}" for n in names],
        "tango": {"no_database_hosts": [hostport]},
        "metrics": {"port": metrics_port, "addr": "127.0.0.1"},
    }
    path = tmp / "adapter.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]
    adapter = Process("bench-harm-adapter", argv)
    try:
        await asyncio.to_thread(adapter.wait_for, r"adapter bench-harm ready", 60)
        ready = time.time()
        load_start = os.getloadavg()[0]
        start, end = ready + after, ready + after + window
        other_start = await asyncio.to_thread(_count_at, other, start)
        other_end = await asyncio.to_thread(_count_at, other, end)
        await asyncio.sleep(max(0.0, end - time.time()) + 0.5)
        figures = await asyncio.to_thread(_metrics, metrics_port)
    finally:
        adapter.stop()
        await nc.close()
        nats.close()

    def valued(group: list[str]) -> float | None:
        times = [bus.first.get(n) for n in group]
        return None if None in times else round(max(times) - ready, 3)  # type: ignore[type-var]

    ours = sum(1 for t in bus.event_arrivals if start <= t < end) / window
    theirs = (other_end[0] - other_start[0]) / (other_end[1] - other_start[1])
    nominal = settings.events * settings.rate_hz
    return {
        "synoptic": {
            "events_valued_s": valued(events),
            "healthy_polled_valued_s": valued(healthy),
            "events_per_s": round(ours, 1),
            "events_percent_of_nominal": round(100 * ours / nominal, 1),
            "bad_statuses": {
                n: bus.last.get(n, {}).get("st") for n in BAD if n in bus.last
            },
            "device_metrics": figures,
        },
        "other_client": {
            "events_per_s": round(theirs, 1),
            "events_percent_of_nominal": round(100 * theirs / nominal, 1),
        },
        "window_s": [after, after + window],
        "load_avg_1m": [round(load_start, 2), round(os.getloadavg()[0], 2)],
    }


async def harm_report(
    slow_s: float, timeout_s: float, after: float, window: float
) -> list[dict[str, Any]]:
    """The bad case, then the clean case."""
    cases = []
    for clean in (False, True):
        case = await harm_case(clean, slow_s, timeout_s, after, window)
        print(json.dumps(case), file=sys.stderr, flush=True)
        cases.append(case)
    return cases
