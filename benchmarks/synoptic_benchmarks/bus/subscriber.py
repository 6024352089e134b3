"""Benchmark subscriber (a separate process): counts value messages on ``cs.val.>``
during a window, checks counters for skipped counts and seq gaps, and samples the
latency from the IOC timestamp to arrival.

Usage: ``python -m synoptic_benchmarks.bus.subscriber NATS_URL WARMUP_S WINDOW_S OUT.json CHANNELS``
(driven by :class:`synoptic_benchmarks.bus.counting.CountingSubscriber`)

The warm-up starts once every one of CHANNELS channels has published (all adapter
processes are up), or after 180 s.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import psutil
import uvloop

from synoptic_bus.connect import connect


async def main(url: str, warmup: float, window: float, out: str, channels: int) -> None:
    nc = await connect(url, name="bench-subscriber")
    last: dict[str, tuple[float, int]] = {}
    state = {"counting": False, "received": 0, "gaps": 0, "seq_gaps": 0}
    latencies = np.zeros(2_000_000, dtype=np.int64)
    unpackb = msgpack.unpackb

    async def on_msg(msg: Any) -> None:
        value = unpackb(msg.data)
        subject = msg.subject
        previous = last.get(subject)
        v, seq = value["v"], value["seq"]
        last[subject] = (v, seq)
        if not state["counting"]:
            return
        n = state["received"]
        state["received"] = n + 1
        if n < len(latencies):
            latencies[n] = time.time_ns() - value["t"]
        if previous is not None:
            if v is not None and previous[0] is not None and v != previous[0] + 1:
                state["gaps"] += 1
            if seq != previous[1] + 1:
                state["seq_gaps"] += 1

    await nc.subscribe(
        "cs.val.>", cb=on_msg, pending_msgs_limit=2_000_000, pending_bytes_limit=2**30
    )
    await nc.flush()
    print("subscriber ready", flush=True)
    deadline = time.monotonic() + 180
    while True:
        if len(last) >= channels or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(warmup)
    me = psutil.Process()
    cpu0 = me.cpu_times()
    state["counting"] = True
    start = time.monotonic()
    print("window start", flush=True)
    await asyncio.sleep(window)
    state["counting"] = False
    elapsed = time.monotonic() - start
    cpu1 = me.cpu_times()
    print("window end", flush=True)
    n = min(state["received"], len(latencies))
    lat = latencies[:n] / 1e6
    result = {
        "received": state["received"],
        "gaps": state["gaps"],
        "seq_gaps": state["seq_gaps"],
        "channels": len(last),
        "window_s": elapsed,
        "cpu_percent": round(
            (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / elapsed * 100, 1
        ),
        "latency_ms": {
            "p50": round(float(np.percentile(lat, 50)), 2) if n else None,
            "p99": round(float(np.percentile(lat, 99)), 2) if n else None,
            "max": round(float(lat.max()), 2) if n else None,
        },
    }
    await asyncio.to_thread(Path(out).write_text, json.dumps(result))
    await nc.close()
    print("subscriber done", flush=True)


if __name__ == "__main__":
    url, warmup, window, out, channels = sys.argv[1:6]
    uvloop.run(main(url, float(warmup), float(window), out, int(channels)))
