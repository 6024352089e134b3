"""Rewind benchmark (``make bench-rewind``): JSON on stdout.

Against a real nats-server with the bus's history streams and a real gateway
(history in its child process, the default):

- ``at``: a screen of 1000 channels at a moment, asked through the gateway
  (``at``, msgpack) by a Python client: wall time from request to decoded
  answer. The raw history holds ``--rounds`` values of every channel (360: an
  hour of 1000 channels each changing every 10 s); the moment is at its oldest
  end (as deep into the stream as an hour back), and at its newest.
- ``play``: 100 channels changing at 10 Hz for ``--play-history`` seconds,
  played back at 60× from their start to the present: ``pb`` frames per second
  of wall time, values per frame, and whether the playback ended at ``now``.
- ``before_first``: those 100 channels at a moment 1 s before their first
  value (stored after all of the 1000 channels' values).
- ``viewers``: live latency (source stamp → client) of 5 viewers of 100
  channels at 10 Hz in windows of ``--window`` seconds alone and beside 20 other
  connections rewinding (an ``at`` of 100 channels at a random moment) and
  playing back (10×) in turn over the same history: ``--pairs`` of each, alone
  first and beside first in turn, the rewinders' one process paused between
  (a p99 of a few seconds is its worst round or two: many short windows in
  turn let the host's drift and hiccups weigh on both kinds alike). Reported:
  p50/p99 of all the alone windows together and of all the others, their
  ratio with its 90 % interval over the pairs, each pair's, and the alone
  windows against each other (the host's own spread in the same run); here
  with the gateway's history on a thread of its own (``--no-history-process``).
  The rewinders' client process runs in the idle scheduling class (their
  browsers would not be on the gateway's host).
  ``viewers_history_process``: the same with the gateway's history in its own
  process (the default: in the idle scheduling class, at a lower nice level and
  within its CPU budget, ``--history-cpu``, half a core by default;
  ``--gateway-arg=--history-cpu=0`` or ``--gateway-arg=--no-history-idle``
  measures without one of them).

``--case`` runs only some cases (``--case viewers_history_process``: the live
viewers beside the rewinders, history in its own process); ``--gateway-arg``
passes an argument to the gateways started; ``--rewinders-only at`` or ``play``
has the rewinders do only one of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import statistics
import sys
import time
from typing import Any

import psutil

from synoptic_benchmarks.history.bench import _blocks_caught_up, _live_window, pooled
from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.arrays import ArraysConfig, ensure_arrays
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.metahistory import MetaHistoryConfig, ensure_meta_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import die_with_parent
from synoptic_bus.rollup import ensure_rollup, start_rollup
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, encode, parse_channel

SUBJECTS = Subjects()
#: The cases, in the order they run (``--case`` picks some).
CASES = ("at", "play", "viewers", "viewers_history_process")


def _uris(tag: str, n: int) -> list[str]:
    return [f"ca://RW:{tag}{k:04d}" for k in range(n)]


async def _stored(nc: NatsClient, stream: str, count: int) -> None:
    js = nc.jetstream()
    async with asyncio.timeout(300):
        while (await js.stream_info(stream)).state.messages < count:  # noqa: ASYNC110 - a stream count has no event
            await asyncio.sleep(0.05)


async def fill_screen(nc: NatsClient, uris: list[str], rounds: int) -> tuple[int, int]:
    """Metadata, then ``rounds`` values of every channel, as fast as the stream
    takes them; returns when the first round was stored and when the last was
    (ns)."""
    subjects = [SUBJECTS.val(parse_channel(u)) for u in uris]
    for u in uris:
        meta = {"ver": 1, "dt": "f8", "shape": [], "w": False, "t": time.time_ns(),
                "ep": 1, "unit": "mA", "prec": 3}  # fmt: skip
        await nc.publish(SUBJECTS.meta(parse_channel(u)), encode(meta))
    js = nc.jetstream()
    before = (await js.stream_info("CS_HIST")).state.messages
    first = 0
    for r in range(rounds):
        t = time.time_ns()
        for k, subject in enumerate(subjects):
            msg = {"ver": 1, "v": float(r * 1000 + k), "t": t, "sev": r % 3,
                   "st": "", "seq": r + 1, "ep": 1, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        if r == 0:  # the oldest moment asked: once the first round is stored
            await _stored(nc, "CS_HIST", before + len(uris))
            first = time.time_ns()
        elif r % 20 == 19:
            await _stored(nc, "CS_HIST", before + (r + 1) * len(uris))
    await _stored(nc, "CS_HIST", before + rounds * len(uris))
    return first, time.time_ns()


async def at_case(url: str, nc: NatsClient, rounds: int, repeats: int) -> dict:
    uris = _uris("A", 1000)
    filled = time.perf_counter()
    first, last = await fill_screen(nc, uris, rounds)
    fill_s = time.perf_counter() - filled
    out: dict[str, Any] = {"channels": len(uris), "values_per_channel": rounds,
                           "values_in_stream": rounds * len(uris),
                           "fill_s": round(fill_s, 1)}  # fmt: skip
    async with GatewayClient([url]) as client:
        await client.at(uris, last / 1e6)  # warm: connections, code paths
        for key, t_ns in (("oldest", first + 1_000_000), ("newest", last)):
            walls = []
            answer: dict = {}
            for _ in range(repeats):
                started = time.perf_counter()
                answer = await client.at(uris, t_ns / 1e6)
                walls.append((time.perf_counter() - started) * 1e3)
            kept = sum(v is not None for v in answer["val"])
            out[key] = {
                "median_ms": round(statistics.median(walls), 1),
                "p95_ms": round(sorted(walls)[int(0.95 * (len(walls) - 1))], 1),
                "values": kept, "metadata": sum(m is not None for m in answer["meta"]),
            }  # fmt: skip
    out["target_ms"] = 300
    return out


async def before_first_case(
    url: str, uris: list[str], first: int, repeats: int
) -> dict:
    """``uris`` at a moment 1 s before their first value, stored after every value
    of the ``at`` case's 1000 channels: each answered ``not_kept`` with how far
    back it goes."""
    walls = []
    answer: dict = {}
    async with GatewayClient([url]) as client:
        for _ in range(repeats):
            started = time.perf_counter()
            answer = await client.at(uris, (first - 10**9) / 1e6)
            walls.append((time.perf_counter() - started) * 1e3)
    return {
        "channels": len(uris),
        "median_ms": round(statistics.median(walls), 1), "max_ms": round(max(walls), 1),
        "not_kept": sum((e or {}).get("code") == "not_kept" for e in answer["err"]),
    }  # fmt: skip


async def fill_live(nc: NatsClient, uris: list[str], seconds: float) -> tuple[int, int]:
    """``uris`` at 10 Hz for ``seconds`` of real time (the stream's time is when
    it stored a value: a playback needs the time spread out)."""
    subjects = [SUBJECTS.val(parse_channel(u)) for u in uris]
    loop = asyncio.get_running_loop()
    start = loop.time()
    first = time.time_ns()
    k = 0
    while loop.time() - start < seconds:
        k += 1
        t = time.time_ns()
        for j, subject in enumerate(subjects):
            msg = {"ver": 1, "v": float(k + j), "t": t, "sev": 0, "st": "",
                   "seq": k, "ep": 3, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        await asyncio.sleep(max(start + k / 10 - loop.time(), 0))  # the rate
    await nc.flush()
    return first, time.time_ns()


async def play_case(url: str, uris: list[str], first: int, speed: float) -> dict:
    frames: list[tuple[float, dict]] = []
    ended = asyncio.Event()

    def on_frame(frame: dict) -> None:
        if frame["op"] == "pb":
            frames.append((time.perf_counter(), frame))
            if "end" in frame:
                ended.set()

    async with GatewayClient([url], on_frame=on_frame) as client:
        span_s = (time.time_ns() - first) / 1e9
        # from the moment every channel has a value (a moment before a channel's
        # first value costs nats-server a scan of the stream back to its start)
        await client.play(uris, first / 1e6 + 1e3, speed)
        await asyncio.wait_for(ended.wait(), span_s / speed * 3 + 60)
    shown = [f for _, f in frames[:-1]]
    walls = [w for w, _ in frames[:-1]]
    wall_s = walls[-1] - walls[0] if len(walls) > 1 else 0.0
    gaps = [b - a for a, b in itertools.pairwise(walls)]
    return {
        "channels": len(uris), "rate_hz": 10, "speed": speed,
        "history_s": round(span_s, 1), "frames": len(shown),
        "frames_per_s": round((len(shown) - 1) / wall_s, 1) if wall_s else None,
        "bus_s_per_wall_s": round((shown[-1]["t"] - shown[0]["t"]) / 1e3 / wall_s, 1)
        if wall_s else None,
        "values_per_frame": round(statistics.mean(len(f["i"]) for f in shown), 1)
        if shown else None,
        "max_gap_ms": round(max(gaps) * 1e3, 1) if gaps else None,
        "end": frames[-1][1].get("end") if frames else None,
        "end_msg": frames[-1][1].get("msg") if frames else None,
        "target_frames_per_s": 30,
    }  # fmt: skip


#: The scheduling class of the rewinders' own client process: their browsers
#: would be elsewhere, not on the gateway's host, so they take only a CPU that
#: nothing measured wants (the live viewers' client, the gateway, the bus).
REWINDERS_SCHED = "idle"


async def rewinders(params: dict) -> None:
    """20 connections, each in turn: an ``at`` of the channels at a random moment
    of the history, then a 10× playback from another for 2 s, then a halt. Driven
    by lines on stdin: ``run`` (answered ``running``), ``pause`` (each halts what
    it plays and waits; answered ``paused`` once all are idle), ``stop`` (answered
    with one JSON line of counts). Prints ``connected`` first."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # REWINDERS_SCHED
    cpu0 = time.process_time()
    clients = [GatewayClient([params["url"]]) for _ in range(20)]
    for c in clients:
        await c.connect()
    uris, lo, hi = params["uris"], params["t0"], params["t1"]
    counts = {"at": 0, "play": 0, "frames": 0, "errors": 0}
    only = params.get("only")  # "at" or "play": that one alone
    running = asyncio.Event()
    pausing = asyncio.Event()
    busy = [0]
    idle = asyncio.Event()
    idle.set()

    async def watch(seconds: float) -> None:
        """Look at the screen for ``seconds``, or until paused."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(pausing.wait(), seconds)

    async def one(client: GatewayClient) -> None:
        while True:
            await running.wait()
            busy[0] += 1
            idle.clear()
            try:
                if only != "play":
                    await client.at(uris, random.uniform(lo, hi))
                    counts["at"] += 1
                if only == "at" or pausing.is_set():
                    await watch(2)
                else:
                    answer = await client.play(uris, random.uniform(lo, hi), 10)
                    counts["play"] += 1
                    await watch(2)
                    await client.halt(answer["id"])
            except Exception:
                counts["errors"] += 1
            finally:
                busy[0] -= 1
                if busy[0] == 0:
                    idle.set()

    for c in clients:
        c.on_frame = lambda f: counts.__setitem__(
            "frames", counts["frames"] + (f["op"] == "pb")
        )
    tasks = [asyncio.create_task(one(c)) for c in clients]
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    print("connected", flush=True)
    while (line := (await reader.readline()).decode().strip()) not in ("stop", ""):
        if line == "run":
            pausing.clear()
            running.set()
            print("running", flush=True)
        elif line == "pause":
            running.clear()
            pausing.set()
            await idle.wait()
            print("paused", flush=True)
    for task in tasks:
        task.cancel()
    counts["cpu_s"] = round(time.process_time() - cpu0, 2)
    print(json.dumps(counts), flush=True)
    for c in clients:
        await c.close()


def _cpu_s(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds (user and system) each process has taken so far."""
    out: dict[str, float] = {}
    for name, pid in pids.items():
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            out[name] = times.user + times.system
    return out


