"""EPICS adapter benchmark (``make bench-epics``): JSON on stdout.

Workload (the peers' shape): a simulated soft IOC of N ``calcout`` counters, each
adding 1 to itself at R Hz; ``S`` adapter processes (``--shard i/S``) monitor all of
them and publish to a local nats-server; one subscriber process counts what
arrives. Per run: published updates/s, gaps (a counter value skipped: lost on the
way from the IOC), seq gaps (lost on the bus), adapter CPU (% of one core, summed
over shards) and RSS, and latency from the IOC's record timestamp to the
subscriber (p50/p99). Everything on loopback; every run bounded in time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import psutil

from synoptic_adapters.sim.epics_db import SimSpec, counter_names
from synoptic_adapters.testing import EpicsAdapter, SimIoc, SimPva
from synoptic_benchmarks.bus.counting import CountingSubscriber
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer


def run_case(
    records: int,
    rate: float,
    shards: int,
    warmup: float,
    window: float,
    protocol: str = "ca",
) -> dict:
    """One measurement; returns the JSON-able result. ``protocol`` ``pva`` runs
    the same counters on the simulated PV Access server and the PVA adapter."""
    sim_class = SimPva if protocol == "pva" else SimIoc
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-") as tmp:
        nats = NatsServer(store_dir=Path(tmp) / "js").start()
        ioc = sim_class(
            records=records, rate=rate, prefix="BENCH:", extras=False
        ).start(120)
        adapters: list[EpicsAdapter] = []
        try:
            uris = [
                f"{protocol}://{n}"
                for n in counter_names(SimSpec("BENCH:", records, rate))
            ]
            with CountingSubscriber(
                nats.url, warmup, window, records, Path(tmp)
            ) as subscriber:
                for i in range(shards):
                    adapters.append(
                        EpicsAdapter(
                            nats.url,
                            ioc,
                            uris,
                            adapter_id=f"bench-{i}",
                            shard=f"{i}/{shards}",
                            protocol="pva" if protocol == "pva" else "epics",
                        ).start(120)
                    )
                procs = [psutil.Process(a.process.pid) for a in adapters if a.process]
                ioc_proc = psutil.Process(ioc.process.pid) if ioc.process else None
                subscriber.window_start(warmup + 60)
                cpu0 = [p.cpu_times() for p in procs]
                ioc0 = ioc_proc.cpu_times() if ioc_proc else None
                t0 = time.monotonic()
                subscriber.window_end()
                elapsed = time.monotonic() - t0
                cpu1 = [p.cpu_times() for p in procs]
                ioc1 = ioc_proc.cpu_times() if ioc_proc else None
                rss = [p.memory_info().rss for p in procs]
                sub = subscriber.result()
        finally:
            for adapter in adapters:
                adapter.close()
            ioc.stop()
            nats.close()
    cpu = [
        (b.user + b.system - a.user - a.system) / elapsed * 100
        for a, b in zip(cpu0, cpu1, strict=True)
    ]
    return {
        "protocol": protocol,
        "records": records,
        "rate_hz": rate,
        "adapters": shards,
        "expected_updates_per_s": records * rate,
        "published_updates_per_s": round(sub["received"] / sub["window_s"], 1),
        "gaps": sub["gaps"],
        "seq_gaps": sub["seq_gaps"],
        "channels_seen": sub["channels"],
        "adapter_cpu_percent": [round(c, 1) for c in cpu],
        "adapter_cpu_percent_total": round(sum(cpu), 1),
        "adapter_rss_mib": [round(r / 2**20, 1) for r in rss],
        "ioc_cpu_percent": round(
            (ioc1.user + ioc1.system - ioc0.user - ioc0.system) / elapsed * 100, 1
        )
        if ioc0 and ioc1
        else None,
        "latency_ms": sub["latency_ms"],
        "subscriber_cpu_percent": sub["cpu_percent"],
        "window_s": round(sub["window_s"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", nargs="+", default=["1000x1", "2000x1", "5000x1", "5000x2"],
        help="RECORDSxADAPTERS per run (the adapters split the channels by --shard)",
    )  # fmt: skip
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=20.0)
    add_save_option(parser)
    args = parser.parse_args(argv)
    results = []
    for case in args.cases:
        records, _, shards = case.partition("x")
        result = run_case(
            int(records), args.rate, int(shards or 1), args.warmup, args.window
        )
        print(json.dumps(result), file=sys.stderr, flush=True)
        results.append(result)
    report = {"benchmark": "epics-adapter", "machine": machine(), "runs": results}
    emit("epics", report, save=args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
