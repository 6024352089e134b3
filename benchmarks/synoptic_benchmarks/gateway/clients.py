"""The measuring clients of the gateway benchmark, each run in a process of its own
(``fanout worker`` / ``fanout probe``): gateway clients that count delivered
updates, gaps and latency (:func:`worker`), and a raw NATS subscriber that measures
what any subscriber gets before a gateway (:func:`probe`)."""

from __future__ import annotations

import asyncio
import time
from array import array
from operator import itemgetter
from typing import Any

import numpy as np


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


async def worker(spec: dict[str, Any]) -> dict[str, Any]:
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


async def probe(spec: dict[str, Any]) -> dict[str, Any]:
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
