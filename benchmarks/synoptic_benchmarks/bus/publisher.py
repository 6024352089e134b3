"""Publisher throughput alone (no control system): JSON on stdout.

``python -m synoptic_benchmarks.bus.publisher [--channels 5000] [--rounds 100]``
pushes ``channels × rounds`` value updates through one :class:`Publisher` into a
local nats-server (with the ``CS_LAST`` stream capturing them) and reports the
CPU seconds this process spent per update.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import uvloop

from synoptic_adapters.publisher import Publisher
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_schemas import Subjects, parse_channel


async def measure(url: str, channels: int, rounds: int) -> dict:
    nc = await connect(url, name="bench-publisher")
    await ensure_store(nc, StoreConfig())
    publisher = Publisher(nc, Subjects(), "bench-publisher", epoch_ms=1)
    await publisher.start()
    names = [parse_channel(f"ca://BENCH:CNT:{i:05d}") for i in range(channels)]
    cpu0, wall0 = time.process_time(), time.monotonic()
    for round_ in range(rounds):
        for channel in names:
            publisher.value(channel, float(round_), t=round_, sev=0, st="NO_ALARM")
        await asyncio.sleep(0)
    while True:
        if not publisher.queued:
            break
        await asyncio.sleep(0.001)
    await nc.flush()
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    updates = channels * rounds
    await publisher.stop()
    await nc.close()
    return {
        "benchmark": "publisher",
        "updates": updates,
        "published": publisher.stats.published,
        "dropped": publisher.stats.dropped,
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "cpu_us_per_update": round(cpu / updates * 1e6, 2),
        "updates_per_cpu_second": round(updates / cpu),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args(argv)
    with NatsServer() as server:
        result = uvloop.run(measure(server.url, args.channels, args.rounds))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
