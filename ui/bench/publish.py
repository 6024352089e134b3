"""Synthetic channels for the browser benchmarks: ``sim://BENCH:...`` on NATS.

Publishes ``--channels`` channels at ``--rate`` Hz each (every channel once per
tick, like an IOC scan), scalars (a counter per channel, so gaps are visible) or
``--points``-long float64 arrays, plus their metadata once, through the same codec
and subjects as the adapters, with a heartbeat every second as an adapter sends
(so the gateway's liveness check sees a live source). Prints ``publisher ready``
after the first tick and a JSON line with what it published when stopped (SIGTERM).

    .venv/bin/python ui/bench/publish.py --nats URL --channels 1000 --rate 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import time
from typing import Any

import numpy as np

from synoptic_bus.connect import connect
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_schemas import SCHEMA_VERSION, Subjects, parse_channel
from synoptic_schemas.codec import encode


def channel_names(kind: str, count: int) -> list[str]:
    """The URIs the benchmark screens use."""
    return [f"sim://BENCH:{kind.upper()}:{i:05d}" for i in range(count)]


async def run(args: argparse.Namespace) -> None:
    nc = await connect(args.nats, name="ui-bench-publisher")
    await ensure_store(nc, StoreConfig())
    subjects = Subjects()
    uris = channel_names(args.kind, args.channels)
    val_subjects = [subjects.val(parse_channel(u)) for u in uris]
    epoch = int(time.time() * 1000)
    array = args.kind == "array"
    for uri in uris:
        meta = {
            "ver": SCHEMA_VERSION, "dt": "f8", "shape": [args.points] if array else [],
            "w": False, "t": time.time_ns(), "ep": epoch, "unit": "V", "prec": 1,
            "disp": [-1.5, 1.5] if array else [0, 1000],
        }  # fmt: skip
        await nc.publish(subjects.meta(parse_channel(uri)), encode(meta))
    heartbeat = asyncio.create_task(beat(nc, subjects, args, epoch))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    x = np.linspace(0, 8 * math.pi, args.points) if array else None
    period = 1.0 / args.rate
    tick = 0
    published = 0
    late_ticks = 0
    start = time.monotonic()
    while not stop.is_set():
        tick += 1
        now = time.time_ns()
        for k, subject in enumerate(val_subjects):
            value = np.sin(x + tick * 0.2 + k) if x is not None else tick
            msg = {"ver": SCHEMA_VERSION, "v": value, "t": now, "sev": 0, "st": "",
                   "seq": tick, "ep": epoch, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        published += len(val_subjects)
        await nc.flush()
        if tick == 1:
            print("publisher ready", flush=True)
        delay = start + tick * period - time.monotonic()
        if delay < 0:
            late_ticks += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), max(delay, 0))
    elapsed = time.monotonic() - start
    print(json.dumps({"published": published, "seconds": round(elapsed, 2),
                      "per_second": round(published / elapsed), "late_ticks": late_ticks}),
          flush=True)  # fmt: skip
    heartbeat.cancel()
    await nc.drain()


async def beat(
    nc: Any, subjects: Subjects, args: argparse.Namespace, epoch: int
) -> None:
    """Publish a heartbeat every second, as an adapter does (``cs.hb.<id>``)."""
    adapter_id = f"ui-bench-{args.kind}-{os.getpid()}"
    while True:
        msg = {"ver": SCHEMA_VERSION, "id": adapter_id, "proto": "sim", "ep": epoch,
               "t": time.time_ns(), "period": 1.0, "n": args.channels, "conn": args.channels}  # fmt: skip
        await nc.publish(subjects.hb(adapter_id), encode(msg))
        await asyncio.sleep(1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats", required=True)
    parser.add_argument("--channels", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=10.0, help="Hz per channel")
    parser.add_argument("--kind", choices=["scalar", "array"], default="scalar")
    parser.add_argument("--points", type=int, default=10_000, help="array length")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
