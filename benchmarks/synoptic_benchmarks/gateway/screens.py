"""Benchmark of screens in the KV bucket through two real gateway processes.

- save round trip: ``PUT /api/screens/{name}`` of a 1000-widget screen on gateway
  A, each save based on the previous revision (HTTP request to answer);
- viewer latency: a client of gateway B (and one of A) watches the screen; time
  from sending each save to its ``screen`` frame arriving;
- channel directory: 100,000 channels in the last-value stream, each with a
  description and units in its metadata, published while the gateway runs; the
  first ``/api/channels`` after them, how long until a search lists them all, a
  whole read of the stream as a gateway makes it in the background at start
  (subjects, metadata, index: in process),
  then ranked searches by any part of the name,
  the description and the units over HTTP, and the in-process index search alone
  (each kind of query on its own: a name's start, a part of it, inside it, units,
  description, several words, a broad word, nothing found);
- import of a 500-widget ``.bob`` (parse, map, validate) in process.

Prints JSON (``--save``: benchmarks/results/screens.json).

    .venv/bin/python -m synoptic_benchmarks.gateway.screens [--saves 50] [--channels 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.bus import Bus
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.directory import ChannelDirectory, DirectoryIndex
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_importer import import_screen
from synoptic_schemas import Subjects, encode, parse_channel


def screen_of(widgets: int, title: str) -> dict[str, Any]:
    """A screen of ``widgets`` labels on distinct channels."""
    return {
        "title": title,
        "layout": {"type": "grid", "columns": 20},
        "widgets": [
            {"type": "label", "channels": [f"ca://BENCH:W{i:05d}"], "w": 1, "h": 1}
            for i in range(widgets)
        ],
    }


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p95, p99 and max of ``samples`` (seconds) in ms."""
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"n": len(ordered), "p50_ms": at(0.5), "p95_ms": at(0.95),
            "p99_ms": at(0.99), "max_ms": round(ordered[-1] * 1000, 3)}  # fmt: skip


async def saves(a: GatewayProc, b: GatewayProc, n: int, widgets: int) -> dict[str, Any]:
    """``n`` saves of a ``widgets``-widget screen on A, watched on A and B."""
    arrivals: dict[str, dict[int, int]] = {"a": {}, "b": {}}
    clients: dict[str, GatewayClient] = {}

    def recorder(side: str) -> Any:
        def on_frame(frame: dict[str, Any]) -> None:
            if frame.get("op") == "screen":
                arrivals[side][frame["rev"]] = clients[side].received_ns

        return on_frame

    for side, gw in (("a", a), ("b", b)):
        clients[side] = GatewayClient(gw.ws_url, on_frame=recorder(side))
        await clients[side].connect()
        await clients[side].watch(["bench"])
    round_trips: list[float] = []
    seen: dict[str, list[float]] = {"a": [], "b": []}
    base = 0
    body_bytes = 0
    try:
        for i in range(n):
            body = {"screen": screen_of(widgets, f"Bench {i}"), "base_revision": base}
            body_bytes = len(json.dumps(body))
            sent_ns = time.time_ns()
            t0 = time.perf_counter()
            status, answer, _ = await asyncio.to_thread(
                a.api, "PUT", "/api/screens/bench", body
            )
            round_trips.append(time.perf_counter() - t0)
            if status != 200:
                raise RuntimeError(f"save {i}: {status} {answer}")
            base = answer["revision"]
            for side, client in clients.items():
                rev = base
                frame = await client.wait_screen(lambda f, r=rev: f["rev"] == r, 10)
                assert frame["by"] == "anonymous"
                seen[side].append((arrivals[side][base] - sent_ns) / 1e9)
    finally:
        for client in clients.values():
            await client.close()
    return {
        "widgets": widgets,
        "body_bytes": body_bytes,
        "save_round_trip": percentiles(round_trips),
        "viewer_on_other_gateway": percentiles(seen["b"]),
        "viewer_on_same_gateway": percentiles(seen["a"]),
    }


#: Queries of the directory benchmark by kind: how each one matches the channels.
QUERIES = {
    "name start": "SR07C:BPM0000",
    "part of the name": "BPM012345",
    "inside the name": "7C:BPM00",
    "units": "mm",
    "description": "horizontal",
    "several words": "sr07 vertical mm",
    "broad": "SR",
    "nothing": "nothing",
    "empty": "",
}


