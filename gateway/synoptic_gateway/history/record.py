"""A live record of the bus's values, to check history answers against it (tests
and benchmarks; the gateway itself does not use it).

:class:`LiveRecord` subscribes to every value subject whose last value is small
(arrays and images left out: a Python recorder taking megabytes a second would fall
behind) and keeps the payloads; :func:`check_trace` compares one ``hist`` answer
with the record over the same window, pixel column by pixel column, the columns
made as the history service makes them. Where the record itself missed values
(a channel's ``seq`` jumps: a recorder on a busy machine can lose its connection
as a slow consumer), the span is not compared and the misses are counted.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synoptic_bus.connect import NatsClient
from synoptic_bus.store import fetch_last
from synoptic_schemas import Subjects, decode_value

#: payloads larger than this are not recorded
SMALL = 4096
#: strangers shown with the recorded values around them (:class:`TraceCheck`)
NEAR_SHOWN = 5
#: one recorded value: its source time and number, and the adapter's epoch and
#: per-channel sequence number (``seq`` 1, 2, 3 … within an epoch: a jump says the
#: recorder missed values, e.g. its connection dropped as a slow consumer)
RECORD = np.dtype([("t", "i8"), ("v", "f8"), ("ep", "i8"), ("seq", "i8")])


def numeric(data: bytes) -> tuple[int, float, int, int] | None:
    """``(t, v, ep, seq)`` of a numeric scalar value, ``v`` NaN where it has none
    (a disconnected source, an invalid Tango reading: history keeps those as NaN),
    or None for a value that is not a number (a string, an array)."""
    msg = decode_value(data)
    v = msg["v"]
    if v is None or not msg["c"]:
        number = float("nan")
    elif isinstance(v, np.ndarray) or not isinstance(v, int | float):
        return None
    else:
        number = float(v)
    return int(msg["t"]), number, int(msg["ep"]), int(msg["seq"])


@dataclass
class LiveRecord:
    """Every small value published while it runs, by subject."""

    nc: NatsClient
    prefix: str = "cs"
    payloads: dict[str, list[bytes]] = field(default_factory=lambda: defaultdict(list))
    _subs: list[Any] = field(default_factory=list)
    _until: int = 2**63
    _caught_up: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self, protocols: tuple[str, ...] = ("ca", "pva", "tango")) -> int:
        """Subscribe to the value subjects of ``protocols`` whose last value is
        small; returns how many."""
        snap = await fetch_last(
            self.nc, [f"{self.prefix}.val.{p}.>" for p in protocols], timeout=60
        )
        for subject, data in snap.messages.items():
            if len(data) <= SMALL:
                self._subs.append(
                    await self.nc.subscribe(
                        subject, cb=self._keep, pending_msgs_limit=-1,
                        pending_bytes_limit=1 << 30,
                    )
                )  # fmt: skip
        return len(self._subs)

    async def _keep(self, msg: Any) -> None:
        if len(msg.data) <= SMALL:
            self.payloads[msg.subject].append(msg.data)
            if decode_value(msg.data)["t"] > self._until:
                self._caught_up.set()

    async def stop_after(self, t_ns: int, timeout: float = 60.0) -> None:
        """Wait until a value stamped after ``t_ns`` has been recorded (a recorder
        on a busy machine runs behind), then stop recording."""
        self._until = t_ns
        await asyncio.wait_for(self._caught_up.wait(), timeout)
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs.clear()

    def series(self) -> dict[str, np.ndarray]:
        """Each numeric channel's record, by URI: ``(t, v, ep, seq)`` in time
        order."""
        subjects = Subjects(self.prefix)
        out: dict[str, np.ndarray] = {}
        for subject, payloads in self.payloads.items():
            points = [p for p in map(numeric, payloads) if p is not None]
            numbers = sum(1 for _, v, _, _ in points if v == v)
            if len(points) == len(payloads) and numbers >= 2:
                uri = subjects.parse(subject)[1].uri
                out[uri] = np.sort(np.array(points, RECORD), order="t")
        return out


def missed_spans(
    record: np.ndarray, t0: int, t1: int
) -> tuple[list[tuple[int, int]], int]:
    """The spans ``(t_before, t_after)`` (ns, exclusive) reaching into ``[t0, t1]``
    in which the record missed values (between two recorded values of one epoch
    whose ``seq`` jumps), and how many values it missed there."""
    by_seq = np.sort(record, order=["ep", "seq"])
    step = np.diff(by_seq["seq"])
    lo = np.minimum(by_seq["t"][:-1], by_seq["t"][1:])
    hi = np.maximum(by_seq["t"][:-1], by_seq["t"][1:])
    jump = (step > 1) & (np.diff(by_seq["ep"]) == 0) & (hi > t0) & (lo < t1)
    spans = [(int(a), int(b)) for a, b in zip(lo[jump], hi[jump], strict=True)]
    return spans, int(np.sum(step[jump] - 1))


def columns(t: np.ndarray, t0: int, t1: int, px: int) -> np.ndarray:
    """The pixel column of each time (ns), as the history service buckets them."""
    buckets = px - 1
    width = max((t1 - t0) / buckets, 1.0)
    return np.minimum(((t - t0) / width).astype(np.int64), buckets - 1)


@dataclass
class TraceCheck:
    """How one answer compares with the record over ``[t0, t1]``."""

    uri: str
    #: recorded values in the window
    recorded: int
    #: answered points that are no recorded value (time within 1 µs, same value)
    strangers: list[tuple[float, float]]
    #: pixel columns with recorded numbers, and those whose min and max differ
    columns: int
    columns_differing: list[int]
    #: the share of the record's span (first to last recorded value in the
    #: window) that the answer spans
    coverage: float
    #: values the recorder missed in the window (``seq`` jumps): answered points
    #: and pixel columns within those spans are not compared
    missed: int = 0
    #: beside each of the first strangers, the recorded values around its time
    #: ``(t ms, v, ep, seq)``: what a failed comparison is read against
    near: list[list[tuple[float, float, int, int]]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.strangers and not self.columns_differing


def _alike(
    record: np.ndarray, at: np.ndarray, t_ms: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """Whether each answered point equals the recorded value ``record[at]``: its
    time within 1 µs, the same number (or both NaN)."""
    want = record["v"][at]
    return (np.abs(record["t"][at] / 1e6 - t_ms) < 1e-3) & (
        (want == v) | (np.isnan(want) & np.isnan(v))
    )


def check_trace(
    uri: str, record: np.ndarray, t_ms: np.ndarray, v: np.ndarray,
    t0: int, t1: int, px: int,
) -> TraceCheck:  # fmt: skip
    """Compare an answer (times in ms, values) with ``record`` (see
    :class:`TraceCheck`)."""
    inside = record[(record["t"] >= t0) & (record["t"] <= t1)]
    if len(inside) == 0 or len(t_ms) == 0:
        return TraceCheck(uri, len(inside), [], 0, [], 0.0 if len(inside) else 1.0)
    gaps, missed = missed_spans(record, t0, t1)
    seen = np.ones(len(t_ms), bool)
    for a, b in gaps:  # an answered point the recorder could not have seen
        seen &= ~((t_ms > a / 1e6) & (t_ms < b / 1e6))
    t_ms, v = t_ms[seen], v[seen]
    rec_ms = inside["t"] / 1e6
    at = np.clip(np.searchsorted(rec_ms, t_ms), 0, len(inside) - 1)
    before = np.clip(at - 1, 0, len(inside) - 1)
    nearer = np.where(np.abs(rec_ms[before] - t_ms) < np.abs(rec_ms[at] - t_ms),
                      before, at)  # fmt: skip
    same = _alike(inside, nearer, t_ms, v)
    for i in np.flatnonzero(~same):  # values recorded at the same time: any one
        lo, hi = np.searchsorted(rec_ms, [t_ms[i] - 1e-3, t_ms[i] + 1e-3])
        for j in range(lo, hi):
            if _alike(inside, np.array([j]), t_ms[i : i + 1], v[i : i + 1])[0]:
                nearer[i], same[i] = j, True
                break
    strangers = [
        (float(a), float(b)) for a, b in zip(t_ms[~same], v[~same], strict=True)
    ]
    near = [
        [(float(r["t"]) / 1e6, float(r["v"]), int(r["ep"]), int(r["seq"]))
         for r in inside[max(i - 1, 0) : i + 2]]
        for i in nearer[~same][:NEAR_SHOWN]
    ]  # fmt: skip
    want_col = columns(inside["t"], t0, t1, px)
    got_col = columns(inside["t"][nearer[same]], t0, t1, px)
    got_v = v[same]
    blind: set[int] = set()  # pixel columns the record cannot tell in full
    for a, b in gaps:
        first, last = columns(np.array([a, b], np.int64), t0, t1, px)
        blind.update(range(int(first), int(last) + 1))
    differing, counted = [], 0
    for col in np.unique(want_col):
        if int(col) in blind:
            continue
        want = inside["v"][want_col == col]
        if np.isnan(want).all():
            continue
        counted += 1
        got = got_v[got_col == col]
        if not len(got) or np.isnan(got).all():
            differing.append(int(col))
            continue
        if (np.nanmin(got), np.nanmax(got)) != (np.nanmin(want), np.nanmax(want)):
            differing.append(int(col))
    span = float(rec_ms[-1] - rec_ms[0])
    spanned = float(np.max(t_ms) - np.min(t_ms)) if len(t_ms) else 0.0
    return TraceCheck(
        uri, len(inside), strangers, counted, differing,
        1.0 if span == 0 else min(spanned / span, 1.0), missed, near,
    )  # fmt: skip