def _spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before[k], 2) for k in after if k in before}


def _processes(gateway_pid: int, nats_pid: int) -> dict[str, int]:
    """The processes whose CPU a viewers case reports, by role."""
    pids = {"gateway": gateway_pid, "nats_server": nats_pid, "bench": os.getpid()}
    for child in psutil.Process(gateway_pid).children():
        pids["history_process"] = child.pid  # the gateway's one child, if any
    return pids


#: Seconds the bench lets the gateway and its history process finish what the
#: paused rewinders' last requests left (a stretch read ahead, cancelled) before
#: a window alone.
SETTLE_S = 0.5


class _Rewinders:
    """The rewinders' client process (:func:`rewinders`), run and paused by lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, params: dict) -> _Rewinders:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "synoptic_benchmarks.rewind", "--rewinders",
            json.dumps(params), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, preexec_fn=die_with_parent(),
        )  # fmt: skip
        self = cls(proc)
        await self._said("connected")
        return self

    async def _said(self, word: str) -> None:
        assert self.proc.stdout is not None
        line = (await self.proc.stdout.readline()).decode().strip()
        if line != word:
            raise RuntimeError(f"the rewinders said {line!r}, not {word!r}")

    async def tell(self, command: str, answer: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{command}\n".encode())
        await self.proc.stdin.drain()
        await self._said(answer)

    async def stop(self) -> dict[str, Any]:
        """Stop them: their counts (requests, frames, errors, CPU seconds)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(b"stop\n")
        await self.proc.stdin.drain()
        done = json.loads(await self.proc.stdout.readline() or b"{}")
        await self.proc.wait()
        return done


