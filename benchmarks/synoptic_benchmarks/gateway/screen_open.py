"""Screen-open benchmark: socket open → snapshot of every channel, cold and warm.

- **cold**: the first viewer of a screen whose channels this gateway does not hold
  at all (each open uses a channel set never opened before): NATS subscriptions,
  store barrier, batched last-value read, merge, encoding, send.
- **reopen**: the same screen opened again right after its previous viewer closed
  (a page reload): its channels still linger, subscribed and current
  (``--linger``), so no store read is needed.

One nats-server and one gateway; the store holds a value and metadata of every
channel, and a synthetic publisher updates the screen being opened at ``--rate``
Hz meanwhile (updates flow while it opens). Each open is a new
:class:`~synoptic_gateway.client.GatewayClient` (its decode of the snapshot is
included). The gateway's own stage times of the cold opens (from its log) are
reported too. Prints JSON::

    python -m synoptic_benchmarks.gateway.screen_open --channels 100,1000 --repeat 30

For paired A/B runs of two builds, ``BENCH_GATEWAY_PYTHONPATH`` is put in front
of the gateway process's import path (e.g. an unpacked older tree's
``gateway:schemas``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import time
from typing import Any

import psutil

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway

#: The gateway's log line for each new group (see ``Hub._build``).
_STAGES = re.compile(
    r"states ([\d.]+) ms, subscribe ([\d.]+) ms, barrier ([\d.]+) ms, "
    r"read ([\d.]+) ms, merge ([\d.]+) ms"
)


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


def _stage_medians(output: str, last: int) -> dict[str, float]:
    """Medians of the stage times of the gateway's ``last`` new groups."""
    found = [m.groups() for m in map(_STAGES.search, output.splitlines()) if m]
    names = ("states", "subscribe", "barrier", "read", "merge")
    columns = zip(*found[-last:], strict=True) if found else ()
    return {
        name: round(statistics.median(float(v) for v in column), 2)
        for name, column in zip(names, columns, strict=False)
    }


def _start_gateway(url: str, *args: str) -> GatewayProc:
    extra = os.environ.get("BENCH_GATEWAY_PYTHONPATH")
    if not extra:
        return start_gateway(url, *args)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = extra + (os.pathsep + before if before else "")
    try:
        return start_gateway(url, *args)
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


async def run(
    channels: list[int], repeat: int, rate: float, gateway_args: list[str]
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with NatsServer() as server:
        nc = await connect(server.url, name="bench-open")
        await ensure_store(nc, StoreConfig())
        publisher = Publisher(nc)
        # one screen per cold open (+1 warm-up), all in the store
        screens = {
            n: [[f"ca://BENCH:OPEN:{n}:{s:03d}:{i:05d}" for i in range(n)]
                for s in range(repeat + 1)]
            for n in channels
        }  # fmt: skip
        for sets in screens.values():
            for uris in sets:
                for uri in uris:
                    await publisher.value(uri)
                    await publisher.meta(uri)
                await nc.flush()
        hot: list[str] = []  # the screen being opened: updated at ``rate`` Hz
        stop = asyncio.Event()

        async def updates() -> None:
            while not stop.is_set():
                for uri in list(hot):
                    await publisher.value(uri)
                await nc.flush()
                await asyncio.sleep(1.0 / rate)

        async def beats() -> None:  # the source is alive (no stale marks)
            while not stop.is_set():
                await publisher.heartbeat()
                await asyncio.sleep(1.0)

        updater = asyncio.create_task(updates()) if rate > 0 else None
        beater = asyncio.create_task(beats())
        gateway = _start_gateway(server.url, *gateway_args)
        proc = psutil.Process(gateway.proc.pid)
        try:
            for n in channels:
                cold: list[float] = []
                cpu = 0.0
                for index, uris in enumerate(screens[n]):
                    hot[:] = uris
                    await asyncio.sleep(0.1)  # its updates flow
                    before = sum(proc.cpu_times()[:2])
                    elapsed = await _open_once(gateway.ws_url, uris)
                    if index:  # the first is a warm-up
                        cold.append(elapsed)
                        cpu += sum(proc.cpu_times()[:2]) - before
                stages = _stage_medians(gateway.proc.output(), len(cold))
                reopen = [
                    await _open_once(gateway.ws_url, screens[n][-1])
                    for _ in range(repeat)
                ]
                results[f"{n}ch cold"] = {
                    **_summary(cold),
                    "gateway_stages_median_ms": stages,
                    # gateway process CPU from socket open to snapshot decoded
                    # (its share of the 10 Hz updates included), mean per open
                    "gateway_cpu_ms_per_open": round(1000 * cpu / len(cold), 1),
                }
                results[f"{n}ch reopen"] = _summary(reopen)
        finally:
            gateway.stop()
            stop.set()
            for task in (updater, beater):
                if task is not None:
                    with contextlib.suppress(Exception):
                        await task
            await nc.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synoptic_benchmarks.gateway.screen_open"
    )
    parser.add_argument("--channels", default="100,1000", help="comma-separated")
    parser.add_argument("--repeat", type=int, default=30, help="opens per size")
    parser.add_argument("--rate", type=float, default=10.0, help="updates/s/channel")
    parser.add_argument(
        "--gateway-arg", action="append", default=[],
        help="extra argument of the gateway (repeat), e.g. --gateway-arg=--linger=0",
    )  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args(argv)
    channels = [int(n) for n in args.channels.split(",")]
    started = time.perf_counter()
    results = asyncio.run(run(channels, args.repeat, args.rate, args.gateway_arg))
    report = {"bench": "gateway-screen-open", "machine": machine(),
              "repeat": args.repeat, "rate_hz": args.rate,
              "gateway_args": args.gateway_arg,
              "load_average": [round(x, 2) for x in os.getloadavg()],
              "wall_s": round(time.perf_counter() - started, 1),
              "results": results}  # fmt: skip
    emit("gateway-open", report, save=args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
