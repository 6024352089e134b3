"""History as users run it (``make bench-history-demo``, JSON on stdout): the real
``synoptic demo`` with its defaults (simulated IOC, PV Access server with 2 MB
images at 10 Hz and waveforms, Tango device, adapters, rollup, archiver, gateway)
runs for ``--minutes`` while every small value on ``cs.val`` is recorded live;
then, through the demo's gateway:

- ``trends``: the history of every numeric CA, PVA and Tango channel over the
  whole run (px 800, 100 channels a request), compared with the record
  (:func:`synoptic_gateway.history.record.check_trace`): the share of the window
  each covers, pixel columns whose min/max differ, answered points never
  published;
- ``open_trends``: 20 such trends opened on one connection as the UI does (the
  trends opening together ask in one request; each drawn when its answer has
  arrived);
- ``retention``: how far back each history stream reaches (``synoptic bus
  status``).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from synoptic_benchmarks.history.bench import open_trends
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_bus.retention import retention
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.history.record import LiveRecord, check_trace, columns

PX = 800
S = 1_000_000_000


async def trends(ws_url: str, series: dict, t0: int, t1: int) -> dict[str, Any]:
    answers = {}
    async with GatewayClient([ws_url]) as client:
        uris = sorted(series)
        for i in range(0, len(uris), 100):
            batch = uris[i : i + 100]
            traces = await client.history(batch, t0 / 1e6, t1 / 1e6, px=PX, timeout=120)
            answers.update({uri: traces[uri] for uri in batch})
    # compared once the socket is closed: seconds of comparison on this loop
    # would leave the gateway's keepalive pings unanswered (it closes with 1011)
    checks = []
    for uri, trace in answers.items():
        if trace.err is not None or trace.t is None or trace.v is None:
            checks.append((uri, None, trace.err))
            continue
        checks.append((uri, check_trace(uri, series[uri], trace.t, trace.v,
                                        t0, t1, PX), None))  # fmt: skip
    good = [c for _, c, _ in checks if c is not None]
    for check in [c for c in good if c.columns_differing][:3]:
        _explain(check, series[check.uri], answers[check.uri], t0, t1)
    by_proto: dict[str, int] = {}
    for uri in series:
        proto = uri.split(":", 1)[0]
        by_proto[proto] = by_proto.get(proto, 0) + 1
    worst = min(good, key=lambda c: c.coverage) if good else None
    return {
        "channels": len(series),
        "by_protocol": by_proto,
        "errors": [(u, e) for u, c, e in checks if c is None],
        "min_coverage": round(worst.coverage, 4) if worst else 0.0,
        "min_coverage_channel": worst.uri if worst else None,
        "channels_below_99pct": sum(c.coverage < 0.99 for c in good),
        "columns": sum(c.columns for c in good),
        "columns_differing": sum(len(c.columns_differing) for c in good),
        "channels_differing": [c.uri for c in good if c.columns_differing][:20],
        "channels_differing_count": sum(bool(c.columns_differing) for c in good),
        # where in the window they differ: columns per minute from its start
        "columns_differing_by_minute": _by_minute(good, t1 - t0),
        "points_not_published": sum(len(c.strangers) for c in good),
        "values_recorded": sum(c.recorded for c in good),
        # values the live recorder itself missed (their spans are not compared)
        "values_the_recorder_missed": sum(c.missed for c in good),
        "target_coverage": 0.99,
    }


def _explain(check: Any, record: Any, trace: Any, t0: int, t1: int) -> None:
    """On stderr, a few of a channel's differing columns: what was recorded live
    there and what the answer drew (time from the window's start, s)."""
    want_col = columns(record["t"], t0, t1, PX)
    got_col = columns((trace.t * 1e6).astype("int64"), t0, t1, PX)
    for col in check.columns_differing[:4]:
        rec = record[want_col == col]
        got = trace.v[got_col == col]
        print(f"{check.uri} column {col}: recorded {len(rec)} values "
              f"{rec['v'].min() if len(rec) else None}..{rec['v'].max() if len(rec) else None}"
              f" at {(rec['t'][:1] - t0) / S}..{(rec['t'][-1:] - t0) / S} s; "
              f"answered {got.tolist()[:6]}", file=sys.stderr)  # fmt: skip


def _by_minute(checks: list, window_ns: int) -> dict[int, int]:
    """Differing pixel columns of every channel, counted per minute of the window."""
    per_col_s = window_ns / S / PX
    out: dict[int, int] = {}
    for check in checks:
        for col in check.columns_differing:
            minute = int(col * per_col_s // 60)
            out[minute] = out.get(minute, 0) + 1
    return dict(sorted(out.items()))


def _var_dir() -> Path:
    """A data folder the demo's PostgreSQL (running as ``postgres``) can reach."""
    var = Path(tempfile.mkdtemp(prefix="synoptic-demo-bench-"))
    var.chmod(0o755)
    return var


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"machine": machine(), "minutes": args.minutes}
    var = _var_dir()
    http, nats_port = free_port(), free_port()
    url = f"nats://127.0.0.1:{nats_port}"
    demo = Process("demo", [
        sys.executable, "-m", "synoptic_bus.cli", "demo", "--var", str(var),
        "--nats-port", str(nats_port), "--http-port", str(http),
        "--tango-port", str(free_udp_tcp_port()), "--idp-port", str(free_port()),
    ])  # fmt: skip
    try:
        await asyncio.to_thread(demo.wait_for, r"demo running", 300)
        nc = await connect(url, name="bench-history-demo")
        record = LiveRecord(nc)
        report["subjects_recorded"] = await record.start()
        started = time.time_ns()
        for minute in range(int(args.minutes)):
            await asyncio.sleep(60)
            print(f"bench-history-demo: {minute + 1} min", file=sys.stderr, flush=True)
        await asyncio.sleep((args.minutes % 1) * 60)
        t0 = (started // 1_000_000 + 2000) * 1_000_000
        t1 = (time.time_ns() // 1_000_000 - 3000) * 1_000_000
        await record.stop_after(t1 + 3 * S)
        report["retention"] = [r.as_json() for r in await retention(nc, "cs")]
        await nc.close()
        series = record.series()
        ws = f"ws://127.0.0.1:{http}/ws"
        report["window_s"] = round((t1 - t0) / 1e9, 1)
        report["trends"] = await trends(ws, series, t0, t1)
        pick = sorted(series)[:: max(len(series) // 20, 1)][:20]
        report["open_trends"] = await open_trends(ws, pick, t0 / 1e6, t1 / 1e6)
    finally:
        # the demo's own account of the run beside the JSON (rollup gaps, drops,
        # reconnects): what explains a column that differs
        said = [x for x in demo.output().splitlines() if "rollup" in x or "WARN" in x]
        print("\n".join(said[-200:]), file=sys.stderr, flush=True)
        demo.stop(60)
        shutil.rmtree(var, ignore_errors=True)
    report["load_avg_1m_end"] = machine()["load_avg_1m"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0,
                        help="how long the demo runs before its trends are read")  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args()
    emit("history-demo", asyncio.run(run(args)), save=args.save, indent=2)


if __name__ == "__main__":
    main()
