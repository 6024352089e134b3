"""History benchmark (``make bench-history``): JSON on stdout.

Cases, against a real nats-server with the history stream filled first:

Every case runs twice in one run: reading the raw history only (one message per
value, ``--no-hist-blocks``: the state before the rollup) under ``raw``, and
reading the blocks of ``synoptic rollup`` (running through the fill, blocks of at
most 600 values: the fill packs 15 min of 10 Hz into about a minute, and 600
values make as many blocks as 60-s windows of real time would) at the top level,
with the history service on a thread of the gateway (``--no-history-process``);
``process`` repeats ``open_trends`` and ``storm`` with blocks and the history
service in a child process (``--history-process``, the gateway's default).

- ``read_reduce``: one ``hist`` request of 100 channels x 15 min at 10 Hz (900 000
  values) answered by the gateway's history service in this process: wall and CPU
  time of the read, the decoding and the reduction (px 1000).
- ``open_trends``: a screen of 20 trends, each 1 h of one channel at 10 Hz, opened
  through a real gateway on one connection as the UI does (the trends opening
  together ask in one request of up to ``hist_channels`` channels, at most
  ``hist_in_flight`` in flight): when each trend's history has arrived after the
  open.
- ``storm``: live delivery latency (source stamp -> client) of 5 viewers of 100
  channels at 10 Hz, first alone, then while 50 history requests (25 connections
  x 2 in flight, 2 channels x 1 h each) run, ``--pairs`` times in turn; p50/p99
  of all the alone windows together and of all the storm windows, and the alone
  windows against each other (the host's own spread in the same run).

- ``images``: the read and reduce again, on a bus whose streams have the
  defaults of ``synoptic bus init`` (1 GiB of raw history, values up to 4 KiB),
  while a 2 MB image is published at 10 Hz beside the fill (each image over the
  raw history's message limit): how much of the range each channel's answer covers (every value, from
  the blocks and from the raw history alone), how many images the rollup kept in
  ``CS_ARRAYS`` and none in ``CS_HIST``.

``--scale`` shrinks every data set (0.05 for a smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.arrays import ArraysConfig, ensure_arrays
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import die_with_parent
from synoptic_bus.rollup import ensure_rollup, start_rollup
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.history.busbackend import BusHistory
from synoptic_gateway.history.service import HistoryService
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, encode, parse_channel
from synoptic_schemas.blocks import decode_block

SUBJECTS = Subjects()
RATE_HZ = 10
#: values per block: 60 s at 10 Hz (see the module's docstring)
BLOCK_VALUES = 600


def _uris(tag: str, n: int) -> list[str]:
    return [f"ca://BH:{tag}{k:03d}" for k in range(n)]


async def fill(nc: NatsClient, uris: list[str], seconds: float) -> tuple[int, int, int]:
    """As many values per channel as ``seconds`` at 10 Hz hold, published as fast as
    the history stream takes them, stamped with the time they are published (the
    stream keeps time by when it stored a message: a range read needs the two
    alike); returns (values, first and last stamp in ns)."""
    js = nc.jetstream()
    n = int(seconds * RATE_HZ)
    subjects = [SUBJECTS.val(parse_channel(u)) for u in uris]
    before = (await js.stream_info("CS_HIST")).state.messages
    sent = 0
    first = time.time_ns()
    for i in range(n):
        t = time.time_ns()
        for k, subject in enumerate(subjects):
            msg = {"ver": 1, "v": float(np.sin(i / 300 + k)), "t": t, "sev": 0,
                   "st": "", "seq": i + 1, "ep": 1, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        sent += len(subjects)
        if sent % 20_000 < len(subjects):
            await _caught_up(nc, before + sent)
    await _caught_up(nc, before + sent)
    return sent, first, time.time_ns()


async def _blocks_caught_up(
    nc: NatsClient, uris: list[str], last_ns: int, timeout: float = 300.0
) -> None:
    """Wait until the rollup has cut every value up to ``last_ns`` (each channel's
    growing block reaches it)."""
    subjects = [SUBJECTS.block(parse_channel(u), "open") for u in uris]
    async with asyncio.timeout(timeout):
        while True:
            snap = await fetch_last(nc, subjects, stream="CS_ROLL_OPEN")
            done = sum(decode_block(d).b > last_ns for d in snap.messages.values())
            if done == len(subjects):
                return
            await asyncio.sleep(0.2)


async def _covering(nc: NatsClient, timeout: float = 60.0) -> None:
    """Wait until the rollup's blocks cover new values (its first second may not
    be covered: it cannot promise values it saw before it subscribed)."""
    uri = "ca://BH:PROBE"
    subject, block = (
        SUBJECTS.val(parse_channel(uri)),
        SUBJECTS.block(parse_channel(uri), "open"),
    )
    async with asyncio.timeout(timeout):
        for seq in range(1, 10**6):
            t = time.time_ns()
            await nc.publish(subject, encode({"ver": 1, "v": 0.0, "t": t, "sev": 0,
                                              "st": "", "seq": seq, "ep": 1, "c": True}))  # fmt: skip
            await asyncio.sleep(0.2)
            snap = await fetch_last(nc, [block], stream="CS_ROLL_OPEN")
            data = snap.messages.get(block)
            if data is not None and decode_block(data).a <= t:
                return


async def _caught_up(nc: NatsClient, count: int, timeout: float = 120.0) -> None:
    js = nc.jetstream()
    async with asyncio.timeout(timeout):
        while (await js.stream_info("CS_HIST")).state.messages < count:  # noqa: ASYNC110 - a stream count has no event
            await asyncio.sleep(0.05)


async def read_reduce(
    url: str, uris: list[str], t0_ms: float, t1_ms: float, *, blocks: bool
) -> dict:
    settings = Settings(nats_url=url, hist_max_points=5_000_000, hist_timeout=120)
    bus = BusHistory(url, "cs", "bench-history", blocks=blocks)
    service = HistoryService(settings, bus)
    await service.start()
    principal = Principal(name="bench", read=("*",), write=(), expires=None)
    runs = []
    try:
        for run in range(3):
            frame = {"op": "hist", "id": run, "ch": uris, "t0": t0_ms, "t1": t1_ms,
                     "px": 1000}  # fmt: skip
            wall, cpu = time.perf_counter(), time.process_time()
            values_before, messages_before = service.values_in, bus.messages
            answer = await service.answer(frame, principal)
            errs = [e for e in answer["err"] if e is not None]
            if errs:
                print(
                    f"bench-history: {len(errs)} errors, e.g. {errs[0]}",
                    file=sys.stderr,
                )
            runs.append(
                {
                    "wall_ms": round((time.perf_counter() - wall) * 1e3, 1),
                    "cpu_ms": round((time.process_time() - cpu) * 1e3, 1),
                    "points_out": sum(len(t) for t in answer["t"] if t is not None),
                    "values_in": service.values_in - values_before,
                    "messages": bus.messages - messages_before,
                    "errors": sum(e is not None for e in answer["err"]),
                }
            )
    finally:
        await service.close()
    return {
        "channels": len(uris),
        "values_read": sum(r["values_in"] for r in runs[:1]),
        "runs": runs,
        "median_wall_ms": statistics.median(r["wall_ms"] for r in runs),
        "median_cpu_ms": statistics.median(r["cpu_ms"] for r in runs),
        "messages": runs[0]["messages"],
        "target_ms": 200,
    }


async def open_trends(ws_url: str, uris: list[str], t0_ms: float, t1_ms: float) -> dict:
    """A screen of one-channel trends opened on one connection as the UI does
    (``HistoryRequests`` in ui/src/lib/transport/requests.ts): the trends opening
    together ask for the same window, so their requests go as one ``hist`` frame of
    up to ``hist_channels`` channels, at most ``hist_in_flight`` frames in flight;
    each trend is drawn when its frame's answer has arrived."""
    async with GatewayClient([ws_url]) as client:
        limits = (client.hello or {}).get("limits", {})
        in_flight = int(limits.get("hist_in_flight", 2))
        per_request = int(limits.get("hist_channels", 100))
        slots = asyncio.Semaphore(in_flight)
        batches = [uris[i : i + per_request] for i in range(0, len(uris), per_request)]
        opened = time.perf_counter()

        async def one(batch: list[str]) -> list[tuple[float, int, Any]]:
            async with slots:
                traces = await client.history(batch, t0_ms, t1_ms, px=800)
            drawn = (time.perf_counter() - opened) * 1e3
            return [(drawn, 0 if traces[u].t is None else len(traces[u].t), traces[u].err)
                    for u in batch]  # fmt: skip

        results = [
            r for part in await asyncio.gather(*(one(b) for b in batches)) for r in part
        ]
    drawn = sorted(r[0] for r in results)
    return {
        "trends": len(uris),
        "requests": len(batches),
        "hist_in_flight": in_flight,
        "drawn_after_open_ms": [round(x, 1) for x in drawn],
        "last_drawn_ms": round(drawn[-1], 1),
        "points_per_trend": statistics.median(r[1] for r in results),
        "errors": sum(r[2] is not None for r in results),
        "target_ms": 500,
    }


