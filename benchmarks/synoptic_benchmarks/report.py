"""What every benchmark shares at its end: the machine it ran on, and its JSON
report printed on stdout and, with ``--save``, kept as ``benchmarks/results/NAME.json``
(one file per ``make bench-*`` target, the same JSON it prints; the tables of
docs/benchmarks.md are generated from these files)."""

from __future__ import annotations

import argparse
import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Where ``--save`` writes: ``benchmarks/results`` of this checkout.
RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"


def machine() -> dict[str, Any]:
    """When (UTC), CPU count and kind, Python version and the 1-minute load
    average."""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpus": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def add_save_option(parser: argparse.ArgumentParser) -> None:
    """``--save``: also write the report to ``benchmarks/results/NAME.json``."""
    parser.add_argument(
        "--save",
        action="store_true",
        help=f"also write the JSON report into {RESULTS_DIR.name}/ of benchmarks/",
    )


def emit(name: str, report: Any, *, save: bool, indent: int = 1) -> None:
    """Print ``report`` as JSON on stdout; with ``save`` also write those bytes to
    ``RESULTS_DIR/name.json`` (replacing the previous result)."""
    text = json.dumps(report, indent=indent)
    print(text, flush=True)
    if save:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{name}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(text + "\n")
        tmp.replace(path)
