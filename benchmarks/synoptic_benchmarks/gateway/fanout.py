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
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from array import array
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_udp_tcp_port
from synoptic_gateway.testing import GatewayProc, ca_env, start_gateway

RATE_HZ = 10.0
WORKER_CLIENTS = 25  # clients per worker process
#: The synthetic publisher writes after every this many encoded records of a tick,
#: as the adapters' ``Publisher`` does: it hands each encoded record to nats-py and
#: yields to the loop every 2000 (``publisher._YIELD_EVERY``), when nats-py's
#: flusher writes what is pending. (0: one write after encoding the whole tick.)
PUBLISH_CHUNK = 2000


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


# --------------------------------------------------------------------- sources


def _synoptic() -> str:
    beside = Path(sys.executable).parent / "synoptic"
    return str(beside) if beside.exists() else "synoptic"


def _has_adapters() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "sim" for ep in entry_points(group="synoptic.commands"))


class Source:
    """The processes that put N counting channels at 10 Hz on NATS."""

    def __init__(
        self,
        kind: str,
        records: int,
        nats_url: str,
        workdir: Path,
        chunk: int = PUBLISH_CHUNK,
        storage: str = "memory",
    ) -> None:
        self.kind = kind
        self.records = records
        self.procs: dict[str, Process] = {}
        prefix = "BENCH:"
        width = max(5, len(str(records - 1)))
        self.uris = [f"ca://{prefix}CNT:{i:0{width}d}" for i in range(records)]
        if kind == "synthetic":
            argv = [sys.executable, "-m", "synoptic_benchmarks.gateway.fanout", "publish",
                    "--nats", nats_url, "--records", str(records),
                    "--chunk", str(chunk), "--storage", storage]  # fmt: skip
            self.procs["publisher"] = Process("publisher", argv)
            self.procs["publisher"].wait_for(r"publisher ready", 30)
            return
        port = free_udp_tcp_port()
        env = ca_env(port)
        ioc = [_synoptic(), "sim", "ioc", "--records", str(records), "--rate", "10",
               "--prefix", prefix, "--port", str(port), "--no-extras"]  # fmt: skip
        self.procs["ioc"] = Process("ioc", ioc, env=env, keep_stdin_open=True)
        self.procs["ioc"].wait_for(r"sim ioc ready", 60)
        config = workdir / f"adapter-{records}.yaml"
        lines = ["id: bench-epics", "nats:", f"  url: {nats_url}",
                 f"  storage: {storage}", "channels:"]  # fmt: skip
        config.write_text("\n".join(lines + [f"  - {u}" for u in self.uris]) + "\n")
        adapter = [_synoptic(), "adapter", "epics", "--config", str(config)]
        self.procs["adapter"] = Process("adapter", adapter, env=env)
        self.procs["adapter"].wait_for(r"adapter \S+ ready", 120)

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            proc.stop()


