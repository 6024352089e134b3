"""PV Access adapter beside the CA adapter (``make bench-pva``): JSON on stdout.

In one run, on the same machine and the same counting workload (the peers' shape:
N counters adding 1 at R Hz, one adapter process, one counting subscriber in
another process), first the CA adapter on the simulated soft IOC, then the PVA
adapter on the simulated PV Access server: published updates/s, gaps, adapter CPU
(% of a core, and µs of CPU per update) and the PVA/CA ratio of CPU per update.

Then the first values of ``--first`` PVs of each protocol: an adapter that
monitors nothing is asked for all of them at once by one demand announcement (as
a gateway does when a screen opens); the time from the announcement until every
channel has published a connected value (and until half and 99 % have).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from synoptic_adapters.sim.epics_db import SimSpec, counter_names
from synoptic_adapters.testing import EpicsAdapter, SimIoc, SimPva
from synoptic_benchmarks.epics.adapter import run_case
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode, parse_channel
from synoptic_schemas.codec import decode_value

PROTOCOLS = ("ca", "pva")


def cpu_us_per_update(result: dict[str, Any]) -> float | None:
    """Adapter CPU time per published update, µs."""
    rate = result["published_updates_per_s"]
    if not rate:
        return None
    return round(result["adapter_cpu_percent_total"] / 100 / rate * 1e6, 2)


async def _first_values(nats_url: str, uris: list[str], proto: str, timeout: float):
    subjects = Subjects()
    nc = await connect(nats_url, name="bench-first-values")
    first: dict[str, float] = {}
    everything = asyncio.Event()

    async def on_msg(msg: Any) -> None:
        _, channel = subjects.parse(msg.subject)
        if channel.uri not in first and decode_value(msg.data)["c"]:
            first[channel.uri] = time.monotonic()
            if len(first) == len(uris):
                everything.set()

    await nc.subscribe(subjects.all_of("val", proto), cb=on_msg)
    await nc.flush()
    want = {"ver": SCHEMA_VERSION, "ch": uris, "lease": 120.0, "by": "bench"}
    t0 = time.monotonic()
    await nc.publish(subjects.want(proto), encode(want))
    await nc.flush()
    try:
        async with asyncio.timeout(timeout):
            await everything.wait()
    except TimeoutError:
        pass
    await nc.close()
    times = sorted(t - t0 for t in first.values())

    def at(fraction: float) -> float | None:
        k = int(fraction * len(uris)) - 1
        return round(times[k], 3) if 0 <= k < len(times) else None

    return {
        "channels": len(uris),
        "connected": len(times),
        "first_value_s": {"p50": at(0.5), "p99": at(0.99), "all": at(1.0)},
    }


def first_values(proto: str, count: int, timeout: float) -> dict[str, Any]:
    """Time from one demand announcement to a value of each of ``count`` PVs."""
    sim_class = SimPva if proto == "pva" else SimIoc
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-") as tmp:
        nats = NatsServer(store_dir=Path(tmp) / "js").start()
        sim = sim_class(records=count, rate=1.0, prefix="FIRST:", extras=False)
        sim.start(120)
        adapter = EpicsAdapter(
            nats.url, sim, [], protocol="pva" if proto == "pva" else "epics",
            connect_timeout=timeout,
        )  # fmt: skip
        try:
            adapter.start(120)
            names = counter_names(SimSpec("FIRST:", count, 1.0))
            uris = [parse_channel(f"{proto}://{n}").uri for n in names]
            result = asyncio.run(_first_values(nats.url, uris, proto, timeout))
        finally:
            adapter.close()
            sim.stop()
            nats.close()
    return {"protocol": proto, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--first", type=int, default=1000, help="PVs of first values")
    parser.add_argument("--first-timeout", type=float, default=30.0)
    add_save_option(parser)
    args = parser.parse_args(argv)
    throughput = []
    for records in args.records:
        pair = {}
        for proto in PROTOCOLS:
            result = run_case(
                records, args.rate, 1, args.warmup, args.window, protocol=proto
            )
            result["adapter_cpu_us_per_update"] = cpu_us_per_update(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
            pair[proto] = result
        ca, pva = (
            pair["ca"]["adapter_cpu_us_per_update"],
            pair["pva"]["adapter_cpu_us_per_update"],
        )
        throughput.append({
            "records": records, "rate_hz": args.rate, **pair,
            "pva_over_ca_cpu_per_update": round(pva / ca, 2) if ca and pva else None,
        })  # fmt: skip
    first = []
    for proto in PROTOCOLS:
        result = first_values(proto, args.first, args.first_timeout)
        print(json.dumps(result), file=sys.stderr, flush=True)
        first.append(result)
    report = {
        "benchmark": "pva-adapter", "machine": machine(),
        "throughput": throughput, "first_values": first,
    }  # fmt: skip
    emit("pva", report, save=args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
