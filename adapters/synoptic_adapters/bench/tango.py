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
   subscriber process counting what arrives (``bench/subscriber.py``): events/s,
   gaps (a skipped count: lost between the device and the bus), seq gaps, adapter
   CPU (% of one core) and RSS, latency from the Tango timestamp to the subscriber
   (p50/p99); then a PyTango-only client counting the same events for the same
   window, as the reference.

Everything on loopback; every step bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from synoptic_adapters.sim.tango_command import READY
from synoptic_adapters.testing import synoptic_command
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, ProcessError, free_port

_SUBSCRIBER = Path(__file__).with_name("subscriber.py")
DEVICES_PER_SERVER = 2
#: Longest wait for the reference client's subscriptions, seconds.
SETTLE_TIMEOUT = 120.0


# -- device servers --------------------------------------------------------------


class Servers:
    """``devices`` simulated devices of ``bulk`` counters, 2 per server process."""

    def __init__(self, devices: int, bulk: int, rate: float) -> None:
        self.devices, self.bulk = devices, bulk
        self.procs: list[Process] = []
        self.hosts: list[str] = []  # host:port per device
        for first in range(0, devices, DEVICES_PER_SERVER):
            count = min(DEVICES_PER_SERVER, devices - first)
            port = free_port()
            names = ",".join(f"bench/d/{first + i + 1}" for i in range(count))
            argv = [
                sys.executable, "-m", "synoptic_adapters.sim.tango_command",
                "--port", str(port), "--bulk", str(bulk), "--rate", str(rate),
                "--instance", f"b{first}", "--dlist", names,
            ]  # fmt: skip
            self.procs.append(Process(f"sim-{first}", argv))
            self.hosts += [f"127.0.0.1:{port}"] * count
        for proc in self.procs:
            proc.wait_for(READY, timeout=120)

    def devices_urls(self) -> list[str]:
        return [
            f"tango://{host}/bench/d/{i + 1}#dbase=no"
            for i, host in enumerate(self.hosts)
        ]

    def uris(self) -> list[str]:
        return [
            f"tango://{host}/bench/d/{i + 1}/bulk_{n:04d}"
            for i, host in enumerate(self.hosts)
            for n in range(self.bulk)
        ]

    def cpu_seconds(self) -> float:
        total = 0.0
        for proc in self.procs:
            times = psutil.Process(proc.pid).cpu_times()
            total += times.user + times.system
        return total

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()


# -- subscription timing (each in a fresh process) -----------------------------------


def _wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.001)


async def _adapter_subscription(
    uris: list[str], hosts: list[str], go_file: str | None = None
) -> dict[str, float]:
    from synoptic_adapters.tango.device import Events
    from synoptic_adapters.tango.settings import TangoSettings
    from synoptic_adapters.tango.source import TangoSource
    from synoptic_schemas import parse_channel

    channels = [parse_channel(uri) for uri in uris]
    seen: set[Any] = set()
    first_values = asyncio.get_running_loop().create_future()

    class Sink:
        def value(self, channel: Any, v: Any, *, t: int, sev: int, st: str) -> None:
            seen.add(channel)
            if len(seen) == len(channels) and not first_values.done():
                first_values.set_result(time.perf_counter())

        def meta(self, channel: Any, meta: dict[str, Any]) -> None:
            pass

        def disconnected(self, channel: Any, reason: str) -> None:
            pass

    source = TangoSource(TangoSettings(no_database_hosts=frozenset(hosts)))
    await source.start(Sink())
    if go_file:  # one shard of several: start when all of them are ready
        print("CHILD READY", flush=True)
        await asyncio.to_thread(_wait_for_file, go_file)
    start = time.perf_counter()
    started_at = time.time()
    cpu0 = time.process_time()
    await source.monitor(channels)
    first = await asyncio.wait_for(first_values, 60)
    async with asyncio.timeout(60):
        while True:
            attrs = [a for link in source.links.values() for a in link.attrs.values()]
            if all(a.events is Events.LIVE for a in attrs):
                break
            await asyncio.sleep(0.01)
    live = time.perf_counter()
    cpu = time.process_time() - cpu0
    await source.stop()
    return {
        "cpu_s": cpu,
        "first_values_s": first - start,
        "subscribed_s": live - start,
        "started_at": started_at,
    }