async def viewers_case(
    nc: NatsClient,
    pids: dict[str, int],
    url: str,
    hist: list[str],
    t0: float,
    t1: float,
    window: float,
    tag: str = "L",
    pairs: int = 12,
    only: str | None = None,
) -> dict:
    """Live latency alone and beside the rewinders, ``pairs`` times each in turn
    (alone first, then beside first: a drift of the host weighs on both alike),
    the rewinders' one process paused between (:func:`~synoptic_benchmarks.
    history.bench.pooled`)."""
    live = _uris(tag, 100)  # channels of its own (a gateway drops a seq seen before)
    latencies: list[int] = []
    recording = [False]
    seq = [0]
    windows: dict[str, list[list[int]]] = {"alone": [], "during": []}
    spent: dict[str, dict[str, float]] = {"alone": {}, "during": {}}
    viewers = [GatewayClient([url]) for _ in range(5)]
    for viewer in viewers:
        await viewer.connect()

        def on_update(_s: Any, _i: list[int], values: list[Any], v=viewer) -> None:
            if recording[0]:
                latencies.extend(v.received_ns - x["t"] for x in values)

        await viewer.subscribe(live, on_update=on_update)
    rewinding = await _Rewinders.start(
        {"url": url, "uris": hist, "t0": t0, "t1": t1, "only": only}
    )
    print("bench-rewind: rewinders connected", file=sys.stderr, flush=True)

    async def measure(kind: str) -> None:
        latencies.clear()
        cpu_start = _cpu_s(pids)
        await _live_window(nc, live, window, seq)
        _add(spent[kind], _spent(cpu_start, _cpu_s(pids)))
        windows[kind].append(list(latencies))

    try:
        recording[0] = True
        for pair in range(pairs):
            for kind in ("alone", "during") if pair % 2 == 0 else ("during", "alone"):
                if kind == "during":
                    await rewinding.tell("run", "running")
                    await measure(kind)
                    await rewinding.tell("pause", "paused")
                    await asyncio.sleep(SETTLE_S)  # cancelled reads end
                else:
                    await measure(kind)
    finally:
        recording[0] = False
        counts = await rewinding.stop()
        for viewer in viewers:
            await viewer.close()
    spent["during"]["rewinders"] = counts.pop("cpu_s", None)
    cpu_s = {k: {name: round(x / pairs, 2) for name, x in v.items() if x is not None}
             for k, v in spent.items()}  # fmt: skip
    return {"viewers": len(viewers), "live_channels": len(live), "window_s": window,
            "rewinders": 20, "rewinders_sched": REWINDERS_SCHED,
            "rewinders_only": only, **pooled(windows["alone"], windows["during"]),
            "rewinder_requests": counts, "cpu_s": cpu_s,
            "target_p99_ratio": 1.1}  # fmt: skip


