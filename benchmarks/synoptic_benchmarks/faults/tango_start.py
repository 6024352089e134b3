"""Tango on the slow-first standard device: a cold start, then warm restarts.

``synoptic sim tango-standard --bad-first`` (Tango's default serialisation
model: 389 event attributes, 21 healthy ones without events and ``cached``, and
``slow`` (2 s), ``timeout`` (10 s, past the 3 s client timeout) and ``broken``,
the three declared and configured before the healthy ones). ``synoptic adapter
tango`` with all 414 attributes, on a fresh nats-server:

1. cold: the first start ever (nothing learned: the ``tango_reads`` bucket is
   empty);
2. warm: the same adapter stopped and started again (a new process, what the
   first learned kept in the bucket);
3. device restart: the device server restarted under the running adapter;
4. memory off: a new adapter process with ``tango.memory_bucket`` empty (as
   every start was before the memory: nothing learned is recalled).

Each: seconds from the adapter's ready line (3: from the device's first answer
to a ping; it serves before it prints its ready line, whose time from the
start is also given, as is the answer's) to all event
attributes valued and to all 22 healthy polled ones valued, on the bus.
The floor for the cold start: one read of each attribute in turn (the slow and
timing-out reads' device time, 2 + 10 s, plus the rest).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from synoptic_adapters.sim.tango_command import READY
from synoptic_adapters.sim.tango_standard import BAD, StandardSettings
from synoptic_adapters.testing import SIM, synoptic_command
from synoptic_benchmarks.tango.harm import Bus
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_port

DEVICE = "sim/standard/1"


def _valued(bus: Bus, names: list[str], since: float) -> float | None:
    times = [bus.first.get(n) for n in names]
    if None in times:
        return None
    return round(max(times) - since, 2)  # type: ignore[type-var]


async def _wait_valued(bus: Bus, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(n not in bus.first for n in names) and time.monotonic() < deadline:  # noqa: ASYNC110 - a tap's dict
        await asyncio.sleep(0.05)


async def _wait_gone(bus: Bus, names: list[str], timeout: float) -> None:
    """Until every one of ``names`` was last published disconnected."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(  # noqa: ASYNC110 - a tap's dict
        bus.last.get(n, {}).get("c", True) for n in names
    ):
        await asyncio.sleep(0.05)


def _serving(hostport: str, timeout: float) -> float:
    """When the device first answers a ping (it serves before its ready line),
    pinged every 0.1 s (runs in a thread)."""
    import tango

    deadline = time.monotonic() + timeout
    while True:
        try:
            tango.DeviceProxy(f"tango://{hostport}/{DEVICE}#dbase=no").ping()
            return time.time()
        except tango.DevFailed:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


async def tango_start(slow_s: float = 2.0, timeout_s: float = 10.0) -> dict[str, Any]:
    """Cold start, two warm restarts, a device restart, a start without memory
    (see the module)."""
    settings = StandardSettings(slow_s=slow_s, timeout_s=timeout_s, bad_first=True)
    events = settings.event_names()
    healthy = [n for n in settings.polled_names() if n not in BAD]
    port = free_port()
    hostport = f"127.0.0.1:{port}"
    sim_argv = [*SIM, "tango-standard", "--port", str(port), "--bad-first",
                "--slow-s", str(slow_s), "--timeout-s", str(timeout_s)]  # fmt: skip
    sims = [Process("sim-standard", sim_argv)]
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-faults-") as tmp:
        nats = NatsServer(store_dir=Path(tmp) / "js").start()
        config = {
            "id": "bench-faults-tango",
            "nats": {"url": nats.url},
            "channels": [f"tango://{hostport}/{DEVICE}/{n}"
                         for n in [*settings.polled_names(), *events]],
            "tango": {"no_database_hosts": [hostport]},
        }  # fmt: skip
        path = Path(tmp) / "adapter.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        off = Path(tmp) / "adapter-memory-off.yaml"
        config["tango"] = {**config["tango"], "memory_bucket": ""}
        off.write_text(json.dumps(config))
        try:
            await asyncio.to_thread(sims[-1].wait_for, READY, 60)
            await asyncio.sleep(3.0)  # the device's polling settles
            for kind, conf in (("cold", path), ("warm", path), ("warm", path),
                               ("memory off", off)):  # fmt: skip
                bus = Bus()
                nc = await bus.start(nats.url)
                argv = [synoptic_command(), "adapter", "tango", "--config", str(conf)]
                adapter = Process("bench-faults-adapter", argv)
                try:
                    await asyncio.to_thread(
                        adapter.wait_for, r"adapter bench-faults-tango ready", 60
                    )
                    ready = time.time()
                    await _wait_valued(bus, events + healthy, 90)
                    runs.append({
                        "start": kind,
                        "events_valued_s": _valued(bus, events, ready),
                        "healthy_polled_valued_s": _valued(bus, healthy, ready),
                    })  # fmt: skip
                    if len(runs) == 3:  # the device server restarts under it
                        sims[-1].stop()
                        await _wait_gone(bus, events + healthy, 30)
                        again = Bus()
                        nc2 = await again.start(nats.url)
                        started = time.time()
                        sims.append(Process("sim-standard", sim_argv))
                        answered, _ = await asyncio.gather(
                            asyncio.to_thread(_serving, hostport, 60),
                            asyncio.to_thread(sims[-1].wait_for, READY, 60),
                        )
                        serving = time.time() - started
                        await _wait_valued(again, events + healthy, 90)
                        runs.append({
                            "start": "device server restart",
                            "device_ready_line_s": round(serving, 2),
                            "device_answered_s": round(answered - started, 2),
                            "events_valued_s": _valued(again, events, answered),
                            "healthy_polled_valued_s": _valued(again, healthy, answered),
                        })  # fmt: skip
                        await nc2.close()
                finally:
                    adapter.stop()
                    await nc.close()
        finally:
            for sim in sims:
                sim.stop()
            nats.close()
    return {"slow_s": slow_s, "timeout_s": timeout_s,
            "cold_floor_s": slow_s + timeout_s, "runs": runs}  # fmt: skip
