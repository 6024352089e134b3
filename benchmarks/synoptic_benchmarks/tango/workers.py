"""Subscription time of ``synoptic adapter tango --workers N`` (part of
``make bench-tango``), beside PyTango alone in N processes.

The adapter instance runs with no configured channel; once it is ready the bench
publishes one demand (``cs.want.tango``) for every attribute and takes, from the
workers' progress lines (``tango worker …: first value of every attribute …`` and
``… every event subscription live …``, wall-clock times), the moment the slowest
worker had the first value of each of its attributes and every event subscription
confirmed. The reference is PyTango's ``AsyncRead`` subscription of the same
attributes in N processes holding the same devices (dealt out the same way),
started at the same moment.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from synoptic_adapters.tango import stages
from synoptic_adapters.tango.assignment import Assignment
from synoptic_adapters.testing import synoptic_command
from synoptic_benchmarks.tango.procs import (
    Servers,
    children_together,
    cpu_seconds,
    slowest,
)
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, ProcessError
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode, parse_channel

#: Longest wait for one worker's milestone, seconds.
MILESTONE_TIMEOUT = 120.0
ADAPTER_ID = "bench-tw"


def dealt(uris: list[str], workers: int) -> dict[int, list[str]]:
    """The attributes per worker, as the adapter deals their devices."""
    assignment = Assignment(workers)
    channels = [parse_channel(u) for u in uris]
    assignment.deal(channels)
    per_worker: dict[int, list[str]] = {}
    for uri, channel in zip(uris, channels, strict=True):
        per_worker.setdefault(assignment.owner[channel.tango_device], []).append(uri)
    return per_worker


async def _want(url: str, uris: list[str]) -> float:
    nc = await connect(url, name="bench-want")
    try:
        want = {"ver": SCHEMA_VERSION, "ch": uris, "lease": 600.0, "by": "bench"}
        asked_at = time.time()
        await nc.publish(Subjects().want("tango"), encode(want))
        await nc.flush()
        return asked_at
    finally:
        await nc.close()


def stage_times(output: str, asked_at: float) -> dict[str, list[float]]:
    """``[first, last]`` seconds from ``asked_at`` at which the supervisor, the
    workers or the devices reached each stage (their ``tango stage`` lines,
    :mod:`synoptic_adapters.tango.stages`), in the order first reached."""
    seen: dict[str, list[float]] = {}
    for match in re.finditer(stages.LINE, output, re.MULTILINE):
        at = round(float(match.group(3)) - asked_at, 3)
        first_last = seen.setdefault(match.group(1), [at, at])
        first_last[0], first_last[1] = min(first_last[0], at), max(first_last[1], at)
    return dict(sorted(seen.items(), key=lambda item: item[1][0]))


#: The workers' progress lines the benchmark times: result key -> line text.
MILESTONES = {
    "first_values_s": "first value of every attribute",
    "subscribed_s": "every event subscription live",
}
#: Those lines, kept by the adapter's :class:`Process` beyond its last 400 lines
#: (``keep=``): a burst of log lines must not push one out before it is read.
PROGRESS = (
    r"tango worker \S+: (?:" + "|".join(map(re.escape, MILESTONES.values())) + ")"
)


def milestones(
    adapter: Process, counts: dict[int, int], since: int, timeout: float
) -> dict[str, list[float]]:
    """Wall-clock times of every worker's :data:`MILESTONES` lines (worker index
    -> its attribute count in ``counts``), printed from line ``since`` on.

    All the lines still missing are looked for at once, and the adapter's
    process must keep them (``keep=PROGRESS``): its output is otherwise kept as
    its last 400 lines only, and a burst of event-error log lines pushed out a
    line printed before it was read (seen as "worker never all live")."""
    missing = {
        (
            index,
            key,
        ): rf"{ADAPTER_ID}-w{index}: {re.escape(text)} \({count} attributes\)"
        for index, count in counts.items()
        for key, text in MILESTONES.items()
    }
    found: dict[tuple[int, str], float] = {}
    deadline = time.monotonic() + timeout
    while missing:
        pattern = "tango worker (?:" + "|".join(missing.values()) + r") at ([\d.]+)"
        try:
            match = adapter.wait_for(
                pattern, max(deadline - time.monotonic(), 0.0), since=since
            )
        except ProcessError:
            names = ", ".join(f"w{i} {MILESTONES[k]!r}" for i, k in sorted(missing))
            raise ProcessError(
                f"{adapter.name}: no line {names} in {timeout:.0f} s; "
                f"output:\n{adapter.output()}"
            ) from None
        line = match.group(0)
        for pair, regex in list(missing.items()):
            if re.search(regex, line):
                found[pair] = float(match.group(1))
                del missing[pair]
    return {key: [at for (_, k), at in found.items() if k == key] for key in MILESTONES}


def adapter_with_workers(
    servers: Servers, workers: int, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Seconds from the demand to every first value / every subscription live
    (``settings``: more of the ``tango:`` section, for A/B runs), and when each
    stage of the way was first and last reached (``stages_s``)."""
    per_worker = dealt(servers.uris(), workers)
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-tw-") as tmp:
        nats = NatsServer(store_dir=Path(tmp) / "js").start()
        adapter: Process | None = None
        try:
            config = {
                "id": ADAPTER_ID,
                "nats": {"url": nats.url},
                "tango": {
                    "no_database_hosts": sorted(set(servers.hosts)),
                    "workers": workers,
                    **(settings or {}),
                },
            }
            path = Path(tmp) / "tango.yaml"
            path.write_text(json.dumps(config))  # JSON is YAML
            argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]
            adapter = Process(
                "adapter-tango-workers", argv,
                env={"SYNOPTIC_TANGO_STAGES": "1"}, keep=PROGRESS,
            )  # fmt: skip
            adapter.wait_for(rf"adapter {ADAPTER_ID} ready", 120)
            mark = adapter.mark()
            procs = psutil.Process(adapter.pid).children()
            cpu0 = cpu_seconds(procs)
            asked_at = asyncio.run(_want(nats.url, servers.uris()))
            counts = {index: len(uris) for index, uris in per_worker.items()}
            times = milestones(adapter, counts, mark, MILESTONE_TIMEOUT)
            times = {key: [at - asked_at for at in ats] for key, ats in times.items()}
            cpu = cpu_seconds(procs) - cpu0
            stages_s = stage_times(adapter.output(), asked_at)
        finally:
            if adapter is not None:
                adapter.stop(30)
            nats.close()
    return {
        **{key: max(values) for key, values in times.items()},
        "cpu_s": cpu,
        "stages_s": {
            **stages_s,
            **{key: [min(v), max(v)] for key, v in times.items()},
        },
    }