async def _live_window(
    nc: NatsClient, live: list[str], seconds: float, seq: list[int]
) -> None:
    """Publish the live channels at 10 Hz with fresh stamps for ``seconds``
    (``seq`` goes on across windows: the gateway drops what is not newer)."""
    subjects = [SUBJECTS.val(parse_channel(u)) for u in live]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seq[0] += 1
        for subject in subjects:
            msg = {"ver": 1, "v": float(seq[0]), "t": time.time_ns(), "sev": 0,
                   "st": "", "seq": seq[0], "ep": 2, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        await nc.flush()
        await asyncio.sleep(1 / RATE_HZ)


def _pcts(samples: list[int]) -> dict:
    if not samples:
        return {"n": 0}
    a = np.array(samples) / 1e6
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p99_ms": round(float(np.percentile(a, 99)), 2)}  # fmt: skip


def _ratio(during: dict, alone: dict) -> float | None:
    if alone.get("p99_ms") and during.get("p99_ms"):
        return round(during["p99_ms"] / alone["p99_ms"], 2)
    return None


def _alone_vs_alone(windows: list[list[int]]) -> float | None:
    """The p99 of the even-numbered alone windows over the odd ones': how far two
    sets of windows without any history work differ on this host in this run (a
    10-s window's p99 is its worst round or two of 500 samples each)."""
    if len(windows) < 2:
        return None
    even = [x for w in windows[0::2] for x in w]
    odd = [x for w in windows[1::2] for x in w]
    return _ratio(_pcts(even), _pcts(odd))


#: Resamplings of the pairs for the p99 ratio's interval (:func:`ratio_interval`).
RESAMPLES = 400


def ratio_interval(
    alone: list[list[int]], during: list[list[int]], seed: int = 0
) -> list[float] | None:
    """The 90 % bootstrap interval of the pooled p99 ratio: the pairs of windows
    drawn again with replacement ``RESAMPLES`` times, each draw's ratio computed
    as the whole run's is. How far the run's own noise alone could move the
    ratio (a window's p99 is its worst round or two); None under 3 pairs."""
    if len(alone) < 3:
        return None
    rng = np.random.default_rng(seed)
    a = [np.asarray(w, dtype=np.int64) for w in alone]
    d = [np.asarray(w, dtype=np.int64) for w in during]
    ratios = []
    for _ in range(RESAMPLES):
        pick = rng.integers(0, len(a), len(a))
        pa = np.percentile(np.concatenate([a[i] for i in pick]), 99)
        pd = np.percentile(np.concatenate([d[i] for i in pick]), 99)
        if pa > 0:
            ratios.append(pd / pa)
    low, high = np.percentile(ratios, [5, 95])
    return [round(float(low), 2), round(float(high), 2)]


def pooled(alone: list[list[int]], during: list[list[int]]) -> dict:
    """Windows measured in pairs (alone, then beside some work): the p50/p99 of
    each kind's samples together, their p99 ratio with its 90 % interval over the
    pairs (:func:`ratio_interval`), each pair's, and the alone windows against
    each other (so the host's drift and its rare hiccups weigh on both kinds
    alike, and its own spread is seen in the same run)."""
    a = _pcts([x for w in alone for x in w])
    d = _pcts([x for w in during for x in w])
    return {"pairs": len(alone), "alone": a, "during": d, "p99_ratio": _ratio(d, a),
            "p99_ratio_90": ratio_interval(alone, during),
            "pair_ratios": [_ratio(_pcts(y), _pcts(x))
                            for x, y in zip(alone, during, strict=True)],
            "alone_vs_alone_ratio": _alone_vs_alone(alone)}  # fmt: skip


async def storm(
    nc: NatsClient, ws_url: str, hist_uris: list[str], t0_ms: float, t1_ms: float,
    seconds: float, tag: str = "L", pairs: int = 1,
) -> dict:  # fmt: skip
    """Live latency alone, then during a storm of 50 history requests, ``pairs``
    times in turn (:func:`pooled`)."""
    live = _uris(tag, 100)
    latencies: list[int] = []
    received: list[int] = []  # when each sample arrived (ns since the epoch)
    recording = [False]
    seq = [0]
    alone_windows: list[list[int]] = []
    storm_windows: list[list[int]] = []
    within: list[int] = []
    runs: list[dict] = []

    viewers = [GatewayClient([ws_url]) for _ in range(5)]
    for viewer in viewers:
        await viewer.connect()

        def on_update(_sub: Any, _i: list[int], values: list[Any], v=viewer) -> None:
            if recording[0]:
                latencies.extend(v.received_ns - x["t"] for x in values)
                received.extend(v.received_ns for _ in values)

        await viewer.subscribe(live, on_update=on_update)
    try:
        recording[0] = True
        for _ in range(pairs):
            latencies.clear()
            received.clear()
            await _live_window(nc, live, seconds, seq)
            alone_windows.append(list(latencies))
            latencies.clear()
            received.clear()
            # the storm runs in a process of its own: its decoding must not slow
            # the viewers measured here
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "synoptic_benchmarks.history.bench",
                "--storm-client", json.dumps(
                    {"url": ws_url, "uris": hist_uris, "t0": t0_ms, "t1": t1_ms}),
                stdout=asyncio.subprocess.PIPE, preexec_fn=die_with_parent(),
            )  # fmt: skip
            assert proc.stdout is not None
            await proc.stdout.readline()  # connected
            storm_from = time.time_ns()
            await _live_window(nc, live, seconds, seq)
            storm_windows.append(list(latencies))
            result = json.loads(await proc.stdout.readline() or b"{}")
            await proc.wait()
            # the samples that arrived while the storm ran (it lasts a fraction
            # of the window)
            storm_to = storm_from + int((result.get("s", 0.0) + 0.05) * 1e9)
            within.extend(lat for lat, at in zip(latencies, received, strict=True)
                          if storm_from <= at <= storm_to)  # fmt: skip
            runs.append({"answered": result.get("answered", 0),
                         "errors": result.get("errors", 50),
                         "storm_s": result.get("s", 0.0)})  # fmt: skip
    finally:
        recording[0] = False
        for viewer in viewers:
            await viewer.close()
    stats = pooled(alone_windows, storm_windows)
    stats["during_storm"] = stats.pop("during")
    return {
        "viewers": len(viewers), "live_channels": len(live), "window_s": seconds,
        **stats,
        "storm_time_only": _pcts(within) if within else {"n": 0},
        "storm_requests": 50, "answered": min(r["answered"] for r in runs),
        "errors": sum(r["errors"] for r in runs),
        "storm_s": round(max(r["storm_s"] for r in runs), 1),
        "target_p99_ratio": 1.1,
    }  # fmt: skip


