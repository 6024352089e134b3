"""The gateway hub's per-update cost in one process (no sockets, no NATS).

    python -m synoptic_benchmarks.gateway.hub_path [--channels 5000] [--bursts 40]
    (make bench-gateway-hub)
    python -m synoptic_benchmarks.gateway.hub_path --compare OTHER_CHECKOUT --runs 3

One group of ``--channels`` channels is built through the hub's own path
(``Hub.join``, with an in-process bus that only records the handlers it is given
and answers an empty store), with one member that counts what it is delivered.
Then ``--bursts`` times every channel gets a new value through the handler the
hub subscribed with: the order key, the push into the group, the flushes (a
``Batch`` encoded once, the latency histogram) and the hand-over to the member.
Reported: microseconds of wall time and of this process's CPU time per update (the
minimum and median over bursts; the first burst is a warm-up and not counted).

``--compare DIR`` runs this measurement in child processes, alternating the hub
of another checkout (``DIR`` is its root or its ``gateway/`` folder, which is put
first on ``PYTHONPATH``) with this checkout's, ``--runs`` times each, and reports
both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.store import Snapshot
from synoptic_schemas.codec import encode_value

Handler = Callable[[bytes, bytes], None]
#: Per-update figures of one run (wall and CPU time, best and median burst).
FIGURES = (
    "us_per_update_min", "us_per_update_median",
    "cpu_us_per_update_min", "cpu_us_per_update_median",
)  # fmt: skip


class RecordingBus:
    """The part of the gateway's bus the hub uses to build a group, in process:
    subscriptions are recorded (subject -> handler), the store is empty."""

    up = True
    clustered = False
    barrier_subject = "cs.barrier"

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}

    async def subscribe_many(self, entries: Sequence[tuple[str, Handler]]) -> list[int]:
        first = len(self.handlers)
        self.handlers.update(entries)
        return list(range(first, first + len(entries)))

    async def unsubscribe_many(self, sids: Sequence[int]) -> None:
        pass

    async def barrier(self, timeout: float) -> int:
        return 0

    async def flush(self, timeout: float = 5.0) -> None:
        pass

    async def fetch(self, subjects: Sequence[str], timeout: float) -> Snapshot:
        return Snapshot()

    async def publish(self, subject: str, data: bytes) -> None:
        pass


class CountingMember:
    """A socket stand-in: counts the updates it is handed."""

    json = False
    sending_since = None
    conflating = False

    def __init__(self) -> None:
        self.updates = 0

    def deliver(self, batch: Any) -> None:
        self.updates += len(batch.indexes)

    def push_control(self, frame: bytes | str) -> None:
        pass

    def close_slow(self) -> None:
        pass


async def measure(channels: int, bursts: int) -> dict[str, Any]:
    from synoptic_gateway.hub import Hub
    from synoptic_gateway.metrics import Stats
    from synoptic_gateway.settings import Settings

    settings = Settings(linger=0.0)
    bus = RecordingBus()
    hub = Hub(bus, settings, Stats(), "gw-bench")  # type: ignore[arg-type]
    uris = tuple(f"ca://HUBPATH:{i:05d}" for i in range(channels))
    member = CountingMember()
    await hub.join(member, uris, 1)  # type: ignore[arg-type]
    prefix = f"{settings.prefix}.val."
    live = [(s, h) for s, h in bus.handlers.items() if s.startswith(prefix)]
    assert len(live) == channels, "one value handler per channel"
    subjects = [s.encode() for s, _ in live]
    handlers = [h for _, h in live]
    per_update: list[float] = []
    cpu_per_update: list[float] = []
    now = time.time_ns()
    for burst in range(bursts + 1):
        raws = [
            encode_value(float(burst), now, 0, "NO_ALARM", burst + 1, 1, True)
            for _ in range(channels)
        ]
        clock, cpu_clock = time.perf_counter, time.process_time
        start, cpu_start = clock(), cpu_clock()
        for handler, subject, raw in zip(handlers, subjects, raws, strict=True):
            handler(subject, raw)
        for group in hub.groups.values():
            group.flush()
        elapsed, cpu = clock() - start, cpu_clock() - cpu_start
        if burst:  # the first is a warm-up
            per_update.append(elapsed / channels * 1e6)
            cpu_per_update.append(cpu / channels * 1e6)
        await asyncio.sleep(0)
    assert member.updates == channels * (bursts + 1), member.updates
    return {
        "channels": channels,
        "bursts": bursts,
        "us_per_update_min": round(min(per_update), 3),
        "us_per_update_median": round(statistics.median(per_update), 3),
        "cpu_us_per_update_min": round(min(cpu_per_update), 3),
        "cpu_us_per_update_median": round(statistics.median(cpu_per_update), 3),
    }


def gateway_dir(checkout: str | Path) -> Path:
    """The folder holding ``synoptic_gateway`` in ``checkout``: the checkout's
    ``gateway/`` when given its root, else ``checkout`` itself."""
    path = Path(checkout)
    for candidate in (path / "gateway", path):
        if (candidate / "synoptic_gateway" / "hub.py").is_file():
            return candidate.resolve()
    raise ValueError(
        f"{checkout}: no synoptic_gateway/hub.py in it or in its gateway/ folder"
    )


def compare(old_dir: str, runs: int, channels: int, bursts: int) -> dict[str, Any]:
    """Alternate child runs of the hub in ``old_dir`` (a checkout's root or its
    ``gateway/`` folder) and of this checkout's."""
    old_dir = str(gateway_dir(old_dir))
    results: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for _ in range(runs):
        for name in ("old", "new"):
            env = dict(os.environ)
            if name == "old":
                env["PYTHONPATH"] = os.pathsep.join(
                    p for p in (old_dir, env.get("PYTHONPATH")) if p
                )
            argv = [sys.executable, "-m", __spec__.name, "--child",
                    "--channels", str(channels), "--bursts", str(bursts)]  # fmt: skip
            done = subprocess.run(
                argv, env=env, capture_output=True, text=True, timeout=600, check=True
            )
            result = json.loads(done.stdout)
            where = Path(result.pop("gateway_file")).resolve()
            if (name == "old") != where.is_relative_to(Path(old_dir).resolve()):
                raise RuntimeError(f"the {name} run measured the hub in {where}")
            results[name].append(result)
    summary: dict[str, Any] = {"runs": runs, "old_gateway_dir": old_dir}
    for name, measured in results.items():
        summary[name] = {key: [m[key] for m in measured] for key in FIGURES}
    summary["new_over_old"] = {  # the best run of each, and the median run
        key: [
            round(min(summary["new"][key]) / min(summary["old"][key]), 3),
            round(
                statistics.median(summary["new"][key])
                / statistics.median(summary["old"][key]),
                3,
            ),
        ]
        for key in FIGURES
    }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=5000)
    parser.add_argument("--bursts", type=int, default=40)
    parser.add_argument(
        "--compare", metavar="OTHER_CHECKOUT",
        help="alternate runs with the hub of another checkout (its root or its "
        "gateway/ folder)",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=3, help="with --compare")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_save_option(parser)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"benchmark": "gateway-hub-path", "machine": machine()}
    if args.compare:
        try:
            gateway_dir(args.compare)
        except ValueError as exc:
            parser.error(str(exc))
        report |= compare(args.compare, args.runs, args.channels, args.bursts)
        emit("gateway-hub-compare", report, save=args.save)
    elif args.child:
        from synoptic_gateway import hub

        result = asyncio.run(measure(args.channels, args.bursts))
        print(json.dumps({**result, "gateway_file": hub.__file__}), flush=True)
    else:
        report |= asyncio.run(measure(args.channels, args.bursts))
        emit("gateway-hub", report, save=args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
