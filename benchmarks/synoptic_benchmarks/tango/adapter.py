"""Tango adapter benchmark (``make bench-tango``): JSON on stdout.

Workload: simulated device servers (``synoptic sim tango``, database-less) whose
``bulk_NNNN`` attributes count up by 1 per poll and send change events.

1. Subscription (median of ``--reps``): for 400 attributes on one device and 4000
   over 10 devices, seconds from "monitor these" to the first value of every
   attribute and to every change-event subscription confirmed; in the same run a
   PyTango-only client doing the same subscriptions, one by one (the default
   ``SyncRead`` mode: first value during the call) and all at once
   (``AsyncRead``). Each measurement runs in a fresh process.
2. Throughput: ``synoptic adapter tango`` publishing to a local nats-server, one
   subscriber process counting what arrives (:mod:`synoptic_benchmarks.bus.subscriber`): events/s,
   gaps (a skipped count: lost between the device and the bus), seq gaps, adapter
   CPU (% of one core) and RSS, latency from the Tango timestamp to the subscriber
   (p50/p99); then a PyTango-only client counting the same events for the same
   window, as the reference.

3. With ``--harm`` instead: no harm to a standard device (slow, timing-out and
   failing attributes among 414), beside a bare PyTango client
   (:mod:`synoptic_benchmarks.tango.harm`).

Everything on loopback; every step bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from synoptic_adapters.testing import synoptic_command
from synoptic_benchmarks.bus.counting import CountingSubscriber
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_benchmarks.tango.harm import harm_report
from synoptic_benchmarks.tango.procs import (
    SETTLE_TIMEOUT,
    Servers,
    children_together,
    cpu_seconds,
    in_child,
    per_event,
    slowest,
)
from synoptic_benchmarks.tango.workers import workers_runs
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, ProcessError

# -- subscription timing (each in a fresh process) -----------------------------------


def _reference_run(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A PyTango-only measurement; a crash of that client is reported, not
    fatal (seen once: cppTango's ZeroMQ "Too many open files", then SIGSEGV)."""
    try:
        return in_child(kind, spec)
    except ProcessError as exc:
        return {"error": str(exc).splitlines()[0]}


def _in_shards(
    spec: dict[str, Any], shards: int, by_device: bool = False
) -> dict[str, float]:
    """The adapter's subscription timing split over ``shards`` processes (as
    ``--shard i/n`` replicas split channels, or, ``by_device``, whole devices
    dealt out in turn, as one adapter per device server would), all started at
    the same moment; times until the slowest shard is done."""
    from synoptic_adapters.sharding import Shard
    from synoptic_schemas import parse_channel

    specs: dict[int, dict[str, Any]] = {}
    for index in range(shards):
        shard = Shard(index, shards)
        if by_device:
            devices = sorted({parse_channel(u).tango_device for u in spec["uris"]})
            mine = set(devices[index::shards])
            own = [u for u in spec["uris"] if parse_channel(u).tango_device in mine]
        else:
            own = [u for u in spec["uris"] if shard.owns(parse_channel(u))]
        if own:  # whole devices hash to shards: one may get none
            specs[index] = {**spec, "uris": own}
    return slowest(*children_together("adapter", specs, "bench-shard"))


def subscription_case(
    devices: int, bulk: int, reps: int, shards: int = 1, workers: Sequence[int] = ()
) -> dict[str, Any]:
    servers = Servers(devices, bulk, rate=1.0)
    try:
        hosts = sorted(set(servers.hosts))
        spec_adapter = {"uris": servers.uris(), "hosts": hosts}
        spec_pytango = {"urls": servers.devices_urls(), "bulk": bulk}
        runs: dict[str, list[dict[str, float]]] = {
            "adapter": [], "pytango_one_by_one": [], "pytango_asyncread": [],
        }  # fmt: skip
        if shards > 1:
            runs[f"adapter_{shards}_shards"] = []
            runs[f"adapter_{shards}_device_groups"] = []
        for _ in range(reps):
            runs["adapter"].append(in_child("adapter", spec_adapter))
            if shards > 1:
                runs[f"adapter_{shards}_shards"].append(
                    _in_shards(spec_adapter, shards)
                )
                runs[f"adapter_{shards}_device_groups"].append(
                    _in_shards(spec_adapter, shards, by_device=True)
                )
            runs["pytango_one_by_one"].append(_reference_run("sync", spec_pytango))
            runs["pytango_asyncread"].append(_reference_run("asyncread", spec_pytango))
            if workers and devices > 1:
                for name, measured in workers_runs(servers, list(workers)).items():
                    runs.setdefault(name, []).extend(measured)
    finally:
        servers.close()
    result: dict[str, Any] = {"devices": devices, "attributes": devices * bulk}
    for client, all_runs in runs.items():
        measured = [m for m in all_runs if "error" not in m]
        if failed := [m["error"] for m in all_runs if "error" in m]:
            result[f"{client}_failed"] = failed
        if not measured:
            continue
        keys = [
            key
            for key, value in measured[0].items()
            if key.endswith("_s") and isinstance(value, int | float)
        ]
        result[client] = {
            key: round(statistics.median(m[key] for m in measured), 3) for key in keys
        }
        result[client]["runs"] = [
            {k: round(m[k], 3) for k in keys} | {"stages_s": m["stages_s"]}
            if "stages_s" in m
            else {k: round(m[k], 3) for k in keys}
            for m in measured
        ]
    return result