def channel_of(i: int) -> tuple[str, str, str]:
    """Channel ``i`` of the directory benchmark: URI, description, units."""
    plane = ("X", "Y")[i % 2]
    desc = f"beam position, {('horizontal', 'vertical')[i % 2]}, monitor {i % 1000}"
    return f"ca://SR{i % 40:02d}C:BPM{i:06d}:{plane}", desc, ("mm", "um")[i % 3 == 0]


async def directory(nats_url: str, gw: GatewayProc, channels: int) -> dict[str, Any]:
    """Fill the last-value stream with ``channels`` channels (a value and metadata
    with description and units each); time the ranked directory search."""
    nc = await connect(nats_url, name="bench-directory")
    await ensure_store(nc, StoreConfig())
    subjects = Subjects()
    rows = [channel_of(i) for i in range(channels)]
    uris = [uri for uri, _, _ in rows]
    payload = encode({"ver": 1, "v": 1.0, "t": time.time_ns(), "sev": 0,
                      "st": "NO_ALARM", "seq": 1, "ep": 1, "c": True})  # fmt: skip
    for uri, desc, unit in rows:
        channel = parse_channel(uri)
        await nc.publish(subjects.val(channel), payload)
        await nc.publish(subjects.meta(channel), encode({
            "ver": 1, "dt": "float64", "shape": [], "w": False, "t": time.time_ns(),
            "ep": 1, "desc": desc, "unit": unit}))  # fmt: skip
    await nc.flush(timeout=60)
    info = f"$JS.API.STREAM.INFO.{StoreConfig().stream}"
    for _ in range(600):  # the stream stores the last ones (at most 60 s)
        reply = await nc.request(info, b"", timeout=10)
        if json.loads(reply.data)["state"].get("num_subjects", 0) >= 2 * channels:
            break
        await asyncio.sleep(0.1)
    await nc.close()

    t0 = time.perf_counter()
    status, body, _ = await asyncio.to_thread(gw.api, "GET", "/api/channels?q=SR07C")
    first_s = time.perf_counter() - t0
    if status != 200:
        raise RuntimeError(f"/api/channels: {status} {body}")
    complete_s = first_s + await until_listed(gw, channels)
    load_s = await whole_load(nats_url, channels)
    http: list[float] = []
    per_kind: dict[str, list[float]] = {kind: [] for kind in QUERIES}
    totals: dict[str, int] = {}
    firsts: dict[str, str] = {}
    for _ in range(10):
        for kind, query in QUERIES.items():
            t0 = time.perf_counter()
            status, body, _ = await asyncio.to_thread(
                gw.api, "GET", f"/api/channels?q={quote(query)}&limit=50"
            )
            http.append(time.perf_counter() - t0)
            if status != 200:
                raise RuntimeError(f"/api/channels?q={query}: {status} {body}")
            totals[kind] = body["total"]
            firsts[kind] = body["channels"][0] if body["channels"] else ""
    index = DirectoryIndex(uris, {uri: (desc, unit) for uri, desc, unit in rows})
    inproc: list[float] = []
    for _ in range(50):
        for kind, query in QUERIES.items():
            t0 = time.perf_counter()
            index.search(query, 50)
            took = time.perf_counter() - t0
            inproc.append(took)
            per_kind[kind].append(took)
    return {
        "channels": channels,
        "listed": totals["empty"],
        "first_request_ms": round(first_s * 1000, 1),
        "listed_all_after_ms": round(complete_s * 1000, 1),
        "whole_load_ms": round(load_s * 1000, 1),
        "queries": QUERIES,
        "search_http": percentiles(http),
        "search_in_process": percentiles(inproc),
        "search_in_process_by_kind": {k: percentiles(v) for k, v in per_kind.items()},
        "totals": totals,
        "first_found": firsts,
    }


async def until_listed(gw: GatewayProc, channels: int) -> float:
    """Seconds until a search lists all ``channels`` (the gateway indexes what
    was published in the background; a search does not wait for it)."""
    t0 = time.perf_counter()
    while True:
        status, body, _ = await asyncio.to_thread(
            gw.api, "GET", "/api/channels?limit=1"
        )
        if status == 200 and body["total"] >= channels:
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > 120:
            raise RuntimeError(f"the directory lists {body} of {channels} after 120 s")
        await asyncio.sleep(0.05)