def _add(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Sum ``more``'s numbers into ``into`` key by key."""
    for key, value in more.items():
        if isinstance(value, int | float):
            into[key] = into.get(key, 0) + value


async def run(args: argparse.Namespace) -> dict:
    report: dict[str, Any] = {"machine": machine()}
    with NatsServer() as server:
        nc = await connect(server.url, name="bench-rewind")
        await ensure_store(nc, StoreConfig())
        history = HistoryConfig(max_bytes=4 << 30)
        await ensure_history(nc, history)
        await ensure_meta_history(nc, MetaHistoryConfig("cs", storage="memory"))
        await ensure_arrays(nc, ArraysConfig(history))
        await ensure_rollup(nc, history)
        # history blocks, as a deployment writes them (playback reads them)
        rollup = start_rollup(server.url)
        cases = set(args.case or CASES)
        extra = args.gateway_arg or []
        report["gateway_args"] = extra
        gateway = start_gateway(server.url, *extra)
        try:
            if "at" in cases:
                report["at"] = await at_case(
                    gateway.ws_url, nc, args.rounds, args.repeats
                )
                print("bench-rewind: at done", file=sys.stderr, flush=True)
            uris = _uris("P", 100)
            first, last = await fill_live(nc, uris, args.play_history)
            await _blocks_caught_up(nc, uris, last)
            if "at" in cases:
                report["at"]["before_first"] = await before_first_case(
                    gateway.ws_url, uris, first, args.repeats
                )
            if "play" in cases:
                report["play"] = await play_case(gateway.ws_url, uris, first, 60)
                print("bench-rewind: play done", file=sys.stderr, flush=True)
            if "viewers" in cases:
                # the history on a thread of the gateway (ADR 0039: not the default)
                gateway.stop()
                gateway = start_gateway(server.url, "--no-history-process", *extra)
                pids = _processes(gateway.proc.pid, server.process.pid)
                report["viewers"] = await viewers_case(
                    nc, pids, gateway.ws_url, uris, first / 1e6, last / 1e6, args.window,
                    pairs=args.pairs, only=args.rewinders_only,
                )  # fmt: skip
            if "viewers_history_process" in cases:
                # the history in its own process (the default), at a lower priority
                gateway.stop()
                gateway = start_gateway(server.url, "--history-process", *extra)
                pids = _processes(gateway.proc.pid, server.process.pid)
                report["viewers_history_process"] = await viewers_case(
                    nc, pids, gateway.ws_url, uris, first / 1e6, last / 1e6, args.window,
                    "LP", pairs=args.pairs, only=args.rewinders_only,
                )  # fmt: skip
        finally:
            gateway.stop()
            rollup.stop()
            with contextlib.suppress(Exception):
                await nc.close()
    report["load_avg_1m_end"] = machine()["load_avg_1m"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=360,
                        help="values of each of the 1000 channels in the raw history")  # fmt: skip
    parser.add_argument(
        "--repeats", type=int, default=10, help="at requests timed per moment"
    )
    parser.add_argument("--play-history", type=float, default=120.0,
                        help="seconds of 100 channels at 10 Hz played back at 60x")  # fmt: skip
    parser.add_argument("--window", type=float, default=5.0,
                        help="seconds of live latency measured alone and with the rewinders")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=12,
                        help="alone and beside-the-rewinders windows in turn")  # fmt: skip
    parser.add_argument("--rewinders-only", choices=("at", "play"),
                        help="the rewinders only rewind (an `at` every 2 s) or only "
                             "play back: which of the two the live viewers feel")  # fmt: skip
    parser.add_argument("--case", action="append", choices=CASES,
                        help="run only this case (repeatable; all by default)")  # fmt: skip
    parser.add_argument("--gateway-arg", action="append",
                        help="an argument for the gateways started (repeatable)")  # fmt: skip
    parser.add_argument("--rewinders", help=argparse.SUPPRESS)
    add_save_option(parser)
    args = parser.parse_args()
    if args.rewinders:
        asyncio.run(rewinders(json.loads(args.rewinders)))
        return
    emit("rewind", asyncio.run(run(args)), save=args.save, indent=2)


if __name__ == "__main__":
    main()