async def storm_client(params: dict) -> None:
    """50 history requests from 25 connections, 2 in flight each; prints a line when
    connected and one JSON line when all are answered."""
    clients = [GatewayClient([params["url"]]) for _ in range(25)]
    for c in clients:
        await c.connect()
    print("connected", flush=True)
    uris = params["uris"]
    answered = errors = 0

    async def one(client: GatewayClient, k: int) -> None:
        nonlocal answered, errors
        pair = [uris[k % len(uris)], uris[(k + 1) % len(uris)]]
        try:
            traces = await client.history(
                pair, params["t0"], params["t1"], px=800, timeout=120
            )
            answered += 1
            errors += sum(t.err is not None for t in traces.values())
        except Exception:
            errors += 1

    started = time.perf_counter()
    await asyncio.gather(
        *(one(c, 2 * i + j) for i, c in enumerate(clients) for j in range(2))
    )
    elapsed = round(time.perf_counter() - started, 1)
    print(
        json.dumps({"answered": answered, "errors": errors, "s": elapsed}), flush=True
    )
    for c in clients:
        await c.close()


async def _images(nc: NatsClient, stop: asyncio.Event) -> int:
    """A 1024 x 1024 16-bit image (2 MiB) at 10 Hz until ``stop``; returns how many."""
    subject = SUBJECTS.val(parse_channel("pva://BH:IMAGE"))
    image = np.zeros((1024, 1024), "<u2")
    n = 0
    while not stop.is_set():
        n += 1
        image[0, 0] = n
        msg = {"ver": 1, "v": image, "t": time.time_ns(), "sev": 0, "st": "",
               "seq": n, "ep": 1, "c": True}  # fmt: skip
        await nc.publish(subject, encode(msg))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1 / RATE_HZ)
    return n


