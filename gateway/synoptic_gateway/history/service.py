"""The ``hist`` request: checks and limits, each channel's split between the bus
(what its blocks and raw history hold) and the archive (the rest), the
reduction, and the answer encoded once.

Limits (settings, announced in ``hello``): channels per request, range, plot
width, values read per request, points per answer, requests in flight per socket
and per gateway, and a deadline per request. A request over a limit is answered
with one ``err``; a channel that cannot be served gets its own error in the
answer while the others are drawn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import numpy as np

from synoptic_bus.store import StoreError
from synoptic_gateway.history.backend import ChannelHistory, HistoryBackend, HistoryRead
from synoptic_gateway.history.blocks import covered
from synoptic_gateway.history.budget import CpuBudget
from synoptic_gateway.history.moment import MomentReader
from synoptic_gateway.history.playback import StretchReader
from synoptic_gateway.history.reduce import reduce_columns
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_schemas import ChannelError, frames, parse_channel
from synoptic_schemas.channels import Channel
from synoptic_schemas.frames import ErrorCode, FrameError
from synoptic_schemas.series import Columns

log = logging.getLogger(__name__)
T = TypeVar("T")

_MS = 1_000_000


class HistoryService:
    """Answers ``hist`` requests from a bus backend and an optional archive."""

    def __init__(
        self,
        settings: Settings,
        bus: HistoryBackend,
        archive: HistoryBackend | None = None,
        moments: MomentReader | None = None,
        stretches: StretchReader | None = None,
    ) -> None:
        self._settings = settings
        self._bus = bus
        self._archive = archive
        self._moments = moments or MomentReader(settings, _no_bus)
        self._stretches = stretches or StretchReader(settings, _no_bus)
        self._slots = asyncio.Semaphore(settings.hist_concurrency)
        #: the CPU share of one core the history process's work keeps to
        #: (``hist_cpu``; ADR 0037): none on the gateway's thread, where what the
        #: live loop waits for is the GIL, not a CPU
        self.budget = CpuBudget(settings.hist_cpu if settings.hist_process else 0)
        self.requests = 0
        self.points_out = 0
        #: values read from the backends, in all (before the reduction)
        self.values_in = 0

    async def start(self) -> None:
        for backend in (self._bus, self._archive):
            if backend is not None:
                await backend.start()

    async def close(self) -> None:
        for backend in (self._bus, self._archive):
            if backend is not None:
                await backend.close()

    def _check(
        self, frame: dict[str, Any], principal: Principal
    ) -> tuple[int, int, int, list[str], dict[str, Channel], dict[str, ChannelHistory]]:
        """Request-level limits (raise) and per-channel checks (entries)."""
        s = self._settings
        req_id = frame["id"]
        uris: list[str] = frame["ch"]
        if len(uris) > s.hist_max_channels:
            raise FrameError(
                ErrorCode.TOO_MANY_CHANNELS,
                f"{len(uris)} channels in one history request exceed the limit of "
                f"{s.hist_max_channels}",
                req_id=req_id,
            )
        t0_ns, t1_ns = int(frame["t0"] * _MS), int(frame["t1"] * _MS)
        if t1_ns - t0_ns > s.hist_max_range * 1e9:
            raise FrameError(
                ErrorCode.BAD_RANGE,
                f"a range of {(t1_ns - t0_ns) / 86400e9:.1f} days exceeds the limit "
                f"of {s.hist_max_range / 86400:g} days",
                req_id=req_id,
            )
        budget = max(s.hist_max_answer_points // (2 * len(uris)), 1)
        px = min(frame["px"], s.hist_max_px, budget)
        channels: dict[str, Channel] = {}
        fixed: dict[str, ChannelHistory] = {}
        for raw in uris:
            try:
                channel = parse_channel(raw)
            except ChannelError as exc:
                fixed[raw] = ChannelHistory(error=(ErrorCode.BAD_CHANNEL, str(exc)))
                continue
            if not principal.may_read(channel.uri):
                fixed[raw] = ChannelHistory(
                    error=(ErrorCode.FORBIDDEN, f"{principal.name} may not read it")
                )
                continue
            channels[channel.uri] = channel
        return t0_ns, t1_ns, px, uris, channels, fixed

    async def answer(self, frame: dict[str, Any], principal: Principal) -> dict:
        """The ``hist`` answer frame for a validated request; raises
        :class:`FrameError` for a request over a limit."""
        started = time.perf_counter()
        t0_ns, t1_ns, px, uris, channels, fixed = self._check(frame, principal)
        self.requests += 1
        read, sources = await self._in_slot(
            frame, self._read(list(channels.values()), t0_ns, t1_ns, px)
        )
        self.values_in += sum(len(e.cols) for e in read.values() if e.cols is not None)
        entries = {**fixed, **read}
        ordered = [entries.get(u) or entries.get(_norm(u)) for u in uris]
        series = _reduce_all(ordered, t0_ns, t1_ns, px)  # off the live loop (worker)
        self.points_out += sum(len(x[0]) for x in series if x is not None)
        log.debug(
            "hist %d channels, px %d: %.1f ms",
            len(uris), px, (time.perf_counter() - started) * 1e3,
        )  # fmt: skip
        return frames.hist_reply(
            frame["id"], frame["t0"], frame["t1"], px, uris, series,
            [e.error if e is not None else None for e in ordered],
            [sources.get(_norm(u)) if e is not None and e.cols is not None else None
             for u, e in zip(uris, ordered, strict=True)],
        )  # fmt: skip

    async def answer_encoded(
        self, frame: dict[str, Any], principal: Principal, json_mode: bool
    ) -> bytes | str:
        """The answer to a ``hist`` or ``at`` request, encoded for the socket
        (msgpack, or JSON text)."""
        if frame["op"] == frames.Op.AT:
            reply = await self._at(frame, principal)
        elif frame["op"] == frames.Op.STEP:
            reply = await self._in_slot(
                frame, self._moments.step(frame, principal), paced=False
            )
        elif frame["op"] == "pbread":  # a playback's next stretch, encoded there
            return await self._in_slot(frame, self._stretches.answer(frame, principal))
        else:
            reply = await self.answer(frame, principal)
        return frames.to_json(reply) if json_mode else frames.pack(reply)

    async def _at(self, frame: dict[str, Any], principal: Principal) -> dict:
        """The ``at`` answer, read in one of the same slots as ``hist``."""
        return await self._in_slot(
            frame, self._moments.answer(frame, principal), paced=False
        )

    async def _in_slot(
        self, frame: dict[str, Any], work: Coroutine[Any, Any, T], *, paced: bool = True
    ) -> T:
        """``work`` in one of the gateway's history slots (``hist_concurrency``).

        ``paced`` work (trends, playback stretches: what can come in a sustained
        stream) first waits for the CPU budget, before it takes a slot, so a
        request waiting for the budget holds no slot; a screen at a moment and a
        step (one click of a user's, a few ms each) never wait for it, though
        their CPU counts against it."""
        s = self._settings
        if paced:
            try:
                await self.budget.pace()
            except BaseException:  # cancelled while waiting: the work never runs
                work.close()
                raise
        try:
            await asyncio.wait_for(self._slots.acquire(), s.hist_timeout)
        except TimeoutError:
            work.close()
            raise FrameError(
                ErrorCode.UNAVAILABLE,
                f"history is busy ({s.hist_concurrency} requests in flight for over "
                f"{s.hist_timeout:g} s): try again",
                req_id=frame["id"],
            ) from None
        try:
            return await work
        except StoreError as exc:
            raise FrameError(
                ErrorCode.UNAVAILABLE, f"the bus's history: {exc}", req_id=frame["id"]
            ) from None
        finally:
            self._slots.release()

    async def _read(
        self, channels: Sequence[Channel], t0_ns: int, t1_ns: int, px: int
    ) -> tuple[dict[str, ChannelHistory], dict[str, str]]:
        """The bus for the whole range, then the archive for what the bus does not
        hold of each channel (blocks reach back further than the raw history, and
        either may have gaps): each channel's own split, not one for all."""
        if not channels:
            return {}, {}
        s = self._settings
        bus = await self._bus.read(
            HistoryRead(channels, t0_ns, t1_ns, px, s.hist_max_points, s.hist_timeout)
        )
        out = {c.uri: bus.get(c.uri) or ChannelHistory() for c in channels}
        sources = {
            uri: "bus" if _holds_some(e, t0_ns, t1_ns) else "" for uri, e in out.items()
        }
        need = [c for c in channels if out[c.uri].missing and not out[c.uri].error]
        if self._archive is None or not need:
            return out, sources
        lo = min(a for c in need for a, _ in out[c.uri].missing)
        hi = min(max(b for c in need for _, b in out[c.uri].missing), t1_ns + 1)
        read_so_far = sum(len(e.cols) for e in out.values() if e.cols is not None)
        older = await self._archive.read(
            HistoryRead(need, lo, hi - 1, px, max(s.hist_max_points - read_so_far, 1),
                        s.hist_timeout)
        )  # fmt: skip
        for channel in need:
            mine, theirs = out[channel.uri], older.get(channel.uri) or ChannelHistory()
            if theirs.error:
                mine.error = mine.error or theirs.error
            if theirs.cols is None:
                continue
            cols = _within(theirs.cols, mine.missing, self._archive.resolution_ns)
            mine.cols = Columns.concat([cols, mine.cols or Columns.empty()])
            got = sources[channel.uri]
            sources[channel.uri] = "archive+bus" if got else "archive"
        return out, sources


def _no_bus() -> Any:
    raise StoreError("no bus history here")


def _holds_some(entry: ChannelHistory, t0_ns: int, t1_ns: int) -> bool:
    """The backend answered with values, or holds some part of the range."""
    if entry.cols is None:
        return False
    if len(entry.cols):
        return True
    missed = sum(min(b, t1_ns + 1) - max(a, t0_ns) for a, b in entry.missing)
    return missed < t1_ns + 1 - t0_ns


def _within(cols: Columns, parts: list[tuple[int, int]], tick: int = 1) -> Columns:
    """The values of ``cols`` whose times lie in one of ``parts`` ([start, end)),
    a value stamped to ``tick`` ns standing for its whole tick: one in the tick
    where a part ends (the bus's first value it holds, stamped to the ns) is the
    bus's value, not one before it."""
    if not parts:
        return Columns.empty()
    starts = np.array([a for a, _ in parts], np.int64)
    ends = np.array([b for _, b in parts], np.int64)
    order = np.argsort(starts)
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    keep = covered(cols.t + (tick - 1), starts, ends)
    if keep.all():
        return cols
    return Columns(cols.t[keep], cols.v[keep], cols.sev[keep], cols.bad)


def _norm(uri: str) -> str:
    try:
        return parse_channel(uri).uri
    except ChannelError:
        return uri


def _reduce_all(
    entries: Sequence[ChannelHistory | None], t0_ns: int, t1_ns: int, px: int
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """Each channel's columns reduced and converted to the wire's typed arrays
    (ms as float64, value float64, severity uint8)."""
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
    for entry in entries:
        if entry is None or entry.cols is None:
            out.append(None)
            continue
        cols = reduce_columns(entry.cols, t0_ns, t1_ns, px)
        out.append(
            (
                cols.t.astype(np.float64) / _MS,
                np.ascontiguousarray(cols.v, np.float64),
                np.ascontiguousarray(cols.sev, np.uint8),
            )
        )
    return out
