"""Waveform viewers benchmark: what arrays sized to the screen (``sub.pts``) save
a gateway, side by side in one run.

One nats-server and one gateway; a synthetic publisher updates a 100 000-point
``f8`` waveform (800 KB) at ``--rate`` Hz, a new pattern each time. ``--viewers``
WebSocket clients (raw ``websockets`` connections that count and drop frames, so
that the clients cost little; they run in this process) watch it, as the spectrum plot of the demo's EPICS
screen does: first at full resolution, then with ``pts`` (``--points``, the plot's
two points per pixel), on the same gateway. For each case: the gateway's CPU per
delivered array update (µs), its CPU share, and the bytes per second per viewer.
Prints JSON::

    python -m synoptic_benchmarks.gateway.waveform --viewers 100 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from typing import Any

import numpy as np
import psutil
from websockets.asyncio.client import ClientConnection, connect

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect as nats_connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.testing import Publisher, start_gateway
from synoptic_schemas import frames

URI = "ca://BENCH:WF100K"
_UPD = b"\xa3upd"
POINTS = 100_000


class Viewer:
    """One socket: counts the frames and bytes it receives after its snapshot."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames = 0
        self.bytes = 0
        self.task: asyncio.Task[None] | None = None

    async def read(self) -> None:
        with contextlib.suppress(Exception):
            async for message in self.ws:
                self.bytes += len(message)
                if _UPD in message[:8]:  # the op comes first (frames.pack_batch)
                    self.frames += 1


async def _viewers(url: str, n: int, points: int | None) -> list[Viewer]:
    pts = {URI: points} if points else None
    out = []
    for i in range(n):
        ws = await connect(url, max_size=None, compression=None, max_queue=None)
        await ws.recv()  # hello
        await ws.send(frames.pack(frames.sub(i + 1, [URI], pts)))
        snap = frames.unpack(await ws.recv())
        assert snap["op"] == "snap", snap
        viewer = Viewer(ws)
        viewer.task = asyncio.create_task(viewer.read())
        out.append(viewer)
    return out


async def _publish(pub: Publisher, rate: float, stop: asyncio.Event) -> None:
    base = np.sin(np.arange(POINTS) / 900.0)
    rng = np.random.default_rng(5)
    k = 0
    while not stop.is_set():
        k += 1
        await pub.heartbeat("bench-waveform")  # a live source: no src frames
        await pub.value(URI, np.roll(base, 97 * k) + rng.normal(0, 0.05, POINTS))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0 / rate)


async def _case(
    url: str, gateway: psutil.Process, args: argparse.Namespace, points: int | None
) -> dict[str, Any]:
    viewers = await _viewers(url, args.viewers, points)
    await asyncio.sleep(args.warmup)
    f0, b0 = sum(v.frames for v in viewers), sum(v.bytes for v in viewers)
    c0, t0 = gateway.cpu_times(), time.perf_counter()
    await asyncio.sleep(args.seconds)
    c1, t1 = gateway.cpu_times(), time.perf_counter()
    f1, b1 = sum(v.frames for v in viewers), sum(v.bytes for v in viewers)
    for v in viewers:
        await v.ws.close()
        if v.task:
            v.task.cancel()
    cpu = (c1.user + c1.system) - (c0.user + c0.system)
    elapsed = t1 - t0
    delivered = f1 - f0
    return {
        "points": points or "full",
        "array_updates_delivered": delivered,
        "gateway_cpu_pct": round(100 * cpu / elapsed, 1),
        "gateway_cpu_us_per_delivered_update": round(1e6 * cpu / max(delivered, 1), 1),
        "bytes_per_s_per_viewer": round((b1 - b0) / elapsed / args.viewers),
        "bytes_per_update": round((b1 - b0) / max(delivered, 1)),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with NatsServer() as nats:
        nc = await nats_connect(nats.url, name="bench-waveform")
        await ensure_store(nc, StoreConfig())
        pub = Publisher(nc)
        gw = start_gateway(nats.url)
        stop = asyncio.Event()
        publishing = asyncio.create_task(_publish(pub, args.rate, stop))
        try:
            proc = psutil.Process(gw.proc.pid)
            cases = [await _case(gw.ws_url, proc, args, None)]
            cases.append(await _case(gw.ws_url, proc, args, args.points))
        finally:
            stop.set()
            await publishing
            gw.stop()
            await nc.close()
    full, reduced = cases
    return {
        "benchmark": "gateway waveform viewers: full arrays vs sub.pts",
        "machine": machine(),
        "viewers": args.viewers,
        "rate_hz": args.rate,
        "array_points": POINTS,
        "seconds": args.seconds,
        "cases": cases,
        "cpu_ratio_full_to_reduced": round(
            full["gateway_cpu_us_per_delivered_update"]
            / max(reduced["gateway_cpu_us_per_delivered_update"], 0.1),
            1,
        ),
        "bytes_ratio_full_to_reduced": round(
            full["bytes_per_s_per_viewer"] / max(reduced["bytes_per_s_per_viewer"], 1),
            1,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--rate", type=float, default=1.0, help="waveform updates/s")
    parser.add_argument("--points", type=int, default=1024, help="sub.pts of a plot")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    add_save_option(parser)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    report["cpu_count"] = os.cpu_count()
    emit("gateway-waveform", report, save=args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