async def images_case(args: argparse.Namespace) -> dict:
    """The read and reduce with images on the bus (see the module's docstring),
    with the machine's state (``machine``: the case may run apart)."""
    started = machine()
    with NatsServer(max_payload=8 << 20) as server:
        nc = await connect(server.url, name="bench-history-images")
        history = HistoryConfig()  # the defaults of ``synoptic bus init``
        await ensure_store(nc, StoreConfig())
        await ensure_history(nc, history)
        await ensure_rollup(nc, history)
        await ensure_arrays(nc, ArraysConfig(history))
        rollup = start_rollup(server.url, "--max-values", str(BLOCK_VALUES))
        await _covering(nc)
        try:
            uris = _uris("I", 100)
            stop = asyncio.Event()
            images = asyncio.create_task(_images(nc, stop))
            n, t0, t1 = await fill(nc, uris, 900 * args.scale)
            stop.set()
            published = await images
            await _blocks_caught_up(nc, uris, t1)
            js = nc.jetstream()
            raw = await js.stream_info(history.stream)
            arrays = await js.stream_info(ArraysConfig(history).stream)
            t_range = (t0 / 1e6 - 1, t1 / 1e6 + 1)
            out: dict[str, Any] = {
                "values_stored": n,
                "images_published": published,
                "image_bytes": 1024 * 1024 * 2,
                "raw_messages": raw.state.messages,
                "raw_bytes": raw.state.bytes,
                "raw_max_bytes": history.max_bytes,
                "raw_max_msg": history.max_value_bytes,
                "arrays_kept": arrays.state.messages,
                "machine": started,
            }
            for key, blocks in (("blocks", True), ("raw", False)):
                read = await read_reduce(server.url, uris, *t_range, blocks=blocks)
                # every value stored is read back: the whole range, each channel
                read["coverage"] = round(read["values_read"] / n, 4)
                out[key] = read
        finally:
            rollup.stop()
            with contextlib.suppress(Exception):
                await nc.close()
    started["load_avg_1m_end"] = machine()["load_avg_1m"]
    return out


