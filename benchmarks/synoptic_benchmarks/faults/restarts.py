"""A PV Access or Channel Access server restarting under a running adapter:
values back.

``synoptic sim pva`` (sending no beacons: its clients find it by searching
alone, the worst case) or ``synoptic sim ioc``, and the matching adapter
monitoring a counter, a sine, a table (PVA) and ``SWAP`` (PVA: its type changes
at every restart). Each restart: the server killed, away for an outage (none, or
``--outage`` seconds, alternately), started again on the same port; seconds from
its start and from its ready line to every channel connected again on the bus
(the largest of the channels). p50 and max over the restarts.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from synoptic_adapters.testing import EpicsAdapter, SimIoc, SimPva, Tap
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer


async def _until(check: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def restarts(protocol: str, count: int, outage: float) -> dict[str, Any]:
    """``count`` restarts of the ``protocol`` (``pva`` or ``epics``) server."""
    nats = NatsServer().start()
    if protocol == "pva":
        sim: SimIoc = SimPva(records=2, image_rate=0, beacons=False)
        names = ["CNT:00000", "SINE", "TABLE", "SWAP"]
    else:
        sim = SimIoc(records=2)
        names = ["CNT:00000", "SINE", "STATE"]
    sim.start()
    uris = [sim.uri(n) for n in names]
    adapter = EpicsAdapter(nats.url, sim, uris, protocol=protocol)
    nc = await connect(nats.url, name="bench-restarts")
    from_start: list[float] = []
    from_ready: list[float] = []
    try:
        adapter.start()
        tap = await Tap().start(nc, "cs.val.>")

        def connected(up: bool) -> bool:
            return all((v := tap.latest(u)) is not None and v["c"] is up for u in uris)

        await _until(lambda: connected(True), 60)
        for i in range(count):
            sim.kill()
            await _until(lambda: connected(False), 60)
            await asyncio.sleep(outage if i % 2 else 0.0)
            if isinstance(sim, SimPva):
                sim.swap_type = (i + 1) % 4
            started = time.monotonic()
            await asyncio.to_thread(sim.start)
            ready = time.monotonic()
            if not await _until(lambda: connected(True), 120):
                raise RuntimeError(f"{protocol}: not back within 120 s of restart {i}")
            back = time.monotonic()
            from_start.append(back - started)
            from_ready.append(back - ready)
    finally:
        adapter.close()
        sim.stop()
        await nc.close()
        nats.close()

    def p50_max(xs: list[float]) -> dict[str, float]:
        return {"p50": round(statistics.median(xs), 2), "max": round(max(xs), 2)}

    return {
        "server": "p4p, no beacons" if protocol == "pva" else "soft IOC (CA)",
        "restarts": count,
        "outage_s": [0.0, outage],
        "back_from_ready_s": p50_max(from_ready),
        "back_from_start_s": p50_max(from_start),
    }
