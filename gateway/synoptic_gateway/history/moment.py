"""The ``at`` request: a screen's channels as they were at a moment.

Each channel's value then is the last message of its subject stored at or before
the moment in the raw history (``CS_HIST``: every value up to 4 KiB) or, for
arrays and images, in the thinned large values (``CS_ARRAYS``): whichever of
the two comes later in the source's order. Its metadata then is the last metadata message stored by the
moment in ``CS_META``. Each is one batched Direct Get per 1024 channels
(:mod:`synoptic_bus.moment`), all concurrently, over the history service's own
NATS connection. "Stored" is the bus's time (when the value reached the bus), so
a screen at a moment shows what a live viewer saw then, disconnections included
(a source that was down was published as a value with ``c`` false).

A channel the raw history no longer reaches back to at the moment (its byte
budget or max age) gets the last value at or before it in the rollup's history
blocks (``CS_ROLL``), else in the archive (HDB++, where the gateway has one):
its number and severity then (:mod:`.older`), ``src`` ``blocks`` or ``archive``.

A channel whose oldest raw value was stored after the moment (its store time
read once per channel and remembered) is not asked of the raw history at all:
for such a subject nats-server walks back through every message stored before
the moment (seconds for a hundred channels in a full stream).

A channel with nothing kept by the moment is answered ``not_kept`` with
``since``: when its oldest kept value is from (how far back its history goes;
nil: none at all). A channel with no metadata kept by then gets its oldest kept
metadata, and is listed in ``mlate``.

A channel in the request's ``pts`` gets its array or image reduced as a live
subscription's (:func:`synoptic_gateway.decimate.reduce_map`), here in the
history service, off the live loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from synoptic_bus.arrays import arrays_stream_name
from synoptic_bus.connect import NatsClient
from synoptic_bus.metahistory import meta_stream_name
from synoptic_bus.moment import Stored, first_kept, last_at, run_from
from synoptic_bus.rollup import rollup_stream_name
from synoptic_bus.store import StoreError, history_stream_name
from synoptic_gateway.decimate import reduce_map
from synoptic_gateway.history.backend import ArchiveError
from synoptic_gateway.history.older import Point, is_number, last_in_blocks, value_map
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_schemas import ChannelError, DecodeError, Subjects, frames, parse_channel
from synoptic_schemas.blocks import decode_block
from synoptic_schemas.channels import Channel
from synoptic_schemas.codec import decode
from synoptic_schemas.errors import ContractError
from synoptic_schemas.frames import ErrorCode, FrameError
from synoptic_schemas.frames.order import value_order
from synoptic_schemas.subjects import subject_tail

if TYPE_CHECKING:
    from synoptic_gateway.history.hdbpp import HdbppArchive

log = logging.getLogger(__name__)

_MS = 1_000_000


def ns_of_ms(t_ms: float) -> int:
    """A moment of the protocol (ms since the epoch, µs resolution) in ns, exact to
    the µs: ``t_ms * 1e6`` in floating point is off by up to 128 ns today, enough to
    take in a value stored some ns after the moment asked for."""
    return round(t_ms * 1000) * 1000


#: Direct Gets at once for the per-channel questions (how far back it reaches).
_FIRST_KEPT_AT_ONCE = 32
#: A moment after anything stored: ``last_at`` of it is each subject's latest.
_LATEST_NS = 3600 * 10**9
#: Raw history subjects whose oldest value's store time is remembered, at most.
RAW_FIRSTS_KEPT = 100_000


class MomentReader:
    """Answers ``at`` requests from the bus's history streams and the archive."""

    def __init__(
        self, settings: Settings, connection: Any, archive: HdbppArchive | None = None
    ) -> None:
        """``connection()`` returns the connected NATS client (raises
        :class:`StoreError` while the bus is down); ``archive``: where values
        older than the bus's blocks are read, if anywhere."""
        self._settings = settings
        self._connection = connection
        self._archive = archive
        prefix = settings.prefix
        self._roll = rollup_stream_name(prefix)
        self._subjects = Subjects(prefix)
        self._raw = history_stream_name(prefix)
        self._arrays = arrays_stream_name(prefix)
        self._meta = meta_stream_name(prefix)
        self.requests = 0
        #: raw history subject -> store time of its oldest value (ns), as first
        #: read (values only ever leave from the old end: a moment before it is
        #: before the subject's history, whatever the retention removed since)
        self._raw_first: OrderedDict[str, int] = OrderedDict()
        #: channels not asked of the raw history (their oldest value after the
        #: moment), in all
        self.before_first = 0

    def _check(
        self, frame: dict[str, Any], principal: Principal
    ) -> tuple[int, list[str], dict[str, Channel], dict[str, dict[str, Any]]]:
        s = self._settings
        req_id = frame["id"]
        uris: list[str] = frame["ch"]
        if len(uris) > s.at_max_channels:
            raise FrameError(
                ErrorCode.TOO_MANY_CHANNELS,
                f"{len(uris)} channels at a moment exceed the limit of "
                f"{s.at_max_channels}",
                req_id=req_id,
            )
        at_ns = ns_of_ms(frame["t"])
        if at_ns > time.time_ns() + 60 * 10**9:
            raise FrameError(
                ErrorCode.BAD_RANGE,
                "the moment is in the future: ask for live values with sub",
                req_id=req_id,
            )
        channels: dict[str, Channel] = {}
        fixed: dict[str, dict[str, Any]] = {}
        for raw in uris:
            try:
                channel = parse_channel(raw)
            except ChannelError as exc:
                fixed[raw] = _error(ErrorCode.BAD_CHANNEL, str(exc))
                continue
            if not principal.may_read(channel.uri):
                fixed[raw] = _error(
                    ErrorCode.FORBIDDEN, f"{principal.name} may not read it"
                )
                continue
            channels[raw] = channel
        return at_ns, uris, channels, fixed

    async def answer(self, frame: dict[str, Any], principal: Principal) -> dict:
        """The ``at`` answer for a validated request; raises :class:`FrameError`
        for a request over a limit."""
        started = time.perf_counter()
        at_ns, uris, channels, fixed = self._check(frame, principal)
        self.requests += 1
        found = await self.read(list(channels.values()), at_ns)
        points = points_of(frame)
        values: list[Any] = []
        metas: list[Any] = []
        sources: list[str | None] = []
        errors: list[dict[str, Any] | None] = []
        late: list[int] = []
        for i, uri in enumerate(uris):
            channel = channels.get(uri)
            got = found.get(channel.uri) if channel is not None else None
            if got is None:
                values.append(None)
                metas.append(None)
                sources.append(None)
                errors.append(fixed.get(uri) or _error(ErrorCode.INTERNAL, "not read"))
                continue
            values.append(reduced(got.value, points.get(uri)))
            metas.append(got.meta)
            sources.append(got.source)
            errors.append(got.error)
            if got.meta_late:
                late.append(i)
        log.debug(
            "at %d channels: %.1f ms", len(uris), (time.perf_counter() - started) * 1e3
        )
        return frames.at_reply(
            frame["id"], frame["t"], uris, values, metas, sources, errors,
            meta_later=late,
        )  # fmt: skip

    async def step(self, frame: dict[str, Any], principal: Principal) -> dict:
        """The ``step`` answer: when the channel's value changed last before
        ``t`` (``dir`` -1) or first after it (1), from the raw history and the
        large values; nil when none is kept."""
        try:
            channel = parse_channel(frame["ch"])
        except ChannelError as exc:
            raise FrameError(
                ErrorCode.BAD_CHANNEL, str(exc), req_id=frame["id"], ch=frame["ch"]
            ) from None
        if not principal.may_read(channel.uri):
            raise FrameError(
                ErrorCode.FORBIDDEN, f"{principal.name} may not read it",
                req_id=frame["id"], ch=frame["ch"],
            )  # fmt: skip
        nc: NatsClient = self._connection()
        at_ns = ns_of_ms(frame["t"])
        timeout = self._settings.hist_timeout
        kept = [(self._raw, self._subjects.hist(channel)),
                (self._arrays, self._subjects.hist_large(channel))]  # fmt: skip

        async def one(stream: str, subject: str) -> int | None:
            if frame["dir"] < 0:
                # before t by more than the answers' resolution (1 µs): the
                # change a previous step went to is not found again
                found = await _optional(
                    last_at(nc, stream, [subject], at_ns - 1000, timeout=timeout)
                )
                got = found.get(subject)
                return got.stored_ns if got is not None else None
            try:
                run = await run_from(nc, stream, subject, at_ns + 1, 1, timeout=timeout)
            except StoreError:
                return None
            return run[0].stored_ns if run else None

        times = [x for x in await asyncio.gather(*(one(*k) for k in kept)) if x]
        pick = (max if frame["dir"] < 0 else min)(times) if times else None
        # in whole µs, rounded up: an ``at`` of that moment shows that change
        when = -(-pick // 1000) / 1000 if pick is not None else None
        return frames.step_reply(frame["id"], frame["ch"], when)

    async def read(self, channels: Sequence[Channel], at_ns: int) -> dict[str, Past]:
        """Each channel's value and metadata as they stood at ``at_ns`` (by URI)."""
        if not channels:
            return {}
        try:
            nc: NatsClient = self._connection()
        except StoreError as exc:
            return _all(channels, _error(ErrorCode.UNAVAILABLE, f"the bus: {exc}"))
        s = self._subjects
        raw_subjects = [s.hist(c) for c in channels]
        arr_subjects = [s.hist_large(c) for c in channels]
        meta_subjects = [s.hist_meta(c) for c in channels]
        timeout = self._settings.hist_timeout
        try:
            async with asyncio.timeout(timeout):
                firsts = await self._raw_firsts(nc, raw_subjects)
                # a subject whose oldest value is after the moment is not asked:
                # nats-server would walk back through the whole stream for it
                asked = [x for x in raw_subjects if firsts.get(x, 0) <= at_ns]
                self.before_first += len(raw_subjects) - len(asked)
                raw, arrays, metas = await asyncio.gather(
                    last_at(nc, self._raw, asked, at_ns, timeout=timeout),
                    _optional(last_at(nc, self._arrays, arr_subjects, at_ns,
                                      timeout=timeout)),
                    _optional(last_at(nc, self._meta, meta_subjects, at_ns,
                                      timeout=timeout)),
                )  # fmt: skip
        except TimeoutError:
            return _all(
                channels,
                _error(ErrorCode.TIMEOUT, f"the bus's history took over {timeout:g} s"),
            )
        except StoreError as exc:
            return _all(
                channels, _error(ErrorCode.UNAVAILABLE, f"the bus's history: {exc}")
            )
        out: dict[str, Past] = {}
        for channel, rs, az, ms in zip(
            channels, raw_subjects, arr_subjects, meta_subjects, strict=True
        ):
            past = Past()
            newest = _later(raw.get(rs), arrays.get(az))
            if newest is not None:
                past.source = "raw" if newest.subject == rs else "arrays"
                past.value = _decoded(newest)
                if past.value is None:
                    past.error = _error(
                        ErrorCode.UNAVAILABLE, "the value kept then is unreadable"
                    )
                elif past.source == "arrays":
                    past.value["kt"] = newest.stored_ns / _MS
            stored_meta = metas.get(ms)
            if stored_meta is not None:
                past.meta = _decoded(stored_meta)
            out[channel.uri] = past
        older = [
            c for c in channels if out[c.uri].value is None and not out[c.uri].error
        ]
        if older:
            await self._older(nc, older, out, at_ns)
        await self._fill_edges(nc, channels, out, at_ns)
        return out

    async def _raw_firsts(
        self, nc: NatsClient, subjects: Sequence[str]
    ) -> dict[str, int]:
        """The store time of the oldest value of each of ``subjects`` in the raw
        history (none where it holds none, or could not say), read once each."""
        known = self._raw_first
        unknown = [x for x in subjects if x not in known]
        if unknown:
            slots = asyncio.Semaphore(_FIRST_KEPT_AT_ONCE)
            timeout = self._settings.hist_timeout

            async def one(subject: str) -> None:
                async with slots:
                    try:
                        first = await first_kept(
                            nc, self._raw, subject, timeout=timeout
                        )
                    except (StoreError, TimeoutError):
                        return
                if first is not None:
                    known[subject] = first.stored_ns
                    while len(known) > RAW_FIRSTS_KEPT:
                        known.popitem(last=False)

            await asyncio.gather(*(one(x) for x in unknown))
        return {x: known[x] for x in subjects if x in known}

    async def _older(
        self,
        nc: NatsClient,
        channels: Sequence[Channel],
        out: dict[str, Past],
        at_ns: int,
    ) -> None:
        """Channels with nothing in the raw history by the moment: the blocks'
        last value then, else the archive's."""
        timeout = self._settings.hist_timeout
        tails = {subject_tail(c): c for c in channels}
        try:
            async with asyncio.timeout(timeout):
                found = await last_in_blocks(
                    nc, self._roll, self._settings.prefix, list(tails), at_ns,
                    timeout=timeout,
                )  # fmt: skip
        except (StoreError, TimeoutError) as exc:
            log.debug("at: blocks: %s", exc)
            found = {}
        picked: dict[str, tuple[Point, str]] = {}
        rest: list[Channel] = []
        for tail, channel in tails.items():
            point = found.get(tail)
            if point is None:
                rest.append(channel)
            else:
                picked[channel.uri] = (point, "blocks")
        if rest and self._archive is not None:
            try:
                rows = await self._archive.last_at(
                    [c.uri for c in rest], at_ns, timeout
                )
            except (TimeoutError, ArchiveError) as exc:
                log.info("at: the archive: %s", str(exc).strip()[:200])
                rows = {}
            for channel in rest:
                row = rows.get(channel.uri)
                if row is not None:
                    picked[channel.uri] = (Point(*row), "archive")
        if not picked:
            return
        starts = await self._raw_starts(nc, [c for c in channels if c.uri in picked])
        for uri, (point, source) in picked.items():
            # a value the raw history still holds was stored after the moment
            # (its source time may be older: an IOC's record processed long ago)
            start = starts.get(uri)
            if start is None or point.t < start:
                _place(out[uri], point, source)

    async def _raw_starts(
        self, nc: NatsClient, channels: Sequence[Channel]
    ) -> dict[str, int]:
        """The source time of each channel's oldest value in the raw history (by
        URI; none where it holds none)."""
        slots = asyncio.Semaphore(_FIRST_KEPT_AT_ONCE)
        timeout = self._settings.hist_timeout

        async def one(channel: Channel) -> int | None:
            async with slots:
                try:
                    first = await first_kept(
                        nc, self._raw, self._subjects.hist(channel), timeout=timeout
                    )
                except (StoreError, TimeoutError):
                    return None
            if first is None:
                return None
            try:
                return value_order(first.data)[2]
            except DecodeError:
                return None

        got = await asyncio.gather(*(one(c) for c in channels))
        return {c.uri: t for c, t in zip(channels, got, strict=True) if t is not None}

    async def _fill_edges(
        self,
        nc: NatsClient,
        channels: Sequence[Channel],
        out: dict[str, Past],
        at_ns: int,
    ) -> None:
        """For each channel with no value kept by the moment: how far back its
        history goes (``not_kept``, ``since``); with no metadata by then: its
        oldest metadata kept (``mlate``)."""
        slots = asyncio.Semaphore(_FIRST_KEPT_AT_ONCE)
        s = self._subjects
        timeout = self._settings.hist_timeout

        async def oldest(stream: str, subject: str) -> Stored | None:
            async with slots:
                try:
                    return await first_kept(nc, stream, subject, timeout=timeout)
                except (StoreError, TimeoutError):
                    return None

        async def since(channel: Channel, past: Past) -> None:
            raw, arr, block = await asyncio.gather(
                oldest(self._raw, s.hist(channel)),
                oldest(self._arrays, s.hist_large(channel)),
                oldest(self._roll, f"{s.prefix}.roll.0.{subject_tail(channel)}"),
            )
            first = [m.stored_ns for m in (raw, arr) if m is not None]
            if block is not None and _reaches_further(block, raw):
                first.append(_first_t(block))
            when = min(first) / _MS if first else None
            said = (
                f"nothing of this channel is kept from before {_iso(when)}"
                if when is not None
                else "nothing of this channel is kept"
            )
            if past.source is not None:  # a value then, but not a number
                said = (
                    f"its value then (in the {past.source}) was not a number: a "
                    "string, or its source disconnected; only numbers are kept "
                    "that far back"
                )
                past.source = None
            past.error = {**_error(ErrorCode.NOT_KEPT, said), "since": when}

        async def meta_after(channel: Channel, past: Past) -> None:
            first = await oldest(self._meta, s.hist_meta(channel))
            if first is not None:
                past.meta = _decoded(first)
                past.meta_late = past.meta is not None

        jobs = []
        for channel in channels:
            past = out[channel.uri]
            if past.value is None and past.error is None:
                jobs.append(since(channel, past))
        no_meta = [c for c in channels if out[c.uri].meta is None]
        for channel in await self._with_meta(nc, no_meta):
            jobs.append(meta_after(channel, out[channel.uri]))
        if jobs:
            await asyncio.gather(*jobs)

    async def _with_meta(
        self, nc: NatsClient, channels: Sequence[Channel]
    ) -> list[Channel]:
        """Those of ``channels`` with any metadata kept at all (one batched Direct
        Get of their latest), so that only those are asked for their oldest, one
        Direct Get each: a screen of channels with no metadata history costs one
        request, not one per channel."""
        if not channels:
            return []
        subjects = {self._subjects.hist_meta(c): c for c in channels}
        try:
            latest = await last_at(
                nc, self._meta, list(subjects), time.time_ns() + _LATEST_NS,
                timeout=self._settings.hist_timeout,
            )  # fmt: skip
        except (StoreError, TimeoutError) as exc:
            log.debug("at: metadata: %s", exc)
            return []
        return [c for subject, c in subjects.items() if subject in latest]


def _place(past: Past, point: Point, source: str) -> None:
    """A value from the blocks or the archive into a channel's answer (a value
    not a number: its source only, answered ``not_kept``)."""
    past.source = source
    if is_number(point):
        past.value = value_map(point, past.meta)


def _reaches_further(block: Stored, raw: Stored | None) -> bool:
    """Whether a channel's oldest block holds values older (by source time) than
    its oldest in the raw history: values the raw history no longer keeps."""
    if raw is None:
        return True
    try:
        return _first_t(block) < value_order(raw.data)[2]
    except DecodeError:
        return False


def _first_t(block: Stored) -> int:
    """The first value's source time in a stored block (its store time if
    unreadable)."""
    try:
        cols = decode_block(block.data).cols
    except ContractError:
        return block.stored_ns
    return int(cols.t[0]) if len(cols.t) else block.stored_ns


def points_of(frame: dict[str, Any]) -> dict[str, int]:
    """A validated request's ``pts`` (URI as asked -> the most points drawn),
    rounded up to the sizes live subscriptions get (``sub.pts``)."""
    return {uri: frames.round_points(n) for uri, n in (frame.get("pts") or {}).items()}


def reduced(value: dict[str, Any] | None, points: int | None) -> dict[str, Any] | None:
    """A past value as a live subscription with ``points`` gets it (``None``:
    the full value)."""
    if value is None or points is None:
        return value
    return reduce_map(value, points) or value


class Past:
    """One channel at a moment: its value and metadata then (decoded payloads),
    where the value came from, an error map, and whether the metadata is the
    oldest kept, later than the moment."""

    __slots__ = ("error", "meta", "meta_late", "source", "value")

    def __init__(self) -> None:
        self.value: dict[str, Any] | None = None
        self.meta: dict[str, Any] | None = None
        self.source: str | None = None
        self.error: dict[str, Any] | None = None
        self.meta_late = False


async def _optional(read: Any) -> dict[str, Stored]:
    """A stream that may not exist (no rollup: no ``CS_ARRAYS``): empty then."""
    try:
        return await read
    except StoreError as exc:
        log.debug("at: %s", exc)
        return {}


def _later(raw: Stored | None, large: Stored | None) -> Stored | None:
    """The newer value of the two: by the source's order, not by when each was
    stored (the rollup stores a large value up to its tick after it arrived, so a
    disconnection may be stored before the last array it follows)."""
    if raw is None or large is None:
        return raw or large
    try:
        return (
            large if is_newer(value_order(large.data), value_order(raw.data)) else raw
        )
    except DecodeError:
        return raw if raw.stored_ns >= large.stored_ns else large


def is_newer(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Whether the value of order key ``a`` (``ep``, ``seq``, ``t``) comes after
    that of ``b``: by ``seq`` within one adapter epoch, else by source time."""
    if a[0] == b[0]:
        return a[1] > b[1]
    return a[2] > b[2]


def _decoded(stored: Stored) -> dict[str, Any] | None:
    try:
        return decode(stored.data)
    except DecodeError as exc:
        log.warning("unreadable payload kept on %s: %s", stored.subject, exc)
        return None


def _error(code: str, msg: str) -> dict[str, Any]:
    return {"code": code, "msg": msg}


def _all(channels: Sequence[Channel], error: dict[str, Any]) -> dict[str, Past]:
    out: dict[str, Past] = {}
    for channel in channels:
        past = Past()
        past.error = error
        out[channel.uri] = past
    return out


def _iso(ms: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1e3)) + "Z"
