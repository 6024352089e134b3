"""Benchmark of the last-value store: memory vs file storage.

For each storage type: core-NATS publish rate of value messages until the stream
has stored them all, nats-server CPU during that, and the time to read the last values of
1000 (or all, when fewer) and ``--channels`` channels with :func:`fetch_last`
(median of 5). Prints JSON.

    .venv/bin/python -m synoptic_benchmarks.bus.store [--channels 5000] [--messages 200000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import psutil

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last
from synoptic_schemas import Subjects, encode, parse_channel


async def stored(
    nc: NatsClient, stream: str, messages: int, timeout: float = 60
) -> None:
    """Wait until the stream has taken in all ``messages`` published (its last
    sequence): a core publish is acknowledged by nobody, and reading the store
    before its ingest caught up would find channels missing."""
    deadline = time.monotonic() + timeout
    while True:
        reply = await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=30)
        if json.loads(reply.data)["state"]["last_seq"] >= messages:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{stream} did not store {messages} messages")
        await asyncio.sleep(0.005)


async def measure(storage: str, channels: int, messages: int) -> dict[str, object]:
    with NatsServer() as server:
        nc = await connect(server.url, name="bench")
        config = StoreConfig(storage=storage)  # type: ignore[arg-type]
        await ensure_store(nc, config)
        subjects = Subjects()
        names = [
            subjects.val(parse_channel(f"ca://BENCH:{i:05d}")) for i in range(channels)
        ]
        proc = psutil.Process(server.process.pid)  # type: ignore[union-attr]
        proc.cpu_percent()
        started = time.perf_counter()
        for i in range(messages):
            payload = encode({"ver": 1, "v": float(i), "t": time.time_ns(), "sev": 0,
                              "st": "NO_ALARM", "seq": i // channels + 1, "ep": 1, "c": True})  # fmt: skip
            await nc.publish(names[i % channels], payload)
        await nc.flush()
        await stored(nc, config.stream, messages)
        publish_s = time.perf_counter() - started
        server_cpu = proc.cpu_percent()
        reads = {}
        for n in sorted({min(1000, channels), channels}):
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                snap = await fetch_last(nc, names[:n], stream=config.stream, timeout=30)
                times.append(time.perf_counter() - t0)
                if len(snap.messages) != n:
                    raise RuntimeError(
                        f"read {len(snap.messages)} of the {n} channels stored"
                    )
            reads[f"read_{n}_ms"] = round(statistics.median(times) * 1000, 1)
        await nc.close()
        return {
            "storage": storage,
            "published_per_s": round(messages / publish_s),
            "nats_server_cpu_percent": round(server_cpu, 1),
            "nats_server_rss_mib": round(proc.memory_info().rss / 2**20, 1),
            **reads,
        }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--channels", type=int, default=5000)
    parser.add_argument("--messages", type=int, default=200_000)
    add_save_option(parser)
    args = parser.parse_args()
    results = [
        await measure(s, args.channels, args.messages) for s in ("memory", "file")
    ]
    report = {
        "benchmark": "last-value store",
        "machine": machine(),
        "channels": args.channels,
        "messages": args.messages,
        "results": results,
    }
    emit("store", report, save=args.save, indent=2)


if __name__ == "__main__":
    asyncio.run(main())