# -- throughput through NATS ---------------------------------------------------------------


def throughput_case(
    devices: int,
    bulk: int,
    rate: float,
    warmup: float,
    window: float,
    shards: int = 1,
    workers: int = 1,
) -> dict[str, Any]:
    servers = Servers(devices, bulk, rate)
    try:
        with tempfile.TemporaryDirectory(prefix="synoptic-bench-tango-") as tmp:
            result = _through_adapter(
                servers, Path(tmp), warmup, window, shards, workers
            )
        spec = {"urls": servers.devices_urls(), "bulk": bulk, "window": window}
        try:
            timeout = window + SETTLE_TIMEOUT + 60
            result["pytango_reference"] = in_child("count", spec, timeout)
        except ProcessError as exc:  # seen: cppTango "Too many open files", SIGSEGV
            result["pytango_reference"] = {"error": str(exc).splitlines()[0]}
    finally:
        servers.close()
    result.update(
        adapter_processes=shards,
        workers=workers,
        devices=devices,
        attributes=devices * bulk,
        rate_hz=rate,
        expected_events_per_s=devices * bulk * rate,
    )
    return result


def _through_adapter(
    servers: Servers,
    tmp: Path,
    warmup: float,
    window: float,
    shards: int,
    workers: int = 1,
) -> dict[str, Any]:
    """``shards`` adapter processes (``--shard i/n``, each with ``workers``
    subscription workers) → NATS → one subscriber."""
    nats = NatsServer(store_dir=tmp / "js").start()
    adapters: list[Process] = []
    try:
        config = {
            "id": "bench-tango",
            "nats": {"url": nats.url},
            "channels": servers.uris(),
            "tango": {"no_database_hosts": sorted(set(servers.hosts))},
        }
        path = tmp / "tango.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        channels = len(servers.uris())
        with CountingSubscriber(nats.url, warmup, window, channels, tmp) as subscriber:
            for index in range(shards):
                argv = [
                    synoptic_command(), "adapter", "tango", "--config", str(path),
                    "--shard", f"{index}/{shards}", "--id", f"bench-tango-{index}",
                    "--workers", str(workers),
                ]  # fmt: skip
                adapters.append(Process(f"adapter-tango-{index}", argv))
            for index, adapter in enumerate(adapters):
                adapter.wait_for(rf"adapter bench-tango-{index} ready", 120)
            procs = [psutil.Process(adapter.pid) for adapter in adapters]
            procs += [child for proc in procs for child in proc.children()]
            subscriber.window_start(warmup + 120)
            per_process0 = [sum(proc.cpu_times()[:2]) for proc in procs]
            assert nats.process is not None
            nats_proc = psutil.Process(nats.process.pid)
            nats0 = sum(nats_proc.cpu_times()[:2])
            cpu0, servers0 = cpu_seconds(procs), servers.cpu_seconds()
            t0 = time.monotonic()
            subscriber.window_end()
            elapsed = time.monotonic() - t0
            cpu1, servers1 = cpu_seconds(procs), servers.cpu_seconds()
            nats1 = sum(nats_proc.cpu_times()[:2])
            per_process = [
                round((sum(proc.cpu_times()[:2]) - before) / elapsed * 100, 1)
                for proc, before in zip(procs, per_process0, strict=True)
            ]
            rss = sum(proc.memory_info().rss for proc in procs)
            sub = subscriber.result()
    finally:
        for adapter in adapters:
            adapter.stop()
        nats.close()
    events_per_s = sub["received"] / sub["window_s"]
    return {
        "events_per_s": round(events_per_s, 1),
        "gaps": sub["gaps"],
        "seq_gaps": sub["seq_gaps"],
        "channels_seen": sub["channels"],
        "adapter_cpu_percent": round((cpu1 - cpu0) / elapsed * 100, 1),
        # adapter CPU per event carried (compare: the reference's us_per_event)
        "adapter_us_per_event": per_event(cpu1 - cpu0, elapsed, events_per_s),
        "adapter_cpu_percent_per_process": per_process,
        "adapter_rss_mib": round(rss / 2**20, 1),
        "servers_cpu_percent": round((servers1 - servers0) / elapsed * 100, 1),
        "nats_server_cpu_percent": round((nats1 - nats0) / elapsed * 100, 1),
        "latency_ms": sub["latency_ms"],
        "subscriber_cpu_percent": sub["cpu_percent"],
        "window_s": round(sub["window_s"], 2),
    }