def _pytango_subscription(
    urls: list[str], bulk: int, mode: str, go_file: str | None = None
) -> dict[str, float]:
    import tango

    names = [f"bulk_{n:04d}" for n in range(bulk)]
    total = len(urls) * bulk
    lock = threading.Lock()
    firsts: set[tuple[int, str]] = set()
    done = threading.Event()

    def callback_for(index: int):
        def callback(event: Any) -> None:
            if event.err or event.attr_value is None:
                return
            with lock:
                firsts.add((index, event.attr_value.name))
                if len(firsts) == total:
                    done.set()

        return callback

    if go_file:  # one process of several: start when all of them are ready
        print("CHILD READY", flush=True)
        _wait_for_file(go_file)
    start = time.perf_counter()
    started_at = time.time()
    cpu0 = time.process_time()
    proxies = [tango.DeviceProxy(url) for url in urls]
    sub_mode = (
        tango.EventSubMode.SyncRead if mode == "sync" else tango.EventSubMode.AsyncRead
    )
    for index, proxy in enumerate(proxies):
        callback = callback_for(index)
        for name in names:
            proxy.subscribe_event(
                name, tango.EventType.CHANGE_EVENT, callback, sub_mode
            )
    returned = time.perf_counter()
    done.wait(60)
    first = time.perf_counter()
    cpu = time.process_time() - cpu0
    return {
        "cpu_s": cpu,
        "calls_returned_s": returned - start,
        "first_values_s": first - start,
        "subscribed_s": (returned if mode == "sync" else first) - start,
        "started_at": started_at,
    }


def _child(args: argparse.Namespace) -> int:
    spec = json.loads(args.child_spec)
    if args.child == "adapter":
        result = asyncio.run(
            _adapter_subscription(spec["uris"], spec["hosts"], spec.get("go_file"))
        )
    else:
        result = _pytango_subscription(
            spec["urls"], spec["bulk"], args.child, spec.get("go_file")
        )
    print("RESULT " + json.dumps(result), flush=True)
    os._exit(0)  # skip Tango's slow teardown of thousands of subscriptions


def _in_child(kind: str, spec: dict[str, Any]) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        argv = [
            sys.executable, "-m", "synoptic_adapters.bench.tango",
            "--child", kind, "--child-spec", f"@{handle.name}",
        ]  # fmt: skip
        proc = Process(f"bench-{kind}", argv)
        try:
            match = proc.wait_for(r"^RESULT (.*)$", timeout=120)
        finally:
            proc.stop(5)
        return json.loads(match.group(1))
    finally:
        os.unlink(handle.name)


