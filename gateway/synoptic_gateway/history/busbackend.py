"""Recent history from the bus: history blocks (``CS_ROLL``, :mod:`.blocks`) and
the raw history stream (``CS_HIST``) for what no block covers, over the gateway's
own second NATS connection: megabytes of history never queue in front of live
messages on the live connection. Without blocks (no rollup stream) every value
comes from the raw history.

What the bus holds is told per channel: the windows its blocks cover, and the raw
history from its oldest message on (it keeps every value from then, up to its
message limit). The rest of the range is the answer's ``missing``: the history
service asks the archive for exactly that."""

from __future__ import annotations

import asyncio
import logging

import numpy as np

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import history_stream_name, oldest, read_range
from synoptic_bus.rollup import rollup_stream_name
from synoptic_bus.store import StoreError
from synoptic_gateway.history.backend import ChannelHistory, HistoryRead
from synoptic_gateway.history.blocks import read_blocks
from synoptic_schemas import Subjects
from synoptic_schemas.frames import ErrorCode
from synoptic_schemas.series import Columns, decode_columns
from synoptic_schemas.subjects import subject_tail

log = logging.getLogger(__name__)


class BusHistory:
    """The history stream as a :class:`HistoryBackend`."""

    name = "bus"
    resolution_ns = 1  # stamped to the nanosecond

    def __init__(
        self, url: str, prefix: str, client_name: str, *, blocks: bool = True
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._subjects = Subjects(prefix)
        self._stream = history_stream_name(prefix)
        self._roll_stream = rollup_stream_name(prefix)
        self._blocks = blocks
        #: messages read from the bus, in all
        self.messages = 0
        self._client_name = client_name
        self._nc: NatsClient | None = None

    async def start(self) -> None:
        self._nc = await connect(self._url, name=self._client_name)

    async def close(self) -> None:
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.close()

    def connection(self) -> NatsClient:
        """The history's own NATS client; raises :class:`StoreError` while the
        bus is down."""
        if self._nc is None or not self._nc.is_connected:
            raise StoreError("the bus is down")
        return self._nc

    async def raw_from(self) -> int | None:
        """When the raw history's oldest message was stored (ns), or None when it
        is empty or cannot be read."""
        try:
            return await oldest(self.connection(), self._stream)
        except StoreError as exc:
            log.debug("history stream %s: %s", self._stream, exc)
            return None

    async def read(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        if self._blocks:
            try:
                return await self._read_blocks(q)
            except StoreError as exc:  # no rollup stream: every value raw
                log.debug("history blocks on %s: %s", self._roll_stream, exc)
            except TimeoutError:
                return self._all(q, _timeout(q))
        return await self._read_raw(q)

    def _all(self, q: HistoryRead, error: tuple[str, str]) -> dict[str, ChannelHistory]:
        return {c.uri: ChannelHistory(error=error) for c in q.channels}

    async def _read_blocks(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        by_tail = {subject_tail(c): c.uri for c in q.channels}
        async with asyncio.timeout(q.timeout):
            read, raw_from = await asyncio.gather(
                read_blocks(
                    self.connection(), self._roll_stream, self._stream, self._prefix,
                    list(by_tail), q.t0_ns, q.t1_ns, max_values=q.max_points,
                    timeout=q.timeout,
                ),
                self.raw_from(),
            )  # fmt: skip
        self.messages += read.messages
        out: dict[str, ChannelHistory] = {}
        for tail, uri in by_tail.items():
            cols = read.columns.get(tail) or Columns.empty()
            entry = ChannelHistory(cols)
            missing = before(read.gaps.get(tail, []), raw_from)
            entry.missing = until_held(missing, cols.t)  # time-ordered
            if read.truncated:
                entry.error = _truncated(q)
            out[uri] = entry
        return out

    async def _read_raw(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        by_subject = {self._subjects.hist(c): c.uri for c in q.channels}
        parts: dict[str, list[Columns]] = {uri: [] for uri in by_subject.values()}

        def on_batch(payloads: dict[str, list[bytes]]) -> None:
            for subject, batch in payloads.items():
                uri = by_subject.get(subject)
                if uri is not None:
                    parts[uri].append(decode_columns(batch))

        whole = [(q.t0_ns, q.t1_ns + 1)]
        try:
            read, raw_from = await asyncio.gather(
                read_range(
                    self.connection(), self._stream, list(by_subject), q.t0_ns,
                    q.t1_ns, max_msgs=q.max_points, timeout=q.timeout,
                    on_batch=on_batch,
                ),
                self.raw_from(),
            )  # fmt: skip
        except TimeoutError:
            return self._all(q, _timeout(q))
        except StoreError as exc:
            error = (ErrorCode.UNAVAILABLE, f"the bus's history: {exc}")
            return {uri: ChannelHistory(error=error, missing=whole) for uri in parts}
        out: dict[str, ChannelHistory] = {}
        for uri, cols in parts.items():
            entry = ChannelHistory(
                Columns.concat(cols), missing=before(whole, raw_from)
            )
            if read.truncated:
                entry.error = _truncated(q)
            out[uri] = entry
        self.messages += read.count
        return out


def before(gaps: list[tuple[int, int]], raw_from: int | None) -> list[tuple[int, int]]:
    """The parts of ``gaps`` (no block covers them) that the raw history does not
    hold either: those before its oldest message (all of them when it is empty)."""
    if raw_from is None:
        return list(gaps)
    return [(s, min(e, raw_from)) for s, e in gaps if s < raw_from]


def until_held(gaps: list[tuple[int, int]], held: np.ndarray) -> list[tuple[int, int]]:
    """``gaps`` each cut where the bus's first value of the channel within it is
    (``held``: the source times of the values the bus answered with, sorted).

    A gap's values read from the raw history are held from the first one on: the
    raw history drops its oldest messages first, so it holds every value stored
    after one it holds. ``before`` cuts a gap at the raw history's oldest *store*
    time, which comes a publish's latency after that value's source time: the
    archive is not asked for the span between. The gap before the first block is
    cut the same way (a value that reached the rollup late sits in a block whose
    window starts after it)."""
    if not len(held):
        return gaps
    out = []
    for s, e in gaps:
        i = int(np.searchsorted(held, s, side="left"))
        if i < len(held) and held[i] < e:
            e = int(held[i])
        if e > s:
            out.append((s, e))
    return out


def _timeout(q: HistoryRead) -> tuple[str, str]:
    return (ErrorCode.TIMEOUT, f"the bus's history took over {q.timeout:g} s")


def _truncated(q: HistoryRead) -> tuple[str, str]:
    return (
        ErrorCode.TRUNCATED,
        f"more than {q.max_points} values in the range: read up to the limit; "
        "ask for a shorter range",
    )