# -- main ----------------------------------------------------------------------------------


def _case(text: str) -> tuple[int, int, float]:
    """``DEVICESxBULK[@RATE]`` → (devices, bulk, rate)."""
    shape, _, rate = text.partition("@")
    devices, _, bulk = shape.partition("x")
    return int(devices), int(bulk), float(rate or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--subscription", nargs="*", default=["1x400", "10x400"],
        help="DEVICESxATTRIBUTES[:SHARDS] cases for subscription timing (with "
        "SHARDS, also the adapter split over that many processes)",
    )  # fmt: skip
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--workers", nargs="*", type=int, default=[2, 4, 5],
        help="subscription cases of several devices also run the adapter with "
        "each of these --workers counts, and PyTango in as many processes",
    )  # fmt: skip
    parser.add_argument(
        "--throughput", nargs="*",
        default=["1x400@10", "10x400@5", "10x400@5:w5", "10x400@5:4"],
        help="DEVICESxATTRIBUTES@HZ[:SHARDS|:wWORKERS] cases for throughput "
        "(SHARDS: adapter processes, --shard i/n; WORKERS: one adapter with "
        "--workers; default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--warmup", type=float, default=40.0,
        help="seconds after every channel's first value before the window "
        "(event subscriptions of 4000 attributes take ~30 s here)",
    )  # fmt: skip
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument(
        "--harm", action="store_true",
        help="run only the no-harm cases (a standard device with slow, timing-out "
        "and failing attributes, and the same device clean; report tango-harm)",
    )  # fmt: skip
    parser.add_argument("--harm-slow", type=float, default=2.0, help="s, 'slow'")
    parser.add_argument("--harm-timeout", type=float, default=10.0, help="s, 'timeout'")
    parser.add_argument(
        "--harm-after", type=float, default=60.0,
        help="seconds after the adapter is ready when the event-rate window starts",
    )  # fmt: skip
    parser.add_argument("--harm-window", type=float, default=60.0)
    add_save_option(parser)
    args = parser.parse_args(argv)
    if args.harm:
        at_start = machine()
        cases = asyncio.run(
            harm_report(
                args.harm_slow, args.harm_timeout, args.harm_after, args.harm_window
            )
        )
        report = {"benchmark": "tango-harm", "machine": at_start, "cases": cases}
        emit("tango-harm", report, save=args.save)
        return 0
    report: dict[str, Any] = {"benchmark": "tango-adapter", "machine": machine()}
    report["subscription"] = []
    for case in args.subscription:
        shape, _, shards = case.partition(":")
        devices, bulk, _ = _case(shape)
        result = subscription_case(
            devices, bulk, args.reps, int(shards or 1), args.workers
        )
        print(json.dumps(result), file=sys.stderr, flush=True)
        report["subscription"].append(result)
    report["throughput"] = []
    for case in args.throughput:
        shape, _, split = case.partition(":")
        devices, bulk, rate = _case(shape)
        workers = int(split[1:]) if split.startswith("w") else 1
        shards = 1 if split.startswith("w") else int(split or 1)
        result = throughput_case(
            devices, bulk, rate or 10.0, args.warmup, args.window, shards, workers
        )
        print(json.dumps(result), file=sys.stderr, flush=True)
        report["throughput"].append(result)
    emit("tango", report, save=args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