async def _publish(
    nats_url: str, records: int, chunk: int = PUBLISH_CHUNK, storage: str = "memory"
) -> None:
    """The synthetic source: N counters, all published every 100 ms.

    Each tick is one IOC scan: one time stamp ``t`` for all N records, taken before
    the first is encoded. Speaks the NATS text protocol on a plain socket and writes
    the PUBs of every ``chunk`` records in one call (~10x less CPU than a publish
    call per message), so that the source, not the gateway, is never what saturates
    on a small machine; ``chunk`` 0 writes the whole tick at once."""
    from urllib.parse import urlparse

    from synoptic_bus.connect import connect
    from synoptic_bus.store import StoreConfig, ensure_store
    from synoptic_schemas import Subjects, encode, parse_channel
    from synoptic_schemas.codec import encode_value

    nc = await connect(nats_url, name="bench-publisher")
    await ensure_store(nc, StoreConfig(storage=storage))  # as an adapter does
    await nc.close()
    url = urlparse(nats_url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    await reader.readline()  # INFO
    writer.write(
        b'CONNECT {"verbose":false,"pedantic":false,"name":"bench-pub"}\r\nPING\r\n'
    )
    while not (await reader.readline()).startswith(b"PONG"):
        pass

    async def answer_pings() -> None:
        while line := await reader.readline():
            if line.startswith(b"PING"):
                writer.write(b"PONG\r\n")

    pinger = asyncio.create_task(answer_pings())
    subjects = Subjects()
    width = max(5, len(str(records - 1)))
    names = [subjects.val(parse_channel(f"ca://BENCH:CNT:{i:0{width}d}")).encode()
             for i in range(records)]  # fmt: skip
    ep = int(time.time() * 1000)
    hb_subject = subjects.hb("bench-publisher").encode()
    print("publisher ready", flush=True)
    seq = 0
    next_tick = time.monotonic()
    first_ms: list[float] = []  # per tick: stamp -> first write, stamp -> last
    last_ms: list[float] = []
    while not pinger.done():
        seq += 1
        t = time.time_ns()
        parts = []
        every = chunk or records + 1
        if seq % int(RATE_HZ) == 1:  # a heartbeat a second, as an adapter sends
            beat = encode({"ver": 1, "id": "bench-publisher", "proto": "ca", "ep": ep,
                           "t": t, "period": 1.0, "n": records, "conn": records})  # fmt: skip
            parts.append(b"PUB %s %d\r\n%s\r\n" % (hb_subject, len(beat), beat))
        for n, subject in enumerate(names, 1):
            # the adapters' own encoder (synoptic_adapters.publisher)
            payload = encode_value(float(seq), t, 0, "NO_ALARM", seq, ep, True)
            parts.append(b"PUB %s %d\r\n%s\r\n" % (subject, len(payload), payload))
            if n == every:
                writer.write(b"".join(parts))
                parts.clear()
                every += chunk
                if len(first_ms) < len(last_ms) + 1:
                    first_ms.append((time.time_ns() - t) / 1e6)
        if parts:
            writer.write(b"".join(parts))
        last_ms.append((time.time_ns() - t) / 1e6)
        if len(first_ms) < len(last_ms):
            first_ms.append(last_ms[-1])
        if len(last_ms) == int(RATE_HZ):  # one line a second, for the runner
            print("publisher ticks " + json.dumps({"at": t / 1e9, "first_ms": first_ms,
                  "last_ms": last_ms}), flush=True)  # fmt: skip
            first_ms, last_ms = [], []
        await writer.drain()
        next_tick += 1 / RATE_HZ
        await asyncio.sleep(max(0.0, next_tick - time.monotonic()))


def _publisher_stages(source: Source, start: float, end: float) -> dict[str, Any]:
    """Stamp -> first / last write of the synthetic publisher's ticks in [start,
    end) (ms, p50 and max): the source's own share of a burst's latency."""
    proc = source.procs.get("publisher")
    if proc is None:
        return {}
    first: list[float] = []
    last: list[float] = []
    for line in proc.output().splitlines():
        if line.startswith("publisher ticks "):
            ticks = json.loads(line.removeprefix("publisher ticks "))
            if start <= ticks["at"] < end:
                first += ticks["first_ms"]
                last += ticks["last_ms"]
    if not last:
        return {}
    return {
        "first_write_ms": {"p50": round(float(np.median(first)), 2),
                           "max": round(max(first), 2)},
        "last_write_ms": {"p50": round(float(np.median(last)), 2),
                          "max": round(max(last), 2)},
    }  # fmt: skip


async def _probe(spec: dict[str, Any]) -> dict[str, Any]:
    """A raw NATS subscriber of every value subject: latency = the read that
    brought a message - its stamp ``t``, for the messages read in [start, end).
    What any subscriber gets from the source and nats-server, before a gateway."""
    from urllib.parse import urlparse

    from synoptic_schemas import Subjects
    from synoptic_schemas.frames import value_order

    url = urlparse(spec["nats"])
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    await reader.readline()  # INFO
    subject = Subjects().prefix + ".val.>"
    writer.write(b'CONNECT {"verbose":false,"pedantic":false,"name":"bench-probe"}'
                 b"\r\nSUB %s 1\r\nPING\r\n" % subject.encode())  # fmt: skip
    while not (await reader.readline()).startswith(b"PONG"):
        pass
    print("probe ready", flush=True)
    start_ns, end_ns = int(spec["start"] * 1e9), int(spec["end"] * 1e9)
    latencies = array("q")
    arrivals = array("q")
    buf = b""
    while chunk := await reader.read(1 << 16):
        now = time.time_ns()
        if now >= end_ns:
            break
        buf = buf + chunk if buf else chunk
        pos = 0
        while (eol := buf.find(b"\r\n", pos)) >= 0:
            if buf.startswith(b"MSG ", pos):
                stop = eol + 2 + int(buf[buf.rfind(b" ", pos, eol) + 1 : eol])
                if stop + 2 > len(buf):
                    break  # the rest of the payload is still to come
                if now >= start_ns:
                    latencies.append(now - value_order(buf[eol + 2 : stop])[2])
                    arrivals.append(now)
                pos = stop + 2
            else:
                if buf.startswith(b"PING", pos):
                    writer.write(b"PONG\r\n")
                pos = eol + 2
        buf = buf[pos:]
    writer.close()
    lat_ns = np.frombuffer(latencies, dtype=np.int64)
    ms = lat_ns / 1e6
    slices = slice_p99s_ms(np.frombuffer(arrivals, dtype=np.int64), lat_ns, start_ns)
    return {"count": len(ms),
            "p50": round(float(np.percentile(ms, 50)), 1) if len(ms) else None,
            "p99": round(float(np.percentile(ms, 99)), 1) if len(ms) else None,
            "p99_median_of_1s": round(float(np.median(slices)), 1) if slices else None,
            "slice_p99_ms": slices}  # fmt: skip


# --------------------------------------------------------------------- workers


class UpdateCounter:
    """One client's bookkeeping of the updates it receives: delivered, gaps (a
    ``seq`` jump within an adapter epoch: lost after the adapter), value gaps (a
    skipped count: lost anywhere) and the latency of every update counted.

    Per frame with numpy (~0.3 µs per update instead of ~1.4 in a Python loop: the
    bench's own bookkeeping shares the cores with what it measures); a frame that
    holds a channel twice or a non-numeric value takes the per-update loop."""

    def __init__(self, channels: int) -> None:
        self.delivered = 0
        self.gaps = 0
        self.value_gaps = 0
        self.latency_parts: list[np.ndarray] = []  # ns, per counted frame
        self.arrivals: list[int] = []  # received_ns of each counted frame
        #: per counted frame: its arrival -> decoded and handed to the callback (ns)
        self.decode_lags: list[int] = []
        self._seen = np.zeros(channels, dtype=bool)
        self._ep = np.zeros(channels, dtype=np.int64)
        self._seq = np.zeros(channels, dtype=np.int64)
        self._count = np.full(channels, np.nan)  # NaN: not a number

    def frame(
        self, received_ns: int, indexes: list[int], values: list[Any], counted: bool
    ) -> None:
        """Take one frame's updates (``counted``: it arrived in the window)."""
        n = len(indexes)
        if n == 0:
            return
        raw_counts = list(map(_GET_V, values))
        if not set(map(type, raw_counts)) <= _NUMBERS or len(set(indexes)) < n:
            for i, v in zip(indexes, values, strict=True):
                self._one(i, v, counted)
            if counted:
                self.delivered += n
                self.latency_parts.append(
                    received_ns - np.fromiter(map(_GET_T, values), np.int64, n)
                )
                self.arrivals.append(received_ns)
            return
        counts = np.array(raw_counts, dtype=np.float64)
        idx = np.array(indexes, dtype=np.intp)
        eps = np.fromiter(map(_GET_EP, values), np.int64, n)
        seqs = np.fromiter(map(_GET_SEQ, values), np.int64, n)
        if counted:
            self.delivered += n
            self.latency_parts.append(
                received_ns - np.fromiter(map(_GET_T, values), np.int64, n)
            )
            self.arrivals.append(received_ns)
            seen = self._seen[idx]
            prev_seq = self._seq[idx]
            lost = seen & (self._ep[idx] == eps) & (seqs > prev_seq + 1)
            self.gaps += int((seqs - prev_seq - 1)[lost].sum())
            prev_count = self._count[idx]
            skipped = seen & (counts > prev_count + 1)  # NaN compares False
            self.value_gaps += int(
                (counts - prev_count - 1)[skipped].astype(np.int64).sum()
            )
        self._seen[idx] = True
        self._ep[idx] = eps
        self._seq[idx] = seqs
        self._count[idx] = counts

    def _one(self, i: int, v: dict[str, Any], counted: bool) -> None:
        ep, seq, count = v["ep"], v["seq"], v["v"]
        if counted and self._seen[i]:
            if self._ep[i] == ep and seq > self._seq[i] + 1:
                self.gaps += int(seq - self._seq[i] - 1)
            before = self._count[i]
            if isinstance(count, float | int) and count > before + 1:
                self.value_gaps += int(count - before - 1)
        self._seen[i] = True
        self._ep[i] = ep
        self._seq[i] = seq
        self._count[i] = count if isinstance(count, float | int) else np.nan

    def latencies_ns(self, decoded: bool = False) -> np.ndarray:
        """Every counted update's latency, in arrival order; ``decoded``: taken
        when its frame had been decoded (the older definition, kept to compare
        with results taken that way)."""
        if not self.latency_parts:
            return np.zeros(0, dtype=np.int64)
        if decoded:
            return np.concatenate(
                [p + lag for p, lag in zip(self.latency_parts, self.decode_lags,
                                           strict=True)]
            )  # fmt: skip
        return np.concatenate(self.latency_parts)

    def arrivals_ns(self) -> np.ndarray:
        """The arrival of every counted update (its frame's), as latencies_ns."""
        sizes = [len(part) for part in self.latency_parts]
        return np.repeat(np.array(self.arrivals, dtype=np.int64), sizes)


def slice_p99s_ms(
    arrivals_ns: np.ndarray, latencies_ns: np.ndarray, start_ns: int
) -> list[float]:
    """The p99 latency (ms) of the updates that arrived in each second of the
    window: their median says what a typical second looked like, however many
    seconds another process took the cores from the bench (the shared machine)."""
    if not len(latencies_ns):
        return []
    second = (arrivals_ns - start_ns) // 1_000_000_000
    order = np.argsort(second, kind="stable")
    second, latencies = second[order], latencies_ns[order]
    bounds = np.flatnonzero(np.diff(second)) + 1
    return [round(float(np.percentile(part, 99)) / 1e6, 1)
            for part in np.split(latencies, bounds) if len(part) >= 100]  # fmt: skip


_NUMBERS = frozenset({float, int, bool})  # what counts (None, text, arrays do not)
_GET_V, _GET_T = itemgetter("v"), itemgetter("t")
_GET_EP, _GET_SEQ = itemgetter("ep"), itemgetter("seq")


async def _worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``len(spec['sets'])`` clients; count within [start, end).

    Latency of an update = the arrival of its frame at this process
    (``GatewayClient.received_ns``, taken before the frame is decoded) minus its
    source stamp ``t``, for every update of the window. ``decode_lags`` = arrival
    → the frame decoded and handed to the callback, once per frame (the client's
    own share: waiting behind earlier frames, then decoding)."""
    from synoptic_gateway.client import GatewayClient

    start_ns, end_ns = int(spec["start"] * 1e9), int(spec["end"] * 1e9)
    counters: list[UpdateCounter] = []
    opens: list[float] = []
    clients: list[GatewayClient] = []
    subs: list[Any] = []

    def make_handler(channels: int) -> Any:
        counter = UpdateCounter(channels)
        counters.append(counter)

        def on_update(sub: Any, indexes: list[int], values: list[Any]) -> None:
            received = sub.client.received_ns
            counted = start_ns <= received < end_ns
            if counted and indexes:
                counter.decode_lags.append(time.time_ns() - received)
            counter.frame(received, indexes, values, counted)

        return on_update

    for uris in spec["sets"]:
        client = GatewayClient(spec["url"], max_queue=None)
        started = time.perf_counter()
        await client.connect()
        sub = await client.subscribe(uris, on_update=make_handler(len(uris)))
        subs.append(sub)
        opens.append(time.perf_counter() - started)
        assert len(sub.channels) == len(uris)
        clients.append(client)
    print("subscribed", flush=True)
    await asyncio.sleep(max(0.0, spec["end"] - time.time()) + 0.2)
    for client in clients:
        await client.close()
    latencies = np.concatenate([c.latencies_ns() for c in counters])
    arrivals = np.concatenate([c.arrivals_ns() for c in counters])
    decoded = np.concatenate([c.latencies_ns(decoded=True) for c in counters])
    step = max(1, len(latencies) // 20000)  # evenly over the whole window
    return {"delivered": sum(c.delivered for c in counters),
            "gaps": sum(c.gaps for c in counters),
            "value_gaps": sum(c.value_gaps for c in counters),
            "missed_reported": sum(sub.missed for sub in subs),
            "reconnects": sum(c.connects - 1 for c in clients), "opens": opens,
            "latencies": (latencies[::step] / 1e9).tolist(),
            "slice_p99_ms": slice_p99s_ms(arrivals, latencies, start_ns),
            "latencies_decoded": (decoded[::step] / 1e9).tolist(),
            # the older sample, kept to compare with results taken that way: the
            # first 200 000 updates of the worker (all clients), after the decode
            "latencies_first_200k": (decoded[:200_000:10] / 1e9).tolist(),
            "decode_lags": [x / 1e9 for c in counters for x in c.decode_lags]}  # fmt: skip


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
        "source_ms": _publisher_stages(source, start, end),
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
        result = json.dumps(uvloop.run(_worker(spec)))
        out.write_text(result)
        print(f"result in {out}", flush=True)
        return 0
    if args.cmd == "probe":
        import uvloop

        spec = json.loads(Path(args.spec).read_text())
        out = Path(args.spec).with_suffix(".result.json")
        out.write_text(json.dumps(uvloop.run(_probe(spec))))
        print(f"result in {out}", flush=True)
        return 0
    if args.cmd == "publish":
        import uvloop

        uvloop.run(_publish(args.nats, args.records, args.chunk, args.storage))
        return 0
    kind = args.source
    if kind == "auto":
        kind = "ioc" if _has_adapters() and shutil.which(_synoptic()) else "synthetic"
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
