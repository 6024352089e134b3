"""``make bench-faults``: the faults a facility meets every week, measured.

- ``sigterm``: SIGTERM to stopped (children included), per process, once ready
  (:mod:`~synoptic_benchmarks.faults.sigterm`);
- ``restarts``: PV Access (beacon-less) and Channel Access servers restarting
  under their adapter: values back (:mod:`~synoptic_benchmarks.faults.restarts`);
- ``tango``: the slow-first standard device, a cold start, warm restarts and a
  device server restart (:mod:`~synoptic_benchmarks.faults.tango_start`);
- ``hang``: a hanging host beside ten healthy Tango devices
  (:mod:`~synoptic_benchmarks.faults.hanging_host`).

JSON on stdout, each part with the machine's state when it began (``machines``);
``--save`` keeps it in ``benchmarks/results/faults.json``, the parts run now
replacing theirs and the others kept (the parts may run apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from typing import Any

from synoptic_benchmarks.faults.hanging_host import hanging_host
from synoptic_benchmarks.faults.restarts import restarts
from synoptic_benchmarks.faults.sigterm import sigterm_report
from synoptic_benchmarks.faults.tango_start import tango_start
from synoptic_benchmarks.report import RESULTS_DIR, add_save_option, emit, machine

PARTS = ("sigterm", "restarts", "tango", "hang")
#: Each part's key in the report.
KEYS = {"sigterm": "sigterm", "restarts": "restarts", "tango": "tango",
        "hang": "hanging_host"}  # fmt: skip


def _kept(parts: list[str]) -> dict[str, Any]:
    """The saved report's other parts (nothing when there is none)."""
    path = RESULTS_DIR / "faults.json"
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    others = [p for p in PARTS if p not in parts and KEYS[p] in saved]
    machines = saved.get("machines", {})
    return {
        **{KEYS[p]: saved[KEYS[p]] for p in others},
        "machines": {p: machines[p] for p in others if p in machines},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synoptic_benchmarks.faults.bench",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated, of {', '.join(PARTS)}")  # fmt: skip
    parser.add_argument("--tries", type=int, default=50,
                        help="SIGTERMs per simulator, adapter and gateway")  # fmt: skip
    parser.add_argument("--demo-tries", type=int, default=5)
    parser.add_argument("--cluster-tries", type=int, default=3)
    parser.add_argument("--restarts", type=int, default=6, help="per protocol")
    parser.add_argument("--outage", type=float, default=20.0,
                        help="seconds away of every other restarted server")  # fmt: skip
    add_save_option(parser)
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    runs: dict[str, Callable[[], Any]] = {
        "sigterm": lambda: sigterm_report(
            args.tries, args.demo_tries, args.cluster_tries
        ),
        "restarts": lambda: [
            asyncio.run(restarts(p, args.restarts, args.outage))
            for p in ("pva", "epics")
        ],
        "tango": lambda: asyncio.run(tango_start()),
        "hang": lambda: asyncio.run(hanging_host()),
    }
    report: dict[str, Any] = _kept(parts) if args.save else {}
    machines = report.setdefault("machines", {})
    for part in PARTS:
        if part in parts:
            machines[part] = machine()
            report[KEYS[part]] = runs[part]()
            machines[part]["load_avg_1m_end"] = machine()["load_avg_1m"]
    emit("faults", report, save=args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
