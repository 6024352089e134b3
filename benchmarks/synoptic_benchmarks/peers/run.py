"""Synoptic and Coniql side by side on one workload, in one run (``make bench-peers``).

Workload (``../shared/peers.md``): a soft IOC of N counting ``calcout`` records at
10 Hz (``synoptic sim ioc --no-extras``, each value the previous + 1, so a skipped
count is a missed update). Against the same IOC, one after the other:

- **Coniql 0.4.2** (its own app, ``benchmarks/coniql/coniql_server.py``, run by the
  Python of an isolated environment built from ``benchmarks/coniql/coniql-requirements.txt``);
  clients speak GraphQL over WebSocket (``graphql-transport-ws``), one subscription
  per PV (:mod:`synoptic_benchmarks.peers.coniql_client`);
- **Synoptic**: the EPICS adapter (every channel of the IOC configured), a real
  nats-server and one gateway; clients are ``synoptic_benchmarks.gateway.fanout``'s workers
  (``GatewayClient``).

Clients run in separate processes (one per 5 clients, at most 2). For each case and
system: delivered updates/s and %, value gaps (skipped counts; Synoptic also seq
gaps), p50/p99 latency (IOC timestamp → client receipt), server CPU (% of one core,
from ``/proc``: Coniql's process; Synoptic's gateway + adapter + nats-server, each
and summed) and RSS, IOC and client CPU, screen open (socket open → every channel's
first value), the 1-minute load average; and the ratios of the two systems. Before
the cases of each IOC size, one client process opens three screens of all its PVs
one after the other, each staying open: the first cold (nothing of it subscribed on
the server), the others warm. JSON on stdout, one line per measurement on stderr.
Loopback only; processes stopped by PID; every wait bounded. Run it niced (``make
bench-peers`` does): each server's ``server_runqueue_wait_pct`` says how long it
waited for a CPU, i.e. whether a shortfall was the machine's or the server's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synoptic_benchmarks.peers.procstat import CpuMeter
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, ProcessError, free_port, free_udp_tcp_port
from synoptic_gateway.testing import ca_env, start_gateway

RATE_HZ = 10.0
CLIENTS_PER_WORKER = 5
MAX_WORKERS = 2
PREFIX = "BENCH:"
CONIQL_VERSION = "0.4.2"
BENCHMARKS_DIR = Path(__file__).resolve().parents[2]
CONIQL_SERVER = BENCHMARKS_DIR / "coniql" / "coniql_server.py"
CONIQL_REQUIREMENTS = BENCHMARKS_DIR / "coniql" / "coniql-requirements.txt"
DEFAULT_CONIQL_PYTHON = BENCHMARKS_DIR.parent / ".tools" / "peers" / "coniql" / "bin" / "python"  # fmt: skip
SYSTEMS = ("coniql", "synoptic")


@dataclass(frozen=True)
class Case:
    """``clients`` screens, each of the same ``channels`` PVs."""

    name: str
    clients: int
    channels: int


CASES = [Case("1x100", 1, 100), Case("10x100", 10, 100), Case("1x1000", 1, 1000)]


def _synoptic() -> str:
    return str(Path(sys.executable).parent / "synoptic")


def pv_names(records: int) -> list[str]:
    """The IOC's counter PVs, as ``synoptic sim ioc`` names them."""
    width = max(5, len(str(records - 1)))
    return [f"{PREFIX}CNT:{i:0{width}d}" for i in range(records)]


# --------------------------------------------------------------------- servers


def _ready(proc: Process, pattern: str, timeout: float = 120.0) -> None:
    """Wait for ``proc``'s readiness line; kill it (by PID) if it never comes."""
    try:
        proc.wait_for(pattern, timeout)
    except ProcessError:
        proc.kill()
        raise


class Ioc:
    """``synoptic sim ioc`` with ``records`` counters at 10 Hz on a private port."""

    def __init__(self, records: int) -> None:
        self.records = records
        self.pvs = pv_names(records)
        self.env = ca_env(free_udp_tcp_port())
        argv = [_synoptic(), "sim", "ioc", "--records", str(records), "--rate", "10",
                "--prefix", PREFIX, "--port", self.env["EPICS_CA_SERVER_PORT"],
                "--no-extras"]  # fmt: skip
        self.proc = Process("ioc", argv, env=self.env, keep_stdin_open=True)
        _ready(self.proc, r"sim ioc ready")


