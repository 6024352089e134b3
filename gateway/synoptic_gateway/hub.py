"""The hub: NATS subscriptions shared by the whole gateway, and groups of sockets
that watch the same channel set.

Guarantees:
- one NATS subscription per channel, however many groups watch it; it is made for
  the first group and dropped with the last (reference-counted; a failed
  subscription rolls back what the group had taken);
- per channel, values only move forward in ``(ep, seq)``: a live update and the
  last-value store's answer may arrive in any order, the newer one wins and none is
  sent twice or out of order;
- a group's batch is encoded once and the same bytes go to every socket of the
  group; batches leave at most every ``batch_ms``, an idle group's update at once,
  a batch that reaches ``batch_max`` updates (a burst still being read) at once,
  and the rest of such a burst once it is read (a turn of the event loop that
  brought the group nothing new), not at the end of the window;
- delivering to a socket never awaits (see :mod:`synoptic_gateway.session`);
- a channel whose latest value came from an adapter epoch that stopped beating is
  reported to the group's sockets (``src`` up false, ``snap.stale``) within about
  ``liveness_misses`` heartbeat periods plus ``liveness_check``, and cleared (``src``
  up true) when that epoch beats again (see :mod:`synoptic_gateway.liveness`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from itertools import islice
from typing import Any, Protocol

from synoptic_bus.store import MAX_SUBJECTS_PER_REQUEST, Snapshot, StoreError
from synoptic_gateway.bus import Bus
from synoptic_gateway.demand import Demand
from synoptic_gateway.liveness import Liveness
from synoptic_gateway.metrics import Stats
from synoptic_gateway.settings import Settings
from synoptic_schemas import (
    ContractError,
    Subjects,
    decode_heartbeat,
    frames,
    parse_channel,
)
from synoptic_schemas.channels import Channel
from synoptic_schemas.codec import decode
from synoptic_schemas.frames import meta_order, value_order
from synoptic_schemas.subjects import subject_tail


class Session(Protocol):
    """What the hub needs of one socket (``synoptic_gateway.session.Session``):
    the hub hands it frames and never awaits it."""

    json: bool
    #: loop time since which a send has been in progress, or None
    sending_since: float | None

    @property
    def conflating(self) -> bool: ...
    def deliver(self, batch: Batch) -> None: ...
    def push_control(self, frame: bytes | str) -> None: ...
    def close_slow(self) -> None: ...


log = logging.getLogger(__name__)

#: Reads of a store replica that answered short of the barrier before giving up.
BARRIER_RETRIES = 8
#: Seconds a barrier may take (normally < 1 ms; a NATS user not allowed to publish
#: it gets no answer at all), and before one is tried again after a failure.
BARRIER_TIMEOUT = 1.0
BARRIER_RETRY_AFTER = 60.0
#: Seconds after a lingering channel's deadline before the sweep that drops it, so
#: that the channels of one screen are unsubscribed together (one write).
LINGER_SLACK = 0.1


class UnavailableError(Exception):
    """The bus is down or refused a subscription: the request cannot be served."""


class ChannelState:
    """One watched channel: its NATS subscription, latest value and metadata (raw
    msgpack bus payloads) and the groups that show it."""

    __slots__ = (
        "channel", "key", "listeners", "meta", "meta_key", "meta_subject", "refs",
        "subs", "uri", "val_subject", "value",
    )  # fmt: skip

    def __init__(self, channel: Channel, prefix: str) -> None:
        self.channel = channel
        self.uri = channel.uri
        # Subjects.val/meta of the channel (one escaping of its name for the three)
        tail = subject_tail(channel)
        self.val_subject = f"{prefix}.val.{tail}"
        self.meta_subject = f"{prefix}.meta.{tail}"
        self.value: bytes | None = None
        self.key: tuple[int, int] | None = None  # (ep, seq) of value
        self.meta: bytes | None = None
        self.meta_key: tuple[int, int] | None = None  # (ep, t) of meta
        self.listeners: dict[Group, int] = {}  # group -> index in its channel list
        self.refs = 0
        #: live subscription ids (value, metadata): two literal subjects, not one
        #: ``<prefix>.*.<tail>`` wildcard, whose insert and removal make nats-server
        #: walk its whole subject cache (a 1000-channel screen's wildcard SUBs held
        #: the next store barrier 40-180 ms; literal ones 5-6 ms)
        self.subs: tuple[int, int] | None = None


class Batch:
    """One flush of a group: encoded once (msgpack eagerly, JSON on first use)."""

    __slots__ = ("_json", "indexes", "kind", "packed", "raws", "sid")

    def __init__(self, kind: str, sid: int, indexes: list[int], raws: list[bytes]):
        self.kind = kind
        self.sid = sid
        self.indexes = indexes
        self.raws = raws
        self.packed = frames.pack_batch(kind, sid, indexes, raws)
        self._json: str | None = None

    def json_text(self) -> str:
        if self._json is None:
            payloads = [decode(raw) for raw in self.raws]
            frame = (
                frames.upd(self.sid, self.indexes, payloads)
                if self.kind == frames.Op.UPD
                else frames.meta(self.sid, self.indexes, payloads)
            )
            self._json = frames.to_json(frame)
        return self._json


class Group:
    """The sockets of this gateway that watch one channel set (a dashboard)."""

    def __init__(
        self, hub: Hub, sid: int, key: tuple[str, ...], states: list[ChannelState]
    ) -> None:
        self.hub = hub
        self.sid = sid
        self.key = key
        self.states = states
        self.members: dict[Session, None] = {}
        self.closed = False
        #: indexes its sockets were told have no live source (src up false, or
        #: snap.stale) and that no update or src up true has cleared since
        self.stale: set[int] = set()
        self._val_i: list[int] = []
        self._val_raw: list[bytes] = []
        self._val_t: list[int] = []
        self._meta_i: list[int] = []
        self._meta_raw: list[bytes] = []
        self._handle: asyncio.Handle | None = None
        self._last_flush = 0.0
        self._loop = asyncio.get_running_loop()
        self._batch_max = hub.batch_max
        self._large = hub.large_value_bytes
        #: pending updates larger than ``_large`` (they leave after the small ones)
        self._large_n = 0
        #: the last flush was a full batch (``batch_max``): a burst is being read
        self._bursting = False

    def push_value(self, index: int, raw: bytes, t: int) -> None:
        # (once per update and group: ~5 % of the gateway's CPU under a burst)
        if self.stale:  # the update clears the mark on the clients (protocol rule)
            self.stale.discard(index)
        indexes = self._val_i
        indexes.append(index)
        self._val_raw.append(raw)
        if len(raw) > self._large:
            self._large_n += 1
        self._val_t.append(t)
        if len(indexes) >= self._batch_max:  # a burst: send what is in
            self.flush()
            self._bursting = True
        elif self._handle is None:  # (else a flush is already due)
            self._schedule()

    def push_meta(self, index: int, raw: bytes) -> None:
        self._meta_i.append(index)
        self._meta_raw.append(raw)
        self._schedule()

    def _schedule(self) -> None:
        if self._handle is not None:
            return
        delay = self._last_flush + self.hub.batch_s - self._loop.time()
        if delay <= 0:  # idle group: out on the next loop turn
            self._handle = self._loop.call_soon(self.flush)
        elif self._bursting:  # the rest of a burst: out once it is all read
            pending = len(self._val_i) + len(self._meta_i)
            self._handle = self._loop.call_soon(self._flush_once_read, pending)
        else:
            self._handle = self._loop.call_later(delay, self.flush)

    def _flush_once_read(self, pending: int) -> None:
        """After a full batch: flush when a turn of the loop brought the group
        nothing new (the reader has read what there was: the burst's end, or a
        pause in it), at the latest at the end of the batch window. Before, the
        rest of a burst waited for the window (up to ``batch_ms`` more for the
        burst's last updates, the tail of its latency)."""
        self._handle = None
        now_pending = len(self._val_i) + len(self._meta_i)
        if (
            now_pending == pending
            or self._loop.time() >= self._last_flush + self.hub.batch_s
        ):
            self.flush()
        else:  # still reading: look again after the next turn
            self._handle = self._loop.call_soon(self._flush_once_read, now_pending)

    def flush(self) -> None:
        """Send what is pending to every member (never awaits)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._bursting = False
        if not self._val_i and not self._meta_i:
            return
        self._last_flush = self._loop.time()
        stats = self.hub.stats
        if self._val_i:
            now = time.time_ns()
            stats.latency.observe_ages(now, self._val_t)
            if self._large_n:
                batches = self._small_first(self._val_i, self._val_raw)
                self._large_n = 0
            else:
                batches = [Batch(frames.Op.UPD, self.sid, self._val_i, self._val_raw)]
            self._val_i, self._val_raw, self._val_t = [], [], []
            for batch in batches:
                for session in self.members:
                    session.deliver(batch)
        if self._meta_i:
            batch = Batch(frames.Op.META, self.sid, self._meta_i, self._meta_raw)
            self._meta_i, self._meta_raw = [], []
            for session in self.members:
                session.deliver(batch)

    def _small_first(self, indexes: list[int], raws: list[bytes]) -> list[Batch]:
        """A window's updates as frames, small values first: one batch of the
        updates of channels with no large value in the window, then the others in
        their order, one per frame (a channel's updates keep their order)."""
        large = self._large
        held = {i for i, raw in zip(indexes, raws, strict=True) if len(raw) > large}
        small_i: list[int] = []
        small_raw: list[bytes] = []
        rest: list[Batch] = []
        for i, raw in zip(indexes, raws, strict=True):
            if i in held:
                rest.append(Batch(frames.Op.UPD, self.sid, [i], [raw]))
            else:
                small_i.append(i)
                small_raw.append(raw)
        if small_i:
            rest.insert(0, Batch(frames.Op.UPD, self.sid, small_i, small_raw))
        return rest

    def snap_frames(self, req_id: Any, json: bool) -> list[bytes | str]:
        """The group's state: a ``snap`` frame with every value of at most
        ``large_value_bytes``, then one ``upd`` frame per larger value (listed in
        ``snap.more``), so that no scalar of a screen waits behind its arrays."""
        large = self._large
        values = [s.value for s in self.states]
        more = [i for i, v in enumerate(values) if v is not None and len(v) > large]
        held = [values[i] for i in more]
        for i in more:
            values[i] = None
        metas = [s.meta for s in self.states]
        stale = sorted(self.stale)
        if not json:
            snap = frames.pack_snap(
                req_id, self.sid, self.key, values, metas, stale, more
            )
            follow = [frames.pack_batch(frames.Op.UPD, self.sid, [i], [raw])
                      for i, raw in zip(more, held, strict=True)]  # fmt: skip
            return [snap, *follow]
        text = frames.to_json(
            frames.snap(req_id, self.sid, self.key,
                        [decode(v) if v else None for v in values],
                        [decode(m) if m else None for m in metas], stale, more)
        )  # fmt: skip
        return [text, *(frames.to_json(frames.upd(self.sid, [i], [decode(raw)]))
                        for i, raw in zip(more, held, strict=True))]  # fmt: skip

    def push_snap(self, sessions: Iterable[Session], req_id: Any) -> None:
        """Queue the group's state (:meth:`snap_frames`) on ``sessions``, encoded
        at most once per format."""
        encoded: dict[bool, list[bytes | str]] = {}
        for session in sessions:
            if session.json not in encoded:
                encoded[session.json] = self.snap_frames(req_id, session.json)
            for frame in encoded[session.json]:
                session.push_control(frame)

    def push_to_members(
        self, packed: Callable[[], bytes], text: Callable[[], str]
    ) -> None:
        """Queue one control frame for every member, encoded at most once per
        format (``packed()`` / ``text()`` are called only if a member needs it)."""
        packed_frame: bytes | None = None
        text_frame: str | None = None
        for session in self.members:
            if session.json:
                text_frame = text_frame or text()
                session.push_control(text_frame)
            else:
                packed_frame = packed_frame or packed()
                session.push_control(packed_frame)

    def send_src(self, indexes: list[int], up: bool) -> None:
        """Tell every member that these channels lost (or regained) their source:
        one frame encoded once (per format) for the whole group."""
        frame = frames.src(self.sid, indexes, up)
        self.push_to_members(lambda: frames.pack(frame), lambda: frames.to_json(frame))


class FillTimes:
    """How long the stages of one store read took (seconds), and how many values
    it brought that were newer than known."""

    __slots__ = ("barrier", "fetch", "merge", "newer")

    def __init__(self) -> None:
        self.barrier = self.fetch = self.merge = 0.0
        self.newer = 0


class Hub:
    """Channels, groups and sessions of one gateway."""

    def __init__(
        self, bus: Bus, settings: Settings, stats: Stats, gateway_id: str
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.stats = stats
        self.gateway_id = gateway_id
        self.subjects = Subjects(settings.prefix)
        self.batch_s = settings.batch_ms / 1000.0
        self.batch_max = max(1, settings.batch_max)
        self.large_value_bytes = settings.large_value_bytes
        self.channels: dict[str, ChannelState] = {}
        self.groups: dict[tuple[str, ...], Group] = {}
        self.sessions: set[Session] = set()
        self.demand = Demand(bus, self.subjects, settings.want_lease, gateway_id)
        self._creating: dict[tuple[str, ...], asyncio.Future[Group]] = {}
        self._next_sid = 1
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watchdog: asyncio.Task[None] | None = None
        self.liveness = Liveness(settings.liveness_misses, settings.heartbeat_period)
        self._liveness_task: asyncio.Task[None] | None = None
        self._stale_channels = 0  # channels whose value has no live source
        self._barrier_after = 0.0  # no barrier tried before (a failure backs off)
        #: channels no group watches any more whose NATS subscriptions are kept
        #: until a deadline (loop time), oldest first: a screen re-opened meanwhile
        #: (a page reload) finds them subscribed and current, and a closing screen
        #: costs no unsubscribes on the way of the next open
        self._lingering: dict[ChannelState, float] = {}
        self._linger_timer: asyncio.TimerHandle | None = None

    # ----------------------------------------------------------- lifecycle

    def start(self) -> None:
        self.demand.start()
        self._watchdog = asyncio.create_task(self._watch_stalls(), name="stalls")
        self._liveness_task = asyncio.create_task(
            self._watch_liveness(), name="liveness"
        )

    async def close(self) -> None:
        self.demand.stop()
        if self._watchdog:
            self._watchdog.cancel()
        if self._liveness_task:
            self._liveness_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._linger_timer is not None:
            self._linger_timer.cancel()

    def gauges(self) -> dict[str, float]:
        """Current sizes, for ``/metrics``."""
        return {
            "connections": len(self.sessions),
            "conflating_sockets": sum(1 for s in self.sessions if s.conflating),
            "groups": len(self.groups),
            "nats_subscriptions": sum(1 for s in self.channels.values() if s.subs),
            "channels": len(self.channels),
            "lingering_channels": len(self._lingering),
            "bus_up": 1.0 if self.bus.up else 0.0,
            "silent_adapters": len(self.liveness.silent_adapters(time.monotonic())),
            "stale_channels": self._stale_channels,
        }

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ----------------------------------------------------------- groups

    async def join(
        self,
        session: Session,
        key: tuple[str, ...],
        req_id: Any,
        parsed: Mapping[str, Channel] | None = None,
    ) -> Group:
        """Add ``session`` to the group of channel set ``key`` (creating it), and
        queue its snapshot on the session before any update of the group.
        ``parsed`` may hold the channels of ``key``'s URIs already parsed."""
        while True:
            group = self.groups.get(key)
            if group is None:
                pending = self._creating.get(key)
                if pending is not None:
                    group = await asyncio.shield(pending)
                else:
                    group = await self._create(key, parsed or {})
            if group.closed:  # emptied and dropped while we waited: make anew
                continue
            group.flush()  # members are up to date: the snapshot starts from here
            group.push_snap((session,), req_id)
            group.members[session] = None
            return group

    def leave(self, session: Session, group: Group) -> None:
        """Remove a session from a group; the last one out drops the group."""
        group.members.pop(session, None)
        if group.members or group.closed:
            return
        group.flush()
        group.closed = True
        self.groups.pop(group.key, None)
        for state in group.states:
            state.listeners.pop(group, None)
        self._release(group.states)

    async def _create(
        self, key: tuple[str, ...], parsed: Mapping[str, Channel]
    ) -> Group:
        future: asyncio.Future[Group] = asyncio.get_running_loop().create_future()
        self._creating[key] = future
        try:
            group = await self._build(key, parsed)
        except BaseException as exc:
            future.set_exception(
                exc if isinstance(exc, Exception) else UnavailableError()
            )
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        else:
            future.set_result(group)
            return group
        finally:
            self._creating.pop(key, None)

    async def _build(
        self, key: tuple[str, ...], parsed: Mapping[str, Channel]
    ) -> Group:
        if not self.bus.up:
            raise UnavailableError("the bus is down")
        clock = time.perf_counter
        started = clock()
        take, get = self._take, parsed.get
        states = [take(uri, get(uri)) for uri in key]
        taken = clock()
        # the new channels' subscriptions in one write (no task or loop turn each)
        fresh = [state for state in states if state.refs == 1 and state.subs is None]
        if fresh:
            on_value, on_meta = self._on_value, self._on_meta
            entries: list[tuple[str, Callable[[bytes, bytes], None]]] = []
            for state in fresh:
                entries.append((state.val_subject, partial(on_value, state)))
                entries.append((state.meta_subject, partial(on_meta, state)))
            try:
                sids = await self.bus.subscribe_many(entries)
            except Exception as exc:
                self._release(states)
                raise UnavailableError(f"cannot subscribe: {exc}") from exc
            except BaseException:
                self._release(states)
                raise
            for index, state in enumerate(fresh):
                state.subs = (sids[2 * index], sids[2 * index + 1])
                self.demand.add(state.channel)
        subscribed = clock()
        read = FillTimes()
        try:
            missing = [s for s in states if s.value is None or s.meta is None]
            if missing:
                # live first, then the store (after a barrier, see _fill): a value
                # is then either in the store's answer or delivered live
                read = await self._fill(missing)
        except Exception as exc:
            self._release(states)
            raise UnavailableError(f"the bus did not answer: {exc}") from exc
        except BaseException:
            self._release(states)
            raise
        sid, self._next_sid = self._next_sid, self._next_sid + 1
        group = Group(self, sid, key, states)
        now = time.monotonic()
        is_silent = self.liveness.is_silent
        for index, state in enumerate(states):
            state.listeners[group] = index
            if state.key is not None and is_silent(state.key[0], now):
                group.stale.add(index)
        self.groups[key] = group
        if fresh and self.settle_reads:
            self._spawn(self._settle(fresh))
        ms = 1000.0
        log.info(
            "group %d: %d channels (%d subscribed anew, %d read): states %.1f ms, "
            "subscribe %.1f ms, barrier %.1f ms, read %.1f ms, merge %.1f ms",
            sid, len(key), len(fresh), len(missing), (taken - started) * ms,
            (subscribed - taken) * ms, read.barrier * ms, read.fetch * ms,
            read.merge * ms,
        )  # fmt: skip
        return group

    @property
    def settle_reads(self) -> bool:
        """Whether new subscriptions get a second store read ``settle`` s after
        their snapshot: ``settings.settle_read``, or (unset) when the NATS server
        is part of a cluster."""
        wanted = self.settings.settle_read
        return self.bus.clustered if wanted is None else wanted

    async def _settle(self, states: list[ChannelState]) -> None:
        """The second store read of channels subscribed anew (NATS cluster).

        On a cluster a value published on another node just before that node
        learns of a new subscription is not delivered live, and it may reach the
        stream leader after the barrier (ADR 0009): neither live nor in the
        snapshot. A route hop later it is stored; this read (after a barrier of
        its own) merges it by ``(ep, seq)`` and a newer value goes to the groups
        as an ordinary update, before the channel's next live update as long as
        that comes more than ``settle`` s after the snapshot."""
        await asyncio.sleep(self.settings.settle)
        states = [state for state in states if state.subs is not None]
        if not states or not self.bus.up:
            return
        try:
            times = await self._fill(states)
        except Exception as exc:  # the next live update brings the channel up to date
            log.warning("settle read of %d channels failed: %s", len(states), exc)
            return
        self.stats.settle_reads += 1
        self.stats.settle_updates += times.newer

    async def _store_barrier(self) -> int:
        """Make sure the store holds every message published before the
        subscriptions sent so far; return the barrier's stream sequence (0 when
        the stream takes no barriers: then only a round trip, as before).

        A value published just before a new SUB reaches the stream but not the
        SUB; the stream's ingest may still hold it when a Direct Get answers, and
        it would then be neither in the snapshot nor live (a one-update gap). An
        acknowledged publish into the stream after the SUB is stored after it."""
        timeout = self.settings.snapshot_timeout
        if self.settings.snapshot_barrier and time.monotonic() >= self._barrier_after:
            try:
                return await self.bus.barrier(min(timeout, BARRIER_TIMEOUT))
            except StoreError as exc:  # an older stream layout, or permissions
                self._barrier_after = time.monotonic() + BARRIER_RETRY_AFTER
                log.warning(
                    "no store barrier for %.0f s (snapshots may miss one update; "
                    "does the stream take %s, may this user publish it?): %s",
                    BARRIER_RETRY_AFTER, self.bus.barrier_subject, exc,
                )  # fmt: skip
        await self.bus.flush(timeout)
        return 0

    async def _fill(self, states: list[ChannelState]) -> FillTimes:
        """Read the store for ``states`` (after a barrier); newer-than-known
        values win (and go to the channels' groups as updates)."""
        subjects = [s for st in states for s in (st.val_subject, st.meta_subject)]
        times = FillTimes()
        clock = time.perf_counter
        began = clock()
        barrier = await self._store_barrier()
        started = clock()
        times.barrier = started - began
        # Requests of at most 1024 subjects, each consistent by itself, all at once:
        # merging by (ep, seq) per channel needs no consistency across requests.
        # Each also asks for the barrier's subject (never an empty 404 answer, which
        # says nothing of how far the answering replica is).
        size = MAX_SUBJECTS_PER_REQUEST - (1 if barrier else 0)
        chunks = [subjects[i : i + size] for i in range(0, len(subjects), size)]
        timeout = self.settings.snapshot_timeout
        results = await asyncio.gather(
            *(self._fetch_after(chunk, barrier, timeout) for chunk in chunks),
            return_exceptions=True,
        )
        messages: dict[str, bytes] = {}
        for result in results:
            if isinstance(result, BaseException):  # those values then arrive live
                log.warning("last-value read failed: %s", result)
            else:
                messages.update(result.messages)
        merging = clock()
        times.fetch = merging - started
        self.stats.snapshot_seconds.observe(merging - started)
        on_value, on_meta = self._on_value, self._on_meta
        get = messages.get
        newer = 0
        for state in states:
            raw = get(state.val_subject)
            if raw is not None:
                known = state.key
                on_value(state, b"", raw)
                newer += state.key is not known
            raw = get(state.meta_subject)
            if raw is not None:
                on_meta(state, b"", raw)
        times.newer = newer
        times.merge = clock() - merging
        return times

    async def _fetch_after(
        self, subjects: list[str], barrier: int, timeout: float
    ) -> Snapshot:
        """One batched read from a replica that has stored the barrier: a
        follower answering Direct Get may lag the leader; its reply says up to
        which sequence it answered (``Nats-UpTo-Sequence``), read again if short."""
        if barrier:
            subjects = [*subjects, self.bus.barrier_subject]
        snapshot = await self.bus.fetch(subjects, timeout)
        for attempt in range(BARRIER_RETRIES):
            if snapshot.up_to_seq >= barrier:
                break
            self.stats.snapshot_rereads += 1
            await asyncio.sleep(0.001 * 2**attempt)
            snapshot = await self.bus.fetch(subjects, timeout)
        else:
            if snapshot.up_to_seq < barrier:
                log.warning(
                    "store replica behind the barrier (%d < %d): snapshot may miss "
                    "an update", snapshot.up_to_seq, barrier,
                )  # fmt: skip
        return snapshot

    # ----------------------------------------------------------- channels

    def _take(self, uri: str, channel: Channel | None = None) -> ChannelState:
        """The channel's state, one reference more (created without a
        subscription when new: :meth:`_build` subscribes those); ``channel`` is
        ``uri`` parsed, if the caller has it."""
        state = self.channels.get(uri)
        if state is None:
            state = self.channels[uri] = ChannelState(
                channel or parse_channel(uri), self.subjects.prefix
            )
        elif not state.refs:  # lingering: subscribed and current, taken back
            self._lingering.pop(state, None)
        state.refs += 1
        return state

    def _release(self, states: Iterable[ChannelState]) -> None:
        """One reference less each; a channel nobody watches lingers (keeps its
        subscriptions) for ``settings.linger`` s, at most ``settings.linger_max``
        channels (the oldest go first), then it is dropped."""
        linger = self.settings.linger if self.bus.up else 0.0
        lingering = self._lingering
        deadline = asyncio.get_running_loop().time() + linger
        dropped: list[ChannelState] = []
        for state in states:
            state.refs -= 1
            if state.refs > 0:
                continue
            if linger > 0 and state.subs is not None:
                lingering[state] = deadline
            else:
                dropped.append(state)
        excess = len(lingering) - max(0, self.settings.linger_max)
        if excess > 0:
            oldest = list(islice(lingering, excess))
            for state in oldest:
                del lingering[state]
            dropped.extend(oldest)
        self._drop(dropped)
        self._arm_linger()

    def _arm_linger(self) -> None:
        if self._linger_timer is None and self._lingering:
            first = next(iter(self._lingering.values()))
            self._linger_timer = asyncio.get_running_loop().call_at(
                first + LINGER_SLACK, self._sweep_linger
            )

    def _sweep_linger(self) -> None:
        """Drop the lingering channels whose time is up (in one unsubscribe)."""
        self._linger_timer = None
        now = asyncio.get_running_loop().time()
        expired: list[ChannelState] = []
        for state, deadline in self._lingering.items():
            if deadline > now:
                break  # in deadline order
            expired.append(state)
        for state in expired:
            del self._lingering[state]
        self._drop(expired)
        self._arm_linger()

    def _drop(self, states: list[ChannelState]) -> None:
        """Forget channels nobody watches; their subscriptions go in one write."""
        unsubscribe: list[int] = []
        for state in states:
            if self.channels.get(state.uri) is state:
                del self.channels[state.uri]
            self.demand.remove(state.channel)
            if state.subs is not None:
                unsubscribe.extend(state.subs)
                state.subs = None
        if unsubscribe:  # in one write, from one task
            self._spawn(self._unsubscribe(unsubscribe))

    def _on_value(self, state: ChannelState, subject: bytes, raw: bytes) -> None:
        """A value of ``state``'s channel: live (``subject`` is the NATS subject) or
        from the store (``subject`` empty)."""
        try:
            ep, seq, t = value_order(raw)  # the rest is forwarded as it came
        except ContractError:
            self.stats.bad_payloads += 1
            return
        known = state.key  # values move forward in (ep, seq) only
        if known is not None and ep == known[0]:
            if seq <= known[1]:
                return  # known (a store answer after a live update, or a replay)
        elif known is not None and ep < known[0]:
            return  # from an older source epoch
        else:  # a new source epoch for this channel
            self.liveness.saw(ep, time.monotonic())
        state.key = (ep, seq)
        state.value = raw
        if subject:
            self.stats.updates_in += 1
        for group, index in state.listeners.items():
            group.push_value(index, raw, t)

    def _on_meta(self, state: ChannelState, _subject: bytes, raw: bytes) -> None:
        try:
            key = meta_order(raw)  # the rest is forwarded as it came
        except ContractError:
            self.stats.bad_payloads += 1
            return
        if state.meta_key is not None and key <= state.meta_key:
            return
        state.meta_key = key
        state.meta = raw
        for group, index in state.listeners.items():
            group.push_meta(index, raw)

    # ----------------------------------------------------------- bus state

    async def bus_down(self) -> None:
        """NATS lost: tell every socket; they stay open. Lingering channels are
        dropped (their values would need a fresh read anyway)."""
        lingering, self._lingering = list(self._lingering), {}
        self._drop(lingering)
        down = frames.bus(False)
        packed, text = frames.pack(down), frames.to_json(down)
        for session in list(self.sessions):
            session.push_control(text if session.json else packed)

    async def bus_up(self) -> None:
        """NATS back: re-read every watched channel, then send ``bus`` up and a
        fresh snapshot of every group to its sockets."""
        self.liveness.restart_grace(time.monotonic())
        states = list(self.channels.values())
        if states:
            await self._fill(states)
        self.demand.announce_all()
        up = frames.bus(True)
        packed, text = frames.pack(up), frames.to_json(up)
        for session in list(self.sessions):
            session.push_control(text if session.json else packed)
        for group in list(self.groups.values()):
            group.flush()
            group.push_snap(group.members, None)

    # ----------------------------------------------------------- liveness

    async def _watch_liveness(self) -> None:
        """Follow the adapters' heartbeats; every ``liveness_check`` seconds tell
        groups which channels lost or regained their source."""
        subject = self.subjects.hb("*").rsplit(".", 1)[0] + ".>"
        while True:
            try:
                await self.bus.wait_connected(None)
                await self.bus.subscribe(subject, self._on_heartbeat)
                break
            except Exception as exc:  # dropped meanwhile: try again
                log.warning("heartbeat subscription: %s", exc)
                await asyncio.sleep(1.0)
        with contextlib.suppress(Exception):
            await self.bus.flush()  # (replayed by the bus after a reconnect)
        self.liveness.start(time.monotonic())
        period = self.settings.liveness_check
        last = time.monotonic()
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            late, last = now - last > 4 * period, now
            if late or not self.bus.up:
                # a stalled loop has heartbeats waiting unread; a lost bus has none
                continue
            try:
                self.check_liveness(now)
            except Exception:  # never let a bug end the watch
                log.exception("liveness check failed")

    def _on_heartbeat(self, subject: bytes, data: bytes) -> None:
        try:
            msg = decode_heartbeat(data)
        except ContractError:
            self.stats.bad_payloads += 1
            return
        self.liveness.beat(msg["id"], msg["ep"], float(msg["period"]), time.monotonic())

    def check_liveness(self, now: float) -> None:
        """Send ``src`` frames for what changed since the last check."""
        silent = self.liveness.silent_epochs(now)
        wanted: dict[Group, set[int]] = {}
        stale_channels = 0
        if silent:
            for state in self.channels.values():
                if state.key is not None and state.key[0] in silent:
                    stale_channels += 1
                    for group, index in state.listeners.items():
                        wanted.setdefault(group, set()).add(index)
        self._stale_channels = stale_channels
        for group in list(self.groups.values()):
            target = wanted.get(group)
            if not group.stale and not target:
                continue
            target = target or set()
            if target == group.stale:
                continue
            group.flush()  # updates queued before the change go out first
            lost = sorted(target - group.stale)
            back = sorted(group.stale - target)
            group.stale = target
            if lost:
                group.send_src(lost, False)
            if back:
                group.send_src(back, True)

    # ----------------------------------------------------------- stalls

    async def _watch_stalls(self) -> None:
        loop = asyncio.get_running_loop()
        period = max(0.05, min(1.0, self.settings.stall_timeout / 4))
        while True:
            await asyncio.sleep(period)
            now = loop.time()
            for session in list(self.sessions):
                since = session.sending_since
                if since is not None and now - since > self.settings.stall_timeout:
                    session.close_slow()

    async def _unsubscribe(self, sids: list[int]) -> None:
        with contextlib.suppress(Exception):
            await self.bus.unsubscribe_many(sids)
