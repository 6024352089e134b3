"""Values at a moment older than the raw history: from the history blocks
(``CS_ROLL``), then from the archive (HDB++).

The raw history (``CS_HIST``) keeps every value for a while (its byte budget and
max age); the rollup's blocks keep each channel's times, numbers and severities
longer, and the archive longer still. For a channel the raw history no longer
reaches back to at a moment, its value then is the last one at or before it in
the closed blocks (the block of the window holding the moment, stored up to
:data:`~synoptic_bus.rollup.MAX_SPAN_S` and the rollup's grace after it, or the
last block stored before the moment), else the archive's last row at or before
it. Blocks and archive keep numbers only (``v`` NaN in a block: a string, or a
disconnection): such a value is not shown, and nothing older in its place.

Times are source times (``t`` of the value) where the raw history's are the
bus's: the two differ by the adapter's publishing delay.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import read_range
from synoptic_bus.moment import last_at
from synoptic_bus.rollup import MAX_SPAN_S, open_stream_name
from synoptic_bus.store import fetch_last
from synoptic_schemas.blocks import decode_block
from synoptic_schemas.errors import ContractError

_S = 1_000_000_000
#: A closed block is stored at most this long after its window ends (the
#: rollup's grace and tick, and slack for a busy machine).
CLOSE_LAG_NS = 10 * _S
#: Metadata types whose values are whole numbers (a block keeps them as float64).
_WHOLE = {"i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "enum", "state"}


@dataclass(frozen=True)
class Point:
    """One kept value: source time (ns), number (NaN: not a number), severity."""

    t: int
    v: float
    sev: int

    def later(self, other: Point | None) -> bool:
        return other is None or self.t >= other.t


def value_map(point: Point, meta: dict[str, Any] | None) -> dict[str, Any]:
    """A kept point as a value message map (``v`` typed by the metadata's ``dt``;
    no ``seq``/``ep``: blocks and the archive keep none)."""
    v: Any = point.v
    dt = (meta or {}).get("dt")
    if dt == "bool":
        v = bool(v)
    elif dt in _WHOLE and float(v).is_integer():
        v = int(v)
    return {"ver": 1, "v": v, "t": point.t, "sev": point.sev, "st": "", "c": True}


def is_number(point: Point) -> bool:
    return not math.isnan(point.v)


async def last_in_blocks(
    nc: NatsClient,
    roll_stream: str,
    prefix: str,
    tails: Sequence[str],
    at_ns: int,
    *,
    timeout: float,
) -> dict[str, Point]:
    """Per channel subject tail, the last value at or before ``at_ns`` (source
    time) in its closed blocks and its growing block; none where they hold
    none. Raises :class:`~synoptic_bus.store.StoreError`, :class:`TimeoutError`."""
    if not tails:
        return {}
    closed, growing = f"{prefix}.roll.0.", f"{prefix}.roll.open."
    best: dict[str, Point] = {}

    def take(tail: str, data: bytes) -> None:
        try:
            block = decode_block(data)
        except ContractError:
            return
        t = block.cols.t
        i = int(np.searchsorted(t, at_ns, side="right")) - 1
        if i < 0:
            return
        point = Point(int(t[i]), float(block.cols.v[i]), int(block.cols.sev[i]))
        if point.later(best.get(tail)):
            best[tail] = point

    def on_blocks(payloads: dict[str, list[bytes]]) -> None:
        for subject, batch in payloads.items():
            for data in batch:
                take(subject[len(closed) :], data)

    subjects = [closed + t for t in tails]
    # first (alone): raises at once where no rollup made the stream
    before = await last_at(nc, roll_stream, subjects, at_ns, timeout=timeout)
    _, open_blocks = await asyncio.gather(
        read_range(
            nc, roll_stream, subjects, at_ns + 1,
            at_ns + int(MAX_SPAN_S * _S) + CLOSE_LAG_NS,
            max_msgs=8 * len(tails) + 64, timeout=timeout, on_batch=on_blocks,
        ),
        fetch_last(nc, [growing + t for t in tails], stream=open_stream_name(prefix),
                   timeout=timeout),
    )  # fmt: skip
    for subject, stored in before.items():
        take(subject[len(closed) :], stored.data)
    for subject, data in open_blocks.messages.items():
        take(subject[len(growing) :], data)
    return best
