"""A 1-megapixel image through the whole stack (``make bench-pva-image``): JSON.

The simulated PV Access server publishes a 1024×1024 16-bit NTNDArray at
``--rate`` Hz; the PVA adapter puts it on a nats-server with 8 MiB payloads; one
gateway serves it to ``--clients`` WebSocket clients (Python, msgpack frames, as
a browser receives them) that count the images they get, at full resolution or
(``--points``) binned to that many pixels across, as an image widget about 400
pixels wide asks (``sub.pts`` 512: 512×512, each pixel a 2×2 block's maximum). Per run: images/s per
client, latency from the image's timestamp to arrival (p50/p99), and CPU (% of a
core) of the gateway, the adapter, nats-server and the simulator; goal ≥ 10
images/s per client with the gateway ≤ 20 % of a core.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from synoptic_adapters.testing import EpicsAdapter, SimPva
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, parse_channel
from synoptic_schemas.codec import MAX_PAYLOAD


class _Cpu:
    """CPU % of a core of some processes over a window."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.procs = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.t0 = time.monotonic()
        self.c0 = {name: self._cpu(p) for name, p in self.procs.items()}

    @staticmethod
    def _cpu(proc: psutil.Process) -> float:
        return sum(proc.cpu_times()[:2])  # user + system

    def percent(self) -> dict[str, float]:
        elapsed = time.monotonic() - self.t0
        return {
            name: round((self._cpu(p) - self.c0[name]) / elapsed * 100, 1)
            for name, p in self.procs.items()
        }


async def _watch(
    nats_url: str, ws_url: str, uri: str, clients: int, warmup: float, window: float,
    points: int,
):  # fmt: skip
    counts = [0] * clients
    latencies: list[float] = []
    counting = False
    on_bus = 0
    nc = await connect(nats_url, name="bench-image-tap")

    async def on_msg(_msg: Any) -> None:
        nonlocal on_bus
        if counting:
            on_bus += 1

    await nc.subscribe(Subjects().val(parse_channel(uri)), cb=on_msg)

    def on_update(k: int):
        def update(_sub: Any, _indexes: list[int], values: list[Any]) -> None:
            for value in values:
                v = value.get("v") if isinstance(value, dict) else None
                if counting and isinstance(v, np.ndarray) and v.ndim == 2:
                    counts[k] += 1
                    if k == 0:
                        latencies.append((time.time_ns() - value["t"]) / 1e6)

        return update

    # a short receive queue, as a browser has: a late frame is dropped, not queued
    opened = [GatewayClient(ws_url, max_queue=4) for _ in range(clients)]
    for client in opened:
        await client.connect()
    for k, client in enumerate(opened):
        pts = {uri: points} if points else None
        await client.subscribe([uri], on_update=on_update(k), points=pts)
    await asyncio.sleep(warmup)
    counting = True
    start = time.monotonic()
    await asyncio.sleep(window)
    counting = False
    elapsed = time.monotonic() - start
    for client in opened:
        await client.close()
    await nc.close()
    return [c / elapsed for c in counts], latencies, elapsed, on_bus / elapsed


def run(
    rate: float, clients: int, warmup: float, window: float, points: int = 0
) -> dict[str, Any]:
    """One measurement with ``clients`` clients of the image (``points``: binned
    to that many pixels across; 0: full resolution)."""
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-") as tmp:
        nats = NatsServer(store_dir=Path(tmp) / "js", max_payload=MAX_PAYLOAD).start()
        sim = SimPva(records=1, rate=1.0, image_rate=rate).start(120)
        uri = sim.uri("IMAGE")
        adapter = EpicsAdapter(nats.url, sim, [uri], protocol="pva")
        gateway = None
        try:
            adapter.start(120)
            gateway = start_gateway(nats.url)
            assert adapter.process is not None and sim.process is not None
            assert nats.process is not None
            cpu = _Cpu({
                "gateway": gateway.proc.pid, "adapter": adapter.process.pid,
                "nats_server": nats.process.pid, "simulator": sim.process.pid,
                "clients_and_tap": psutil.Process().pid,
            })  # fmt: skip
            fps, latencies, elapsed, bus_fps = asyncio.run(
                _watch(nats.url, gateway.ws_url, uri, clients, warmup, window, points)
            )
            cpu_percent = cpu.percent()
        finally:
            if gateway is not None:
                gateway.stop()
            adapter.close()
            sim.stop()
            nats.close()
    lat = np.asarray(latencies)
    return {
        "image": "1024x1024 u2 (2 MiB)", "rate_hz": rate, "clients": clients,
        "sent_as": f"binned to {points} px (sub.pts)" if points else "full resolution",
        "images_per_s_on_the_bus": round(bus_fps, 2),
        "images_per_s_per_client": [round(f, 2) for f in fps],
        "latency_ms": {
            "p50": round(float(np.percentile(lat, 50)), 1) if lat.size else None,
            "p99": round(float(np.percentile(lat, 99)), 1) if lat.size else None,
        },
        "cpu_percent_of_a_core": cpu_percent,
        "window_s": round(elapsed, 1),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=10.0, help="images per second")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--window", type=float, default=15.0)
    parser.add_argument("--points", type=int, nargs="+", default=[0, 512],
                        help="sub.pts of the image (0: full resolution)")  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args(argv)
    runs = [
        run(args.rate, n, args.warmup, args.window, pts)
        for pts in args.points
        for n in args.clients
    ]
    report = {"benchmark": "pva-image", "machine": machine(), "runs": runs}
    emit("pva-image", report, save=args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