async def whole_load(nats_url: str, channels: int) -> float:
    """Seconds a gateway's channel directory takes to read the whole stream: the
    subjects, the metadata of each, the index (what it does in the background at
    start; here in process, on a connection of its own)."""

    async def nothing() -> None:
        return None

    bus = Bus(nats_url, "cs", "bench-directory-load", nothing, nothing)
    bus.start()
    directory = ChannelDirectory(bus, "cs")
    try:
        await bus.wait_connected(30)
        t0 = time.perf_counter()
        await directory.refresh()
        took = time.perf_counter() - t0
        if directory.search("", 1)[1] != channels:
            raise RuntimeError(f"the whole load listed {directory.search('', 1)[1]}")
    finally:
        await directory.close()
        await bus.close()
    return took


BOB_KINDS = ("textupdate", "led", "textentry", "progressbar", "bool_button",
             "rectangle", "label", "meter", "combo", "action_button")  # fmt: skip


def sample_bob(widgets: int) -> bytes:
    """A display of ``widgets`` widgets of ten kinds in groups of 50, with macros."""
    parts = ['<display version="2.0.0"><name>$(S) overview</name>'
             "<macros><S>SR01</S><P>$(S):</P></macros><width>1200</width>"]  # fmt: skip
    for g in range(0, widgets, 50):
        parts.append(f'<widget type="group" version="2.0.0"><name>G{g}</name>'
                     f"<x>{g // 50 % 4 * 300}</x><y>{g // 200 * 400}</y>"
                     "<width>300</width><height>400</height>")  # fmt: skip
        for i in range(g + 1, min(g + 50, widgets)):
            kind = BOB_KINDS[i % len(BOB_KINDS)]
            action = ('<actions><action type="write_pv"><pv_name>$(P)R</pv_name>'
                      "<value>1</value></action></actions>") if kind == "action_button" else ""  # fmt: skip
            parts.append(f'<widget type="{kind}" version="2.0.0"><name>W{i}</name>'
                         f"<pv_name>$(P)PV{i:04d}</pv_name><text>W{i}</text>{action}"
                         f"<x>{i % 5 * 60}</x><y>{i % 50 // 5 * 40}</y>"
                         "<width>55</width><height>30</height></widget>")  # fmt: skip
        parts.append("</widget>")
    parts.append("</display>")
    return "".join(parts).encode()


def importing(widgets: int, repeat: int = 20) -> dict[str, Any]:
    """Time :func:`import_screen` of a ``widgets``-widget ``.bob``."""
    data = sample_bob(widgets)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        imported = import_screen(data, "overview.bob")
        times.append(time.perf_counter() - t0)
    return {"widgets": len(imported.screen["widgets"]), "bytes": len(data),
            "mapped": sum(imported.report.mapped.values()),
            "import": percentiles(times)}  # fmt: skip


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with NatsServer() as server, tempfile.TemporaryDirectory() as tmp:
        gateways: list[GatewayProc] = []
        try:
            for _ in range(2):
                gateways.append(start_gateway(
                    server.url, "--screens", str(Path(tmp)), "--anonymous-screens",
                    "*", "--ui", tmp,
                ))  # fmt: skip
            a, b = gateways
            await asyncio.sleep(0)
            for gw in gateways:  # both have read the (empty) bucket
                await asyncio.to_thread(gw.api, "GET", "/api/screens")
            save = await saves(a, b, args.saves, args.widgets)
            found = await directory(server.url, a, args.channels)
        finally:
            for gw in gateways:
                gw.stop()
    return {"saves": save, "directory": found, "importer": importing(500)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--widgets", type=int, default=1000)
    parser.add_argument("--channels", type=int, default=100_000)
    add_save_option(parser)
    args = parser.parse_args()
    started = machine()
    results = asyncio.run(run(args))
    report = {
        "benchmark": "screens in the KV bucket (two gateways)",
        "machine": started,
        "load_avg_1m_end": machine()["load_avg_1m"],
        **results,
        "budgets": {
            "import_500_bob_ms": 200,
            "save_round_trip_ms": 100,
            "viewer_p99_ms": 1000,
            "search_ms": 50,
        },
    }
    emit("screens", report, save=args.save)


if __name__ == "__main__":
    main()