class ConiqlServer:
    """Coniql's app on a free loopback port, run by ``python`` (its own venv)."""

    def __init__(self, python: Path, ioc: Ioc) -> None:
        self.port = free_port()
        argv = [str(python), str(CONIQL_SERVER), "127.0.0.1", str(self.port)]
        self.proc = Process("coniql", argv, env=ioc.env)
        _ready(self.proc, r"Running on http://")
        self.url = f"ws://127.0.0.1:{self.port}/ws"


class EpicsAdapter:
    """``synoptic adapter epics`` publishing every PV of ``ioc`` to ``nats_url``."""

    def __init__(self, ioc: Ioc, nats_url: str, workdir: Path) -> None:
        config = workdir / f"adapter-{ioc.records}.yaml"
        lines = ["id: bench-peers", "nats:", f"  url: {nats_url}", "channels:"]
        lines += [f"  - ca://{pv}" for pv in ioc.pvs]
        config.write_text("\n".join(lines) + "\n")
        argv = [_synoptic(), "adapter", "epics", "--config", str(config)]
        self.proc = Process("adapter", argv, env=ioc.env)
        _ready(self.proc, r"adapter \S+ ready")


# --------------------------------------------------------------------- one case


def _percentile_ms(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)) * 1e3, 1) if values else None


def summarize(
    case: Case,
    window: float,
    results: list[dict[str, Any]],
    server_cpu: dict[str, float],
) -> dict[str, Any]:
    """Delivery, gaps, latency and CPU per update from the workers' results."""
    delivered = sum(r["delivered"] for r in results)
    expected = case.clients * case.channels * RATE_HZ * window
    latencies = [x for r in results for x in r["latencies"]]
    seq_gaps = [r["gaps"] for r in results if r.get("gaps") is not None]
    total_cpu = sum(server_cpu.values())
    per_s = delivered / window
    return {
        "delivered_per_s": round(per_s),
        "expected_per_s": round(expected / window),
        "delivered_pct": round(100 * delivered / expected, 2),
        "value_gaps": sum(r["value_gaps"] for r in results),
        "seq_gaps": sum(seq_gaps) if seq_gaps else None,
        "latency_ms": {
            "p50": _percentile_ms(latencies, 50),
            "p99": _percentile_ms(latencies, 99),
        },
        "server_cpu_pct": {n: round(v, 1) for n, v in server_cpu.items()}
        | {"total": round(total_cpu, 1)},
        "server_cpu_us_per_update": round(1e4 * total_cpu / per_s, 2)
        if per_s
        else None,
        "errors": sum(r.get("errors", 0) for r in results),
        "reconnects": sum(r.get("reconnects", 0) for r in results),
    }


def _screen(system: str, ioc: Ioc, channels: int) -> tuple[list[str], str]:
    """The first ``channels`` PVs as ``system``'s clients name them, and the module
    whose ``worker`` command runs those clients."""
    if system == "synoptic":
        return [
            f"ca://{pv}" for pv in ioc.pvs[:channels]
        ], "synoptic_benchmarks.gateway.fanout"
    return ioc.pvs[:channels], "synoptic_benchmarks.peers.run"


def _worker_result(worker: Process, timeout: float) -> dict[str, Any]:
    """A client worker's result, from the file its ``result in FILE`` line names
    (a result line can be megabytes: a file, not a pipe)."""
    path = worker.wait_for(r"^result in (\S+)$", timeout).group(1)
    return json.loads(Path(path).read_text())


def measure_opens(
    system: str, url: str, ioc: Ioc, channels: int, workdir: Path, screens: int = 3
) -> dict[str, Any]:
    """Open ``screens`` screens of the same ``channels`` PVs one after the other in
    one client process, each staying open: the first is cold (nothing of it
    subscribed on the server yet), the others warm (the server already has it)."""
    screen, worker_module = _screen(system, ioc, channels)
    now = time.time()
    spec = workdir / f"{system}-open-{channels}.json"
    spec.write_text(json.dumps({"url": url, "sets": [screen] * screens,
                                "start": now, "end": now}))  # fmt: skip
    argv = [sys.executable, "-m", worker_module, "worker", str(spec)]
    worker = Process(f"{system}-opener", argv)
    try:
        opens = _worker_result(worker, 120 + channels / 10)["opens"]
    finally:
        worker.stop()
    return {
        "channels": channels,
        "cold_s": round(opens[0], 3),
        "warm_s": [round(x, 3) for x in opens[1:]],
        "load_avg_1m": round(os.getloadavg()[0], 1),
    }