def pytango_in_processes(servers: Servers, workers: int) -> dict[str, float]:
    """PyTango ``AsyncRead`` subscriptions of the same devices in ``workers``
    processes started together; seconds until the slowest is done."""
    urls = servers.devices_urls()
    per_worker = dealt(servers.uris(), workers)
    url_of = {
        f"{host}/bench/d/{i + 1}": url
        for i, (host, url) in enumerate(zip(servers.hosts, urls, strict=True))
    }
    specs = {
        index: {
            "urls": sorted({url_of[parse_channel(u).tango_device] for u in uris}),
            "bulk": servers.bulk,
        }
        for index, uris in per_worker.items()
    }
    results, go_at = children_together("asyncread", specs, "bench-pytango")
    return {**slowest(results, go_at), "cpu_s": sum(r["cpu_s"] for r in results)}


def workers_runs(servers: Servers, workers: list[int]) -> dict[str, list[dict]]:
    """One run of the adapter with each N of ``workers`` and of PyTango in N
    processes (a failed run is reported, not fatal)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for count in workers:
        for name, measure in (
            (f"adapter_{count}_workers", adapter_with_workers),
            (f"pytango_asyncread_{count}_processes", pytango_in_processes),
        ):
            try:
                result = measure(servers, count)
            except ProcessError as exc:  # first line, and any worker's warning
                lines = str(exc).splitlines()
                said = [line for line in lines if "attributes still" in line]
                result = {"error": " | ".join(lines[:1] + said)}
            runs.setdefault(name, []).append(result)
    return runs
