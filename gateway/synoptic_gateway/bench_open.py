"""Screen-open benchmark: socket open → snapshot of every channel, for a group
created anew each time (nobody else watches the channels: subscriptions, store
barrier, last-value read, encoding, send).

One nats-server, one gateway process per mode (store barrier on / off), the store
filled with a value and metadata of every channel by a synthetic publisher that
keeps updating them at ``--rate`` Hz meanwhile. Prints JSON::

    python -m synoptic_gateway.bench_open --channels 100,1000 --repeat 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from typing import Any

from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import Publisher, start_gateway


async def _open_once(url: str, uris: list[str]) -> float:
    client = GatewayClient(url, ping_interval=None, max_queue=None)
    started = time.perf_counter()
    await client.connect()
    sub = await client.subscribe(uris)
    elapsed = time.perf_counter() - started
    assert len(sub.channels) == len(uris) and all(v is not None for v in sub.values)
    await client.close()
    return elapsed


def _summary(times: list[float]) -> dict[str, float]:
    ms = sorted(t * 1000 for t in times)
    return {
        "median_ms": round(statistics.median(ms), 1),
        "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 1),
        "min_ms": round(ms[0], 1),
        "max_ms": round(ms[-1], 1),
    }


async def run(channels: list[int], repeat: int, rate: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with NatsServer() as server:
        nc = await connect(server.url, name="bench-open")
        await ensure_store(nc, StoreConfig())
        publisher = Publisher(nc)
        uris = [f"ca://BENCH:OPEN:{i:05d}" for i in range(max(channels))]
        for uri in uris:
            await publisher.value(uri)
            await publisher.meta(uri)
        await nc.flush()
        stop = asyncio.Event()

        async def updates() -> None:  # every channel at ``rate`` Hz
            while not stop.is_set():
                for uri in uris:
                    await publisher.value(uri)
                await nc.flush()
                await asyncio.sleep(1.0 / rate)

        async def beats() -> None:  # the source is alive (no stale marks)
            while not stop.is_set():
                await publisher.heartbeat()
                await asyncio.sleep(1.0)

        updater = asyncio.create_task(updates()) if rate > 0 else None
        beater = asyncio.create_task(beats())
        try:
            for mode in ("--snapshot-barrier", "--no-snapshot-barrier"):
                gateway = start_gateway(server.url, mode)
                try:
                    for n in channels:
                        await _open_once(gateway.ws_url, uris[:n])  # warm-up
                        times = [
                            await _open_once(gateway.ws_url, uris[:n])
                            for _ in range(repeat)
                        ]
                        results[f"{n}ch {mode.lstrip('-')}"] = _summary(times)
                finally:
                    gateway.stop()
        finally:
            stop.set()
            for task in (updater, beater):
                if task is not None:
                    with contextlib.suppress(Exception):
                        await task
            await nc.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synoptic_gateway.bench_open")
    parser.add_argument("--channels", default="100,1000", help="comma-separated")
    parser.add_argument("--repeat", type=int, default=30, help="opens per size")
    parser.add_argument("--rate", type=float, default=10.0, help="updates/s/channel")
    args = parser.parse_args(argv)
    channels = [int(n) for n in args.channels.split(",")]
    results = asyncio.run(run(channels, args.repeat, args.rate))
    print(json.dumps({"bench": "gateway-screen-open", "repeat": args.repeat,
                      "rate_hz": args.rate, "results": results}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