def run_case(
    case: Case,
    system: str,
    url: str,
    servers: dict[str, int],
    ioc: Ioc,
    warmup: float,
    window: float,
    workdir: Path,
) -> dict[str, Any]:
    """Drive ``case`` against one system; ``servers`` are its process ids by name."""
    screen, worker_module = _screen(system, ioc, case.channels)
    n_workers = min(MAX_WORKERS, -(-case.clients // CLIENTS_PER_WORKER))
    chunks = [[screen] * len(range(i, case.clients, n_workers)) for i in range(n_workers)]  # fmt: skip
    budget = 5 + 0.005 * case.clients * case.channels + 0.05 * case.clients
    start = time.time() + budget + warmup
    end = start + window
    workers = []
    for index, sets in enumerate(chunks):
        spec = workdir / f"{system}-{case.name}-{index}.json"
        spec.write_text(json.dumps({"url": url, "sets": sets, "start": start, "end": end}))  # fmt: skip
        argv = [sys.executable, "-m", worker_module, "worker", str(spec)]
        workers.append(Process(f"{system}-worker-{index}", argv))
    try:
        for worker in workers:
            worker.wait_for("^subscribed", budget + 120)
        subscribed_late_s = max(0.0, time.time() - (start - warmup))
        servers_meter = CpuMeter({**servers, "ioc": ioc.proc.pid})
        clients_meter = CpuMeter({f"w{i}": w.pid for i, w in enumerate(workers)})
        time.sleep(max(0.0, start - time.time()))
        load_start = os.getloadavg()[0]
        servers_meter.start()
        clients_meter.start()
        time.sleep(max(0.0, end - time.time()))
        cpu = servers_meter.stop()
        waits = servers_meter.wait_pct
        client_cpu = clients_meter.stop()
        rss = servers_meter.rss()
        load_end = os.getloadavg()[0]
        results = [_worker_result(w, window + 60) for w in workers]
    finally:
        for worker in workers:
            worker.stop()
    ioc_cpu = cpu.pop("ioc")
    rss.pop("ioc")
    opens = [x for r in results for x in r["opens"]]
    return {
        **summarize(case, window, results, cpu),
        "server_rss_mib": {n: round(v, 1) for n, v in rss.items()}
        | {"total": round(sum(rss.values()), 1)},
        # % of the window each server process was runnable but had no CPU (the
        # machine's load, niceness): delivery below 100 % with a high wait is the
        # machine's share, not the server's ceiling.
        "server_runqueue_wait_pct": {
            n: round(v, 1) for n, v in waits.items() if n != "ioc"
        },
        "ioc_cpu_pct": round(ioc_cpu, 1),
        "client_cpu_pct": round(sum(client_cpu.values()), 1),
        "screen_open_s": {"first": round(opens[0], 3), "max": round(max(opens), 3)},
        "warmup_lost_s": round(subscribed_late_s, 1),
        "load_avg_1m": {"start": round(load_start, 1), "end": round(load_end, 1)},
    }


def ratios(coniql: dict[str, Any], synoptic: dict[str, Any]) -> dict[str, Any]:
    """Synoptic against Coniql, from one run's numbers."""

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 1) if a and b else None

    return {
        "delivered_synoptic_over_coniql": ratio(
            synoptic["delivered_per_s"], coniql["delivered_per_s"]
        ),
        "cpu_per_update_coniql_over_synoptic": ratio(
            coniql["server_cpu_us_per_update"], synoptic["server_cpu_us_per_update"]
        ),
        "screen_open_coniql_over_synoptic": ratio(
            coniql["screen_open_s"]["first"], synoptic["screen_open_s"]["first"]
        ),
    }


# --------------------------------------------------------------------- runner


class Sides:
    """The two systems' servers against one IOC at a time; a system that fails
    (a server or client process exits or times out) is reported as an error for
    its remaining cases, and the run goes on."""

    def __init__(
        self, args: argparse.Namespace, workdir: Path, nats: NatsServer, ours: bool
    ) -> None:
        self.args = args
        self.workdir = workdir
        self.nats = nats
        self.gateway = start_gateway(nats.url) if ours else None

    def _start(self, system: str, ioc: Ioc) -> tuple[str, dict[str, int], Process]:
        """Start ``system``'s per-IOC server: its URL, server PIDs, the process."""
        if system == "coniql":
            coniql = ConiqlServer(Path(self.args.coniql_python), ioc)
            return coniql.url, {"coniql": coniql.proc.pid}, coniql.proc
        assert self.gateway is not None and self.nats.process is not None
        adapter = EpicsAdapter(ioc, self.nats.url, self.workdir)
        servers = {"gateway": self.gateway.proc.pid, "adapter": adapter.proc.pid,
                   "nats-server": self.nats.process.pid}  # fmt: skip
        return self.gateway.ws_url, servers, adapter.proc

    def run(
        self, system: str, ioc: Ioc, cases: list[Case]
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Screen opens, then every case, of ``system`` on ``ioc``."""
        opens: dict[str, Any] = {}
        results: dict[str, dict[str, Any]] = {}
        proc: Process | None = None
        try:
            url, servers, proc = self._start(system, ioc)
            opens = measure_opens(system, url, ioc, ioc.records, self.workdir)
            _progress({"screen_open": system, **opens})
            for case in cases:
                results[case.name] = run_case(case, system, url, servers, ioc,
                                              self.args.warmup, self.args.window,
                                              self.workdir)  # fmt: skip
                _progress({"case": case.name, "system": system, **results[case.name]})
        except (ProcessError, TimeoutError, OSError, ValueError) as exc:
            error = {"error": f"{type(exc).__name__}: {str(exc)[-1500:]}"}
            _progress({"system": system, "records": ioc.records, **error})
            opens = opens or error
            results.update({c.name: error for c in cases if c.name not in results})
        finally:
            if proc is not None:
                proc.stop()
        return opens, results

    def close(self) -> None:
        if self.gateway is not None:
            self.gateway.stop()


def _progress(line: dict[str, Any]) -> None:
    print(json.dumps(line), file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every chosen case on every chosen system; the JSON report."""
    chosen = [c for c in CASES if c.name in args.cases.split(",")]
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    if "coniql" in systems and not Path(args.coniql_python).exists():
        raise SystemExit(
            f"{args.coniql_python} not found: `make bench-peers` builds Coniql's "
            f"environment from {CONIQL_REQUIREMENTS.name}"
        )
    report: dict[str, Any] = {
        "benchmark": "peers",
        "workload": "soft IOC (synoptic sim ioc) of N counting calcout records at 10 Hz",
        "rate_hz": RATE_HZ,
        "warmup_s": args.warmup,
        "window_s": args.window,
        "cpu_count": os.cpu_count(),
        "machine": machine(),
        "niceness": os.nice(0),
        "systems": {
            "coniql": f"Coniql {CONIQL_VERSION} (aiohttp + Strawberry, "
            "graphql-transport-ws, one subscription per PV, no deflate)",
            "synoptic": "EPICS adapter + nats-server + one gateway "
            "(GatewayClient, msgpack)",
        },
        "cases": [],
    }
    by_pool: dict[int, list[Case]] = {}
    for case in chosen:
        by_pool.setdefault(case.channels, []).append(case)
    results: dict[str, dict[str, Any]] = {c.name: {} for c in chosen}
    screen_opens: dict[int, dict[str, Any]] = {n: {} for n in by_pool}
    with (
        tempfile.TemporaryDirectory(prefix="peers-bench-") as tmp,
        NatsServer() as nats,
    ):
        sides = Sides(args, Path(tmp), nats, "synoptic" in systems)
        try:
            for records, cases in sorted(by_pool.items()):
                ioc = Ioc(records)
                try:
                    for system in systems:
                        opens, by_case = sides.run(system, ioc, cases)
                        screen_opens[records][system] = opens
                        for name, result in by_case.items():
                            results[name][system] = result
                finally:
                    ioc.proc.stop()
        finally:
            sides.close()
    for case in chosen:
        entry: dict[str, Any] = {"case": case.name, "clients": case.clients,
                                 "channels": case.channels, **results[case.name]}  # fmt: skip
        both = results[case.name]
        if len(both) == len(SYSTEMS) and not any("error" in r for r in both.values()):
            entry["ratios"] = ratios(**both)
        report["cases"].append(entry)
    report["screen_open"] = [
        {"channels": n, **by_system} for n, by_system in sorted(screen_opens.items())
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synoptic_benchmarks.peers.run")
    sub = parser.add_subparsers(dest="cmd")
    worker = sub.add_parser("worker", help="(internal) a Coniql client process")
    worker.add_argument("spec")
    parser.add_argument("--cases", default=",".join(c.name for c in CASES),
                        help="comma-separated case names")  # fmt: skip
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--coniql-python", default=str(DEFAULT_CONIQL_PYTHON),
                        help="Python of Coniql's own environment")  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args(argv)
    if args.cmd == "worker":
        import uvloop

        from synoptic_benchmarks.peers.coniql_client import run_worker

        spec = json.loads(Path(args.spec).read_text())
        out = Path(args.spec).with_suffix(".result.json")
        out.write_text(json.dumps(uvloop.run(run_worker(spec))))
        print(f"result in {out}", flush=True)  # as the fan-out bench's worker
        return 0
    emit("peers", run(args), save=args.save, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