async def run(args: argparse.Namespace) -> dict:
    report: dict[str, Any] = {"machine": machine(), "scale": args.scale}
    with NatsServer() as server:
        nc = await connect(server.url, name="bench-history")
        await ensure_store(nc, StoreConfig())
        history = HistoryConfig(max_bytes=4 << 30)
        await ensure_history(nc, history)
        await ensure_rollup(nc, history, max_bytes=1 << 30)
        rollup = start_rollup(server.url, "--max-values", str(BLOCK_VALUES))
        await _covering(nc)
        a_uris, b_uris = _uris("A", 100), _uris("B", 20)
        filled = time.perf_counter()
        a_n, a0, a1 = await fill(nc, a_uris, 900 * args.scale)
        b_n, b0, b1 = await fill(nc, b_uris, 3600 * args.scale)
        report["values_stored"] = a_n + b_n
        report["fill_s"] = round(time.perf_counter() - filled, 1)
        await _blocks_caught_up(nc, a_uris + b_uris, max(a1, b1))
        report["rollup_s"] = round(time.perf_counter() - filled - report["fill_s"], 1)
        a_range = (a0 / 1e6 - 1, a1 / 1e6 + 1)
        b_range = (b0 / 1e6 - 1, b1 / 1e6 + 1)
        try:
            # raw: no blocks; the top level: blocks, history on a thread of the
            # gateway; process: blocks, history in a child process (the default)
            thread = "--no-history-process"
            for key, blocks, flags in (
                ("raw", False, ("--no-hist-blocks", thread)),
                ("process", True, ("--history-process",)),
                ("blocks", True, (thread,)),
            ):
                part = report.setdefault(key, {}) if key != "blocks" else report
                if key != "process":
                    part["read_reduce"] = await read_reduce(
                        server.url, a_uris, *a_range, blocks=blocks
                    )
                gateway = start_gateway(server.url, "--hist-timeout", "120", *flags)
                try:
                    if key == "process":  # measured once the history process runs
                        gateway.proc.wait_for(r"history process \d+ ready", timeout=60)
                    part["open_trends"] = await open_trends(
                        gateway.ws_url, b_uris, *b_range
                    )
                    part["storm"] = await storm(
                        nc,
                        gateway.ws_url,
                        b_uris,
                        *b_range,
                        args.window,
                        tag={"raw": "LR", "process": "LP"}.get(key, "LB"),
                        pairs=1 if key == "raw" else args.pairs,
                    )
                finally:
                    gateway.stop()
                print(f"bench-history: {key} done", file=sys.stderr, flush=True)
        finally:
            rollup.stop()
            with contextlib.suppress(Exception):
                await nc.close()
    report["images"] = await images_case(args)
    print("bench-history: images done", file=sys.stderr, flush=True)
    report["load_avg_1m_end"] = machine()["load_avg_1m"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of every data set (1: the full workload)")  # fmt: skip
    parser.add_argument("--window", type=float, default=10.0,
                        help="seconds of live latency measured alone and under the storm")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=4,
                        help="alone and storm windows in turn, per case (the raw "
                             "case: one; its storm outlasts a window)")  # fmt: skip
    parser.add_argument("--storm-client", help=argparse.SUPPRESS)
    add_save_option(parser)
    args = parser.parse_args()
    if args.storm_client:
        asyncio.run(storm_client(json.loads(args.storm_client)))
        return
    emit("history", asyncio.run(run(args)), save=args.save, indent=2)


if __name__ == "__main__":
    main()
