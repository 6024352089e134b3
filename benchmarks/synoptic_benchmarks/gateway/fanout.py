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

from synoptic_benchmarks.gateway import clients as measuring
from synoptic_benchmarks.gateway import source as sources
from synoptic_benchmarks.gateway.source import PUBLISH_CHUNK, RATE_HZ, Source
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_gateway.testing import GatewayProc, start_gateway

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


def _frames_out(gateway: GatewayProc) -> float:
    """WebSocket frames the gateway has sent so far."""
    _, body = gateway.get("/metrics")
    for line in body.decode().splitlines():
        if line.startswith("synoptic_gateway_frames_out_total "):
            return float(line.split()[-1])
    return float("nan")


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
    stages: bool = False,
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
            "synoptic_benchmarks.gateway.fanout",
            "worker",
            str(spec_file),
        ]
        workers.append(Process(f"worker-{index}", argv))
    probe = None
    if stages:  # a raw NATS subscriber beside the gateway
        probe_spec = workdir / f"{case.name}-probe.json"
        probe_spec.write_text(
            json.dumps({"nats": nats.url, "start": start, "end": end})
        )
        probe = Process("probe", [sys.executable, "-m", "synoptic_benchmarks.gateway.fanout",
                                  "probe", str(probe_spec)])  # fmt: skip
        probe.wait_for("probe ready", 30)
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
    frames0 = _frames_out(gateway)
    t0 = time.monotonic()
    time.sleep(max(0.0, end - time.time()))
    elapsed = time.monotonic() - t0
    cpu1, wcpu1 = _cpu_seconds(watched), _cpu_seconds(clients)
    hist1 = _latency_buckets(gateway)
    frames1 = _frames_out(gateway)
    load = os.getloadavg()[0]
    rss = {n: p.memory_info().rss / 2**20 for n, p in watched.items()}
    results = []
    for worker in workers:
        # the result (latency samples: ~300 KiB) comes in a file: a line that
        # long on the pipe was sometimes cut at 128 KiB on the way
        path = worker.wait_for(r"^result in (\S+)", window + 60).group(1)
        results.append(json.loads(Path(path).read_text()))
        worker.stop()
    stage_report: dict[str, Any] = {}
    if probe is not None:
        path = probe.wait_for(r"^result in (\S+)", 60).group(1)
        stage_report["nats_subscriber_ms"] = json.loads(Path(path).read_text())
        probe.stop()
    delivered = sum(r["delivered"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    decode_lags = [x for r in results for x in r.get("decode_lags", ())]
    decoded = [x for r in results for x in r.get("latencies_decoded", ())]
    first_200k = [x for r in results for x in r.get("latencies_first_200k", ())]
    opens = [x for r in results for x in r["opens"]]
    slices = [x for r in results for x in r.get("slice_p99_ms", ())]
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
        # the median over the window's seconds of each second's p99 (with
        # nats_subscriber_ms's: robust to seconds when others took the cores)
        "p99_median_of_1s_ms": round(float(np.median(slices)), 1) if slices else None,
        "slice_p99_ms": slices,
        # receipt after the frame's decode (the older definition of latency_ms)
        "latency_decoded_ms": {
            "p50": round(float(np.percentile(decoded, 50)) * 1e3, 1) if decoded else None,
            "p99": round(float(np.percentile(decoded, 99)) * 1e3, 1) if decoded else None,
        },
        # the same, over the first 200 000 updates per worker (the old sample)
        "latency_first_200k_ms": {
            "p50": round(float(np.percentile(first_200k, 50)) * 1e3, 1) if first_200k else None,
            "p99": round(float(np.percentile(first_200k, 99)) * 1e3, 1) if first_200k else None,
        },
        # the client's share: frame arrival -> decoded and handed to the callback
        "client_decode_ms": {
            "p50": round(float(np.percentile(decode_lags, 50)) * 1e3, 2) if decode_lags else None,
            "p99": round(float(np.percentile(decode_lags, 99)) * 1e3, 2) if decode_lags else None,
        },
        "frames_out_per_s": round((frames1 - frames0) / elapsed, 1),
        "gateway_latency_ms_bucket": {  # source timestamp → gateway send, upper bounds
            "p50": _bucket_percentile(hist0, hist1, 0.5),
            "p99": _bucket_percentile(hist0, hist1, 0.99),
        },
        # where a burst's time goes: the source's writes, a raw NATS subscriber
        "source_ms": sources.publisher_stages(source, start, end),
        **stage_report,
        "cpu_pct": {n: round(100 * (cpu1[n] - cpu0[n]) / elapsed, 1) for n in watched},
        "client_workers_cpu_pct": round(
            sum(100 * (wcpu1[n] - wcpu0[n]) / elapsed for n in clients), 1
        ),
        "load_avg_1m": round(load, 1),
        "rss_mib": {n: round(v, 1) for n, v in rss.items()},
        "screen_open_s": {"first": round(opens[0], 3), "max": round(max(opens), 3)},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synoptic_benchmarks.gateway.fanout"
    )
    sub = parser.add_subparsers(dest="cmd")
    worker = sub.add_parser("worker")
    worker.add_argument("spec")
    probe = sub.add_parser("probe")
    probe.add_argument("spec")
    publish = sub.add_parser("publish")
    publish.add_argument("--nats", required=True)
    publish.add_argument("--records", type=int, required=True)
    publish.add_argument("--chunk", type=int, default=PUBLISH_CHUNK)
    publish.add_argument("--storage", choices=["memory", "file"], default="memory")
    parser.add_argument(
        "--source", choices=["ioc", "synthetic", "auto"], default="auto"
    )
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--cases", default=",".join(c.name for c in CASES),
                        help="comma-separated case names")  # fmt: skip
    parser.add_argument(
        "--publish-chunk",
        type=int,
        default=PUBLISH_CHUNK,
        help="synthetic source: records encoded per write (0: one write per tick)",
    )
    parser.add_argument(
        "--storage", choices=["memory", "file"], default="memory",
        help="the last-value stream's storage (memory: the adapters' and `make demo`'s "
        "default; file: docker-compose, k8s and the local cluster)",
    )  # fmt: skip
    parser.add_argument(
        "--stages", action="store_true",
        help="also run a raw NATS subscriber (latency before the gateway; adds load)",
    )  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args(argv)
    if args.cmd == "worker":
        import uvloop

        spec = json.loads(Path(args.spec).read_text())
        out = Path(args.spec).with_suffix(".result.json")
        result = json.dumps(uvloop.run(measuring.worker(spec)))
        out.write_text(result)
        print(f"result in {out}", flush=True)
        return 0
    if args.cmd == "probe":
        import uvloop

        spec = json.loads(Path(args.spec).read_text())
        out = Path(args.spec).with_suffix(".result.json")
        out.write_text(json.dumps(uvloop.run(measuring.probe(spec))))
        print(f"result in {out}", flush=True)
        return 0
    if args.cmd == "publish":
        import uvloop

        uvloop.run(sources.publish(args.nats, args.records, args.chunk, args.storage))
        return 0
    kind = args.source
    if kind == "auto":
        kind = (
            "ioc"
            if sources.has_adapters() and shutil.which(sources.synoptic_command())
            else "synthetic"
        )
    chosen = [c for c in CASES if c.name in args.cases.split(",")]
    report: dict[str, Any] = {
        "benchmark": "gateway",
        "source": {
            "ioc": "soft IOC (synoptic sim ioc) + EPICS adapter",
            "synthetic": "synthetic NATS publisher",
        }[kind],
        "rate_hz": RATE_HZ,
        "publish_chunk": args.publish_chunk if kind == "synthetic" else None,
        "storage": args.storage,
        "warmup_s": args.warmup,
        "window_s": args.window,
        "cpu_count": os.cpu_count(),
        "machine": machine(),
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
                source = Source(
                    kind, pool, nats.url, workdir, args.publish_chunk, args.storage
                )
                try:
                    for case in cases:
                        result = run_case(case, gateway, source, nats, args.warmup,
                                          args.window, workdir, args.stages)  # fmt: skip
                        report["cases"].append(result)
                        print(json.dumps(result), file=sys.stderr, flush=True)
                finally:
                    source.stop()
        finally:
            gateway.stop()
    emit("gateway", report, save=args.save, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