def _reference_run(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A PyTango-only measurement; a crash of that client is reported, not
    fatal (seen once: cppTango's ZeroMQ "Too many open files", then SIGSEGV)."""
    try:
        return _in_child(kind, spec)
    except ProcessError as exc:
        return {"error": str(exc).splitlines()[0]}


def children_together(
    kind: str, specs: dict[int, dict[str, Any]], name: str
) -> tuple[list[dict[str, Any]], float]:
    """Run one ``--child kind`` process per spec, all told to go at the same
    moment (a file they wait for); their RESULT objects and that moment."""
    folder = tempfile.mkdtemp(prefix=f"synoptic-{name}-")
    go_file = os.path.join(folder, "go")
    procs: list[Process] = []
    try:
        for index, spec in specs.items():
            path = os.path.join(folder, f"spec-{index}.json")
            with open(path, "w") as handle:
                json.dump({**spec, "go_file": go_file}, handle)
            argv = [
                sys.executable, "-m", "synoptic_adapters.bench.tango",
                "--child", kind, "--child-spec", f"@{path}",
            ]  # fmt: skip
            procs.append(Process(f"{name}-{index}", argv))
        for proc in procs:
            proc.wait_for("CHILD READY", timeout=60)
        go_at = time.time()
        Path(go_file).touch()
        results = [
            json.loads(proc.wait_for(r"^RESULT (.*)$", timeout=120).group(1))
            for proc in procs
        ]
    finally:
        for proc in procs:
            proc.stop(5)
        for entry in os.listdir(folder):
            os.unlink(os.path.join(folder, entry))
        os.rmdir(folder)
    return results, go_at


def slowest(results: list[dict[str, Any]], go_at: float) -> dict[str, float]:
    """Seconds from ``go_at`` until the slowest child had its first values and
    every subscription live."""
    return {
        key: max(r["started_at"] + r[key] for r in results) - go_at
        for key in ("first_values_s", "subscribed_s")
    }


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
            runs["adapter"].append(_in_child("adapter", spec_adapter))
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
                from synoptic_adapters.bench.tango_workers import workers_runs

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


def _pytango_counter(urls: list[str], bulk: int, window: float) -> dict[str, Any]:
    """Count change events with a plain PyTango client (sync callbacks)."""
    import tango

    count = [0]
    gaps = [0]
    last: dict[tuple[int, str], float] = {}
    lock = threading.Lock()

    def callback_for(index: int):
        def callback(event: Any) -> None:
            if event.err or event.attr_value is None:
                return
            key, value = (index, event.attr_value.name), event.attr_value.value
            with lock:
                count[0] += 1
                previous = last.get(key)
                if previous is not None and value != previous + 1:
                    gaps[0] += 1
                last[key] = value

        return callback

    proxies = [tango.DeviceProxy(url) for url in urls]
    for index, proxy in enumerate(proxies):
        callback = callback_for(index)
        for n in range(bulk):
            proxy.subscribe_event(
                f"bulk_{n:04d}", tango.EventType.CHANGE_EVENT, callback,
                tango.EventSubMode.AsyncRead,
            )  # fmt: skip
    # the window starts once every attribute has sent an event (all subscribed)
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while len(last) < len(urls) * bulk and time.monotonic() < deadline:
        time.sleep(0.2)
    settled = len(last)
    time.sleep(2.0)
    me = psutil.Process()
    cpu0 = me.cpu_times()
    with lock:
        count[0] = gaps[0] = 0
    start = time.monotonic()
    time.sleep(window)
    with lock:
        received, lost = count[0], gaps[0]
    elapsed = time.monotonic() - start
    cpu1 = me.cpu_times()
    cpu_s = cpu1.user + cpu1.system - cpu0.user - cpu0.system
    return {
        "events_per_s": round(received / elapsed, 1),
        "us_per_event": _per_event(cpu_s, elapsed, received / elapsed),
        "gaps": lost,
        "cpu_percent": round(
            (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / elapsed * 100, 1
        ),
        "rss_mib": round(me.memory_info().rss / 2**20, 1),
        "subscribed_before_window": settled,
    }


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
            result["pytango_reference"] = _reference(spec)
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
    subscriber: Process | None = None
    try:
        config = {
            "id": "bench-tango",
            "nats": {"url": nats.url},
            "channels": servers.uris(),
            "tango": {"no_database_hosts": sorted(set(servers.hosts))},
        }
        path = tmp / "tango.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        out = tmp / "sub.json"
        subscriber = Process(
            "subscriber",
            [sys.executable, str(_SUBSCRIBER), nats.url, str(warmup), str(window), str(out), str(len(servers.uris()))],
        )  # fmt: skip
        subscriber.wait_for("subscriber ready", 30)
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
        subscriber.wait_for("window start", warmup + 120)
        per_process0 = [sum(proc.cpu_times()[:2]) for proc in procs]
        assert nats.process is not None
        nats_proc = psutil.Process(nats.process.pid)
        nats0 = sum(nats_proc.cpu_times()[:2])
        cpu0, servers0 = _cpu_seconds(procs), servers.cpu_seconds()
        t0 = time.monotonic()
        subscriber.wait_for("window end", window + 60)
        elapsed = time.monotonic() - t0
        cpu1, servers1 = _cpu_seconds(procs), servers.cpu_seconds()
        nats1 = sum(nats_proc.cpu_times()[:2])
        per_process = [
            round((sum(proc.cpu_times()[:2]) - before) / elapsed * 100, 1)
            for proc, before in zip(procs, per_process0, strict=True)
        ]
        rss = sum(proc.memory_info().rss for proc in procs)
        subscriber.wait_for("subscriber done", 60)
        sub = json.loads(out.read_text())
    finally:
        if subscriber:
            subscriber.stop()
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
        "adapter_us_per_event": _per_event(cpu1 - cpu0, elapsed, events_per_s),
        "adapter_cpu_percent_per_process": per_process,
        "adapter_rss_mib": round(rss / 2**20, 1),
        "servers_cpu_percent": round((servers1 - servers0) / elapsed * 100, 1),
        "nats_server_cpu_percent": round((nats1 - nats0) / elapsed * 100, 1),
        "latency_ms": sub["latency_ms"],
        "subscriber_cpu_percent": sub["cpu_percent"],
        "window_s": round(sub["window_s"], 2),
    }


def _per_event(cpu_s: float, elapsed_s: float, events_per_s: float) -> float | None:
    """Microseconds of CPU per event."""
    if not events_per_s:
        return None
    return round(cpu_s / elapsed_s / events_per_s * 1e6, 1)


def _cpu_seconds(procs: list[psutil.Process]) -> float:
    return sum(sum(proc.cpu_times()[:2]) for proc in procs)


def _reference(spec: dict[str, Any]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        argv = [
            sys.executable, "-m", "synoptic_adapters.bench.tango",
            "--child", "count", "--child-spec", f"@{handle.name}",
        ]  # fmt: skip
        proc = Process("bench-pytango-count", argv)
        try:
            match = proc.wait_for(
                r"^RESULT (.*)$", timeout=spec["window"] + SETTLE_TIMEOUT + 60
            )
        finally:
            proc.stop(5)
        return json.loads(match.group(1))
    finally:
        os.unlink(handle.name)


# -- main ----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


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
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-spec", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        if args.child_spec.startswith("@"):
            args.child_spec = Path(args.child_spec[1:]).read_text()
        if args.child == "count":
            spec = json.loads(args.child_spec)
            result = _pytango_counter(spec["urls"], spec["bulk"], spec["window"])
            print("RESULT " + json.dumps(result), flush=True)
            os._exit(0)
        return _child(args)
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
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
