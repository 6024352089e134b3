"""Gateway benchmark against the peers' workload (``make bench-gateway``; JSON out).

Workload (``../shared/peers.md``): a soft IOC of N counting ``calcout`` records at
10 Hz (``synoptic sim ioc``) read by the EPICS adapter, or, with ``--source
synthetic`` (or when the adapters package is not installed), a publisher process of
N counting channels at 10 Hz straight onto NATS. One gateway process; clients in
separate worker processes (``GatewayClient``), each counting delivered updates,
gaps (a skipped count) and latency (source timestamp → receipt). CPU (% of one
core) and RSS of gateway, adapter, IOC/publisher and nats-server over the window.

Cases: 1 client × {100, 1000, 5000} channels; 10 × 100; 100 × 100 on one shared
screen; 100 × 100 on distinct screens (each a different window of 100 out of 1000
channels, so 100 groups). Screen open = socket open → snapshot of all channels.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_udp_tcp_port
from synoptic_gateway.testing import GatewayProc, ca_env, start_gateway

RATE_HZ = 10.0
WORKER_CLIENTS = 25  # clients per worker process


@dataclass(frozen=True)
class Case:
    name: str
    clients: int
    channels: int
    distinct: bool = False

    @property
    def pool(self) -> int:
        """Channels the source must provide."""
        return 1000 if self.distinct else self.channels


CASES = [
    Case("1x100", 1, 100),
    Case("1x1000", 1, 1000),
    Case("1x5000", 1, 5000),
    Case("10x100", 10, 100),
    Case("100x100-shared", 100, 100),
    Case("100x100-distinct", 100, 100, distinct=True),
]


# --------------------------------------------------------------------- sources


def _synoptic() -> str:
    beside = Path(sys.executable).parent / "synoptic"
    return str(beside) if beside.exists() else "synoptic"


def _has_adapters() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "sim" for ep in entry_points(group="synoptic.commands"))


class Source:
    """The processes that put N counting channels at 10 Hz on NATS."""

    def __init__(self, kind: str, records: int, nats_url: str, workdir: Path) -> None:
        self.kind = kind
        self.records = records
        self.procs: dict[str, Process] = {}
        prefix = "BENCH:"
        width = max(5, len(str(records - 1)))
        self.uris = [f"ca://{prefix}CNT:{i:0{width}d}" for i in range(records)]
        if kind == "synthetic":
            argv = [sys.executable, "-m", "synoptic_gateway.bench", "publish",
                    "--nats", nats_url, "--records", str(records)]  # fmt: skip
            self.procs["publisher"] = Process("publisher", argv)
            self.procs["publisher"].wait_for(r"publisher ready", 30)
            return
        port = free_udp_tcp_port()
        env = ca_env(port)
        ioc = [_synoptic(), "sim", "ioc", "--records", str(records), "--rate", "10",
               "--prefix", prefix, "--port", str(port), "--no-extras"]  # fmt: skip
        self.procs["ioc"] = Process("ioc", ioc, env=env, keep_stdin_open=True)
        self.procs["ioc"].wait_for(r"sim ioc ready", 60)
        config = workdir / f"adapter-{records}.yaml"
        lines = ["id: bench-epics", "nats:", f"  url: {nats_url}", "channels:"]
        config.write_text("\n".join(lines + [f"  - {u}" for u in self.uris]) + "\n")
        adapter = [_synoptic(), "adapter", "epics", "--config", str(config)]
        self.procs["adapter"] = Process("adapter", adapter, env=env)
        self.procs["adapter"].wait_for(r"adapter \S+ ready", 120)

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            proc.stop()


async def _publish(nats_url: str, records: int) -> None:
    """The synthetic source: N counters, all published every 100 ms.

    Speaks the NATS text protocol on a plain socket and writes each tick's PUBs in
    one call (~10x less CPU than a publish call per message), so that the source,
    not the gateway, is never what saturates on a small machine."""
    from urllib.parse import urlparse

    from synoptic_bus.connect import connect
    from synoptic_bus.store import StoreConfig, ensure_store
    from synoptic_schemas import Subjects, encode, parse_channel

    nc = await connect(nats_url, name="bench-publisher")
    await ensure_store(nc, StoreConfig())  # as an adapter does
    await nc.close()
    url = urlparse(nats_url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    await reader.readline()  # INFO
    writer.write(
        b'CONNECT {"verbose":false,"pedantic":false,"name":"bench-pub"}\r\nPING\r\n'
    )
    while not (await reader.readline()).startswith(b"PONG"):
        pass

    async def answer_pings() -> None:
        while line := await reader.readline():
            if line.startswith(b"PING"):
                writer.write(b"PONG\r\n")

    pinger = asyncio.create_task(answer_pings())
    subjects = Subjects()
    width = max(5, len(str(records - 1)))
    names = [subjects.val(parse_channel(f"ca://BENCH:CNT:{i:0{width}d}")).encode()
             for i in range(records)]  # fmt: skip
    ep = int(time.time() * 1000)
    hb_subject = subjects.hb("bench-publisher").encode()
    print("publisher ready", flush=True)
    seq = 0
    next_tick = time.monotonic()
    while not pinger.done():
        seq += 1
        t = time.time_ns()
        parts = []
        if seq % int(RATE_HZ) == 1:  # a heartbeat a second, as an adapter sends
            beat = encode({"ver": 1, "id": "bench-publisher", "proto": "ca", "ep": ep,
                           "t": t, "period": 1.0, "n": records, "conn": records})  # fmt: skip
            parts.append(b"PUB %s %d\r\n%s\r\n" % (hb_subject, len(beat), beat))
        for subject in names:
            payload = encode({"ver": 1, "v": float(seq), "t": t, "sev": 0,
                              "st": "NO_ALARM", "seq": seq, "ep": ep, "c": True})  # fmt: skip
            parts.append(b"PUB %s %d\r\n%s\r\n" % (subject, len(payload), payload))
        writer.write(b"".join(parts))
        await writer.drain()
        next_tick += 1 / RATE_HZ
        await asyncio.sleep(max(0.0, next_tick - time.monotonic()))


# --------------------------------------------------------------------- workers


async def _worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``len(spec['sets'])`` clients; count within [start, end)."""
    from synoptic_gateway.client import GatewayClient

    start, end = spec["start"], spec["end"]
    delivered = 0
    gaps = 0
    value_gaps = 0
    latencies: list[float] = []
    opens: list[float] = []
    clients: list[GatewayClient] = []
    subs: list[Any] = []

    def make_handler() -> Any:
        last: dict[int, tuple[int, int, Any]] = {}

        def on_update(sub: Any, indexes: list[int], values: list[Any]) -> None:
            nonlocal delivered, gaps, value_gaps
            now = time.time()
            in_window = start <= now < end
            now_ns = time.time_ns()
            for i, v in zip(indexes, values, strict=False):
                ep, seq, count = v["ep"], v["seq"], v["v"]
                prev = last.get(i)
                if in_window:
                    delivered += 1
                    if prev is not None and prev[0] == ep and seq > prev[1] + 1:
                        gaps += seq - prev[1] - 1  # lost after the adapter
                    counted = prev is not None and isinstance(prev[2], float | int)
                    if (
                        counted
                        and isinstance(count, float | int)
                        and count > prev[2] + 1
                    ):
                        value_gaps += int(count - prev[2] - 1)  # lost anywhere
                    if len(latencies) < 200_000:
                        latencies.append((now_ns - v["t"]) / 1e9)
                last[i] = (ep, seq, count)

        return on_update

    for uris in spec["sets"]:
        client = GatewayClient(spec["url"], max_queue=None)
        started = time.perf_counter()
        await client.connect()
        sub = await client.subscribe(uris, on_update=make_handler())
        subs.append(sub)
        opens.append(time.perf_counter() - started)
        assert len(sub.channels) == len(uris)
        clients.append(client)
    print("subscribed", flush=True)
    await asyncio.sleep(max(0.0, end - time.time()) + 0.2)
    for client in clients:
        await client.close()
    return {"delivered": delivered, "gaps": gaps, "value_gaps": value_gaps,
            "missed_reported": sum(sub.missed for sub in subs),
            "reconnects": sum(c.connects - 1 for c in clients), "opens": opens,
            "latencies": latencies[:: max(1, len(latencies) // 20000)]}  # fmt: skip


# --------------------------------------------------------------------- runner


def _cpu_seconds(procs: dict[str, psutil.Process]) -> dict[str, float]:
    out = {}
    for name, proc in procs.items():
        try:
            times = proc.cpu_times()
            out[name] = times.user + times.system
        except psutil.Error:
            out[name] = float("nan")
    return out


def _latency_buckets(gateway: GatewayProc) -> list[tuple[float, float]]:
    """Cumulative (le, count) of the gateway's source → send latency histogram."""
    _, body = gateway.get("/metrics")
    out = []
    for line in body.decode().splitlines():
        if line.startswith('synoptic_gateway_latency_seconds_bucket{le="'):
            le = line.split('"')[1]
            out.append(
                (float("inf") if le == "+Inf" else float(le), float(line.split()[-1]))
            )
    return out


def _bucket_percentile(
    before: list[tuple[float, float]], after: list[tuple[float, float]], q: float
) -> float | None:
    """Upper bound (ms) of the bucket holding quantile ``q`` of the window."""
    counts = [(le, a - b) for (le, a), (_, b) in zip(after, before, strict=True)]
    total = counts[-1][1] if counts else 0
    for le, count in counts:
        if total and count >= q * total:
            return le * 1e3
    return None


def _client_sets(case: Case, uris: list[str]) -> list[list[str]]:
    if not case.distinct:
        return [uris[: case.channels]] * case.clients
    pool = uris[: case.pool]
    return [[pool[(10 * k + j) % len(pool)] for j in range(case.channels)]
            for k in range(case.clients)]  # fmt: skip


def run_case(
    case: Case,
    gateway: GatewayProc,
    source: Source,
    nats: NatsServer,
    warmup: float,
    window: float,
    workdir: Path,
) -> dict[str, Any]:
    sets = _client_sets(case, source.uris)
    n_workers = max(1, min(4, -(-case.clients // WORKER_CLIENTS)))
    chunks = [sets[i::n_workers] for i in range(n_workers)]
    subscribe_budget = 5 + 0.05 * case.clients + case.channels / 500
    start = time.time() + subscribe_budget + warmup
    end = start + window
    workers = []
    for index, chunk in enumerate(chunks):
        spec_file = workdir / f"{case.name}-{index}.json"
        spec_file.write_text(json.dumps({"url": gateway.ws_url, "sets": chunk,
                                         "start": start, "end": end}))  # fmt: skip
        argv = [
            sys.executable,
            "-m",
            "synoptic_gateway.bench",
            "worker",
            str(spec_file),
        ]
        workers.append(Process(f"worker-{index}", argv))
    try:
        for worker in workers:
            worker.wait_for("subscribed", subscribe_budget + 120)
    except Exception:
        print(gateway.proc.output()[-3000:], file=sys.stderr)
        for worker in workers:
            worker.kill()
        raise
    watched = {"gateway": psutil.Process(gateway.proc.pid)}
    assert nats.process is not None
    watched["nats-server"] = psutil.Process(nats.process.pid)
    for name, proc in source.procs.items():
        watched[name] = psutil.Process(proc.pid)
    time.sleep(max(0.0, start - time.time()))
    clients = {f"worker-{i}": psutil.Process(w.pid) for i, w in enumerate(workers)}
    cpu0, wcpu0 = _cpu_seconds(watched), _cpu_seconds(clients)
    hist0 = _latency_buckets(gateway)
    t0 = time.monotonic()
    time.sleep(max(0.0, end - time.time()))
    elapsed = time.monotonic() - t0
    cpu1, wcpu1 = _cpu_seconds(watched), _cpu_seconds(clients)
    hist1 = _latency_buckets(gateway)
    load = os.getloadavg()[0]
    rss = {n: p.memory_info().rss / 2**20 for n, p in watched.items()}
    results = []
    for worker in workers:
        # the result (latency samples: ~300 KiB) comes in a file: a line that
        # long on the pipe was sometimes cut at 128 KiB on the way
        path = worker.wait_for(r"^result in (\S+)", window + 60).group(1)
        results.append(json.loads(Path(path).read_text()))
        worker.stop()
    delivered = sum(r["delivered"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    opens = [x for r in results for x in r["opens"]]
    expected = case.clients * case.channels * RATE_HZ * window
    return {
        "case": case.name,
        "clients": case.clients,
        "channels": case.channels,
        "window_s": window,
        "delivered_per_s": round(delivered / window),
        "expected_per_s": round(expected / window),
        "delivered_pct": round(100 * delivered / expected, 2) if expected else None,
        "gaps": sum(r["gaps"] for r in results),  # seq jumps: lost after the adapter
        "value_gaps": sum(r["value_gaps"] for r in results),  # skipped counts: anywhere
        # updates the gateway told slow clients they missed (stats frames), reconnects
        "missed_reported": sum(r["missed_reported"] for r in results),
        "reconnects": sum(r["reconnects"] for r in results),
        "latency_ms": {
            "p50": round(float(np.percentile(latencies, 50)) * 1e3, 1) if latencies else None,
            "p99": round(float(np.percentile(latencies, 99)) * 1e3, 1) if latencies else None,
        },
        "gateway_latency_ms_bucket": {  # source timestamp → gateway send, upper bounds
            "p50": _bucket_percentile(hist0, hist1, 0.5),
            "p99": _bucket_percentile(hist0, hist1, 0.99),
        },
        "cpu_pct": {n: round(100 * (cpu1[n] - cpu0[n]) / elapsed, 1) for n in watched},
        "client_workers_cpu_pct": round(
            sum(100 * (wcpu1[n] - wcpu0[n]) / elapsed for n in clients), 1
        ),
        "load_avg_1m": round(load, 1),
        "rss_mib": {n: round(v, 1) for n, v in rss.items()},
        "screen_open_s": {"first": round(opens[0], 3), "max": round(max(opens), 3)},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synoptic_gateway.bench")
    sub = parser.add_subparsers(dest="cmd")
    worker = sub.add_parser("worker")
    worker.add_argument("spec")
    publish = sub.add_parser("publish")
    publish.add_argument("--nats", required=True)
    publish.add_argument("--records", type=int, required=True)
    parser.add_argument(
        "--source", choices=["ioc", "synthetic", "auto"], default="auto"
    )
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--cases", default=",".join(c.name for c in CASES),
                        help="comma-separated case names")  # fmt: skip
    args = parser.parse_args(argv)
    if args.cmd == "worker":
        import uvloop

        spec = json.loads(Path(args.spec).read_text())
        out = Path(args.spec).with_suffix(".result.json")
        result = json.dumps(uvloop.run(_worker(spec)))
        out.write_text(result)
        print(f"result in {out}", flush=True)
        print(result, flush=True)  # (as one line too, for bench_peers)
        return 0
    if args.cmd == "publish":
        import uvloop

        uvloop.run(_publish(args.nats, args.records))
        return 0
    kind = args.source
    if kind == "auto":
        kind = "ioc" if _has_adapters() and shutil.which(_synoptic()) else "synthetic"
    chosen = [c for c in CASES if c.name in args.cases.split(",")]
    report: dict[str, Any] = {
        "benchmark": "gateway",
        "source": {
            "ioc": "soft IOC (synoptic sim ioc) + EPICS adapter",
            "synthetic": "synthetic NATS publisher",
        }[kind],
        "rate_hz": RATE_HZ,
        "warmup_s": args.warmup,
        "window_s": args.window,
        "cpu_count": os.cpu_count(),
        "cases": [],
    }
    with tempfile.TemporaryDirectory(prefix="gw-bench-") as tmp, NatsServer() as nats:
        workdir = Path(tmp)
        gateway = start_gateway(nats.url)
        try:
            by_pool: dict[int, list[Case]] = {}
            for case in chosen:
                by_pool.setdefault(case.pool, []).append(case)
            for pool, cases in sorted(by_pool.items()):
                source = Source(kind, pool, nats.url, workdir)
                try:
                    for case in cases:
                        result = run_case(case, gateway, source, nats, args.warmup,
                                          args.window, workdir)  # fmt: skip
                        report["cases"].append(result)
                        print(json.dumps(result), file=sys.stderr, flush=True)
                finally:
                    source.stop()
        finally:
            gateway.stop()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
