"""The alarm service: follows the transitions of the tree's channels, keeps each
alarm's state, answers acknowledge and shelve requests.

It holds nothing that the bus does not: at start it reads the latest state of
every alarm from ``CS_ALARM``, the tree from its bucket, and goes on with the
transitions its durable consumer of ``CS_SEV`` had not finished (ADR 0030). Only
one instance runs per deployment (its states are revisions of one writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NatsClient

from synoptic_alarms.feed import Feed, Transition, read_last, stream_seq
from synoptic_alarms.index import TreeIndex
from synoptic_alarms.model import NO_DATA, Alarm
from synoptic_alarms.publisher import SOURCE_HEADER, StatePublisher, source_of
from synoptic_alarms.requests import apply_request
from synoptic_alarms.settings import AlarmSettings
from synoptic_bus.alarmstore import AlarmStreams, ensure_stream
from synoptic_bus.alarmtree import TreeEntry, TreeStore, TreeStoreConfig
from synoptic_bus.liveness import Liveness
from synoptic_bus.store import StoreError, fetch_last, header, stream_name
from synoptic_schemas import (
    SCHEMA_VERSION,
    ContractError,
    DecodeError,
    Subjects,
    decode_heartbeat,
    decode_sev,
    decode_value,
    encode,
    parse_channel,
)
from synoptic_schemas.alarms import SYSTEM, decode_alarm, decode_alarm_request
from synoptic_schemas.alarmtree import AlarmTreeError, Entry, parse_tree_file

log = logging.getLogger(__name__)

#: Seconds between checks of adapter liveness, shelve expiry and silent channels.
TICK = 0.5
#: URIs per demand announcement.
DEMAND_CHUNK = 500
#: How long a request waits for its states to be stored before it is answered
#: "unavailable" (they are stored once NATS takes them; nothing is lost).
REQUEST_COMMIT_S = 8.0
#: Seconds before reading the current states again after a failed read.
COVER_RETRY_S = 5.0
#: Subjects read with batched Direct Gets at once (beyond: a consumer reads all).
FETCH_AT_ONCE = 4096
#: States not confirmed stored before reading more transitions waits for them.
MAX_UNSTORED = 50_000
#: Transitions applied between chances for requests to be served (a few ms).
SLICE = 200
#: Seconds a batch of transitions is read after the one before, at least: a steady
#: flow (transitions spread over every second, as channels change at their own
#: moments) is handled in a few batches of many, not in a hundred of a few, each
#: with its store barrier and ack (2 000 transitions a second spread so: 14 % of a
#: core read as they came, 8.8 % with 50 ms; a state reaches the bus 35 ms after
#: its transition at p50). A transition after a quiet spell is handled at once;
#: people's requests are served meanwhile, not gathered.
GATHER_S = 0.05


@dataclass
class ServiceStats:
    transitions: int = 0  # severity transitions read
    applied: int = 0  # transitions of tree channels applied
    replayed: int = 0  # transitions skipped: already applied before a restart
    malformed: int = 0
    requests: int = 0
    refused: int = 0  # requests refused whole (malformed)
    no_data: int = 0  # alarms shown as no data (adapter silent, nothing heard)


class AlarmService:
    """One running alarm service (see module doc)."""

    def __init__(
        self,
        nc: NatsClient,
        settings: AlarmSettings,
        *,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.nc = nc
        self.settings = settings
        self.clock = clock
        self.subjects = Subjects(settings.prefix)
        self.streams = AlarmStreams(
            settings.prefix, storage=settings.storage, replicas=settings.replicas
        )
        self.alarms: dict[str, Alarm] = {}
        self.index = TreeIndex(None)
        self.publisher = StatePublisher(nc, self.subjects, clock=clock)
        self.liveness = Liveness(misses=settings.misses)
        self.feed = Feed(nc, self.streams.sev_stream, settings.durable,
                         f"{settings.prefix}.sev.>")  # fmt: skip
        self.stats = ServiceStats()
        self.tree_store: TreeStore | None = None
        self.ready = asyncio.Event()
        self._by_ep: dict[int, set[str]] = defaultdict(set)
        self._silent: set[int] = set()
        self._shelved: set[str] = set()
        self._active: set[str] = set()
        self._unheard: dict[str, float] = {}  # listed channel -> loop time noticed
        #: transition subject -> its alarm, None: not in the tree (until it changes)
        self._alarm_of: dict[bytes, Alarm | None] = {}
        self._to_cover: set[str] = set()  # listed channels to read the state of
        self._cover_patterns = False
        self._cover_after = 0.0
        self._caught_up = False
        self._tasks: list[asyncio.Task[None]] = []
        self._acking: set[asyncio.Task[None]] = set()
        self._answering: set[asyncio.Task[None]] = set()
        self._subs: list[Any] = []
        self._alarm_head = f"{settings.prefix}.alarm.st."
        self._sev_head_len = len(f"{settings.prefix}.sev.")

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Read what the bus holds and start following it; :attr:`ready` is set
        once the backlog of transitions is handled and the current state of
        every channel of the tree is known."""
        await ensure_stream(self.nc, self.streams.sev_config())
        await ensure_stream(self.nc, self.streams.alarm_config())
        self.tree_store = await TreeStore.ensure(
            self.nc,
            TreeStoreConfig(self.settings.tree_bucket, self.settings.storage,
                            self.settings.replicas),
        )  # fmt: skip
        await self._restore()
        entry = await self.tree_store.latest()
        if entry.tree is None and self.settings.tree_file is not None:
            entry = await self._seed(self.tree_store)
        self.use_tree(entry)
        await self.feed.open()
        self.publisher.start()
        loop = asyncio.get_running_loop()
        self.liveness.start(loop.time())
        self._subs.append(await self.nc.subscribe(
            self.subjects.alarm_request(), cb=self._on_request))  # fmt: skip
        self._subs.append(await self.nc.subscribe(
            self.subjects.hb("*"), cb=self._on_heartbeat))  # fmt: skip
        for name, coro in (
            ("feed", self._feed_loop()), ("tree", self._tree_loop()),
            ("tick", self._tick_loop()), ("heartbeat", self._heartbeat_loop()),
            ("demand", self._demand_loop()),
        ):  # fmt: skip
            self._tasks.append(asyncio.create_task(coro, name=f"alarms-{name}"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        with contextlib.suppress(Exception):
            await self.publisher.commit(timeout=5.0)
        for task in list(self._answering):  # answered now, or asked again
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 1.0)
        for task in list(self._acking):  # acknowledged now, or delivered again
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 1.0)
        await self.publisher.stop()

    def on_reconnect(self) -> None:
        """NATS is back: heartbeats could not arrive meanwhile; the transitions
        and requests of the gap come through the durable consumer and the callers."""
        self.liveness.restart_grace(asyncio.get_running_loop().time())
        self.feed.reconnected()

    async def _seed(self, store: TreeStore) -> TreeEntry:
        path = self.settings.tree_file
        assert path is not None
        try:
            tree = parse_tree_file(await asyncio.to_thread(path.read_bytes))
            entry = await store.put(tree, 0, SYSTEM, f"seeded from {path.name}")
        except (OSError, AlarmTreeError) as exc:
            log.error("tree file %s not used: %s", path, exc)
            return await store.latest()
        except Exception as exc:  # written meanwhile by someone else
            log.info("tree not seeded from %s: %s", path, exc)
            return await store.latest()
        log.info("alarm tree seeded from %s (revision %d)", path, entry.revision)
        return entry

    # -- state from the stream ----------------------------------------------------------

    async def _restore(self) -> None:
        stream = self.streams.alarm_stream
        count = await read_last(
            self.nc, stream, self.subjects.alarms(), self._restore_one
        )
        log.info("restored %d alarm states from %s", count, stream)

    def _restore_one(self, subject: str, data: bytes, heads: bytes | None,
                     _sseq: int) -> None:  # fmt: skip
        try:
            msg = decode_alarm(data)
        except DecodeError as exc:
            log.warning("stored state %s unreadable: %s", subject, exc)
            return
        held = self.alarms.get(msg["ch"])
        if held is not None and held.n >= msg["n"]:
            return
        raw = header(heads, SOURCE_HEADER)
        sseq, ep, seq = source_of({SOURCE_HEADER: raw} if raw else None)
        alarm = Alarm.restore(dict(msg), ep, seq, sseq)
        alarm.subject = subject
        self.alarms[alarm.ch] = alarm
        if ep:
            self._by_ep[ep].add(alarm.ch)
        if alarm.shelf is not None:
            self._shelved.add(alarm.ch)
        if alarm.active:
            self._active.add(alarm.ch)

    # -- the tree ----------------------------------------------------------------------

    def use_tree(self, entry: TreeEntry) -> None:
        """Follow the channels of a tree revision: alarms that left it are
        published gone, alarms that moved get their new area, listed channels not
        known yet get their current state read."""
        index = TreeIndex(entry.tree, entry.revision)
        self._alarm_of.clear()
        patterns_changed = index.has_patterns and (
            self.index.tree is None
            or _patterns(index.tree) != _patterns(self.index.tree)
        )
        self.index = index
        for uri, alarm in list(self.alarms.items()):
            found = index.lookup(uri)
            if found is None:
                if alarm.n > 0 and not alarm.gone:
                    alarm.gone = True
                    self.changed(alarm, "tree")
                self._forget(uri)
                continue
            alarm.gone = False
            alarm.area, alarm.latch, alarm.desc = found.area, found.latch, found.desc
            self.changed(alarm, "tree")
        for uri, found in index.listed.items():
            if uri not in self.alarms:
                self._create(found)
                self._to_cover.add(uri)
        self._cover_patterns = self._cover_patterns or patterns_changed
        log.info("alarm tree revision %d: %d channels listed%s", entry.revision,
                 len(index.listed), ", patterns" if index.has_patterns else "")  # fmt: skip

    def _create(self, entry: Entry) -> Alarm:
        alarm = Alarm(entry.uri, entry.area, entry.latch, entry.desc)
        self.alarms[entry.uri] = alarm
        return alarm

    def _forget(self, uri: str) -> None:
        alarm = self.alarms.pop(uri, None)
        if alarm is not None:
            self._by_ep[alarm.ep].discard(uri)
        self._shelved.discard(uri)
        self._active.discard(uri)
        self._unheard.pop(uri, None)

    async def _tree_loop(self) -> None:
        assert self.tree_store is not None
        async for entry in self.tree_store.watch():
            if entry.revision != self.index.revision:
                self.use_tree(entry)

    # -- transitions -------------------------------------------------------------------

    async def _feed_loop(self) -> None:
        size = self.settings.batch
        loop = asyncio.get_running_loop()
        last = float("-inf")
        while True:
            wait = last + GATHER_S - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                batch = await self.feed.next_batch(size, timeout=1.0)
                last = loop.time()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "transitions not read (%s); binding the consumer again", exc
                )
                await self.feed.reset()
                await asyncio.sleep(0.5)
                continue
            for start in range(0, len(batch), SLICE):
                if start:  # people's requests are not kept waiting by a storm
                    await asyncio.sleep(0)
                for transition in batch[start : start + SLICE]:
                    self.apply(transition)
            if batch:
                # acknowledged once its states are stored; meanwhile the next
                # batch is read (the stored states of the next wait their turn)
                task = asyncio.create_task(
                    self._ack_when_stored(self.publisher.added, batch[-1])
                )
                self._acking.add(task)
                task.add_done_callback(self._acking.discard)
                if self.publisher.pending > MAX_UNSTORED:
                    await self.publisher.commit()
            if (
                len(batch) < size
                and (self._to_cover or self._cover_patterns)
                and asyncio.get_running_loop().time() >= self._cover_after
            ):
                await self._cover()
            if len(batch) < size and not self._caught_up:
                # heartbeats came behind the backlog: silence counts from now
                self.liveness.restart_grace(asyncio.get_running_loop().time())
                self._caught_up = True
                await self.publisher.commit()
                self.ready.set()
                log.info("alarm service %s ready: %d alarms, %d active", self.settings.id,
                         len(self.alarms), self.active_count())  # fmt: skip

    async def _ack_when_stored(self, target: int, last: Transition) -> None:
        await self.publisher.commit(target=target)
        try:
            await self.feed.ack(last)
        except Exception as exc:  # delivered again later: skipped by sseq
            log.debug("ack: %s", exc)

    def apply(self, transition: Transition) -> None:
        """Apply one transition of the stream."""
        self.stats.transitions += 1
        subject, data, reply = transition
        alarm = self._alarm_of.get(subject, _UNSEEN)
        if alarm is _UNSEEN:
            alarm = self._alarm_of_subject(subject)
        if alarm is None:
            return
        try:
            msg = decode_sev(data)
            sseq = stream_seq(reply)
        except (DecodeError, ValueError) as exc:
            self.stats.malformed += 1
            log.debug("transition on %r: %s", subject, exc)
            return
        self._source(msg, sseq, alarm)

    def _alarm_of_subject(self, subject: bytes) -> Alarm | None:
        """The alarm of a transition subject (made when the channel is in the
        tree and has none yet), or None; remembered until the tree changes."""
        try:
            uri = parse_channel_of(self.subjects, subject.decode())
        except (ContractError, UnicodeDecodeError):
            self.stats.malformed += 1
            return None  # not remembered: counted each time
        entry = self.index.lookup(uri)
        alarm = None
        if entry is not None:
            alarm = self.alarms.get(uri) or self._create(entry)
            if not alarm.subject:
                alarm.subject = (
                    self._alarm_head + subject[self._sev_head_len :].decode()
                )
        if len(self._alarm_of) > 2_000_000:
            self._alarm_of.clear()
        self._alarm_of[subject] = alarm
        return alarm

    def _source(self, msg: dict[str, Any], sseq: int, alarm: Alarm) -> None:
        ep, seq = msg["ep"], msg["seq"]
        if sseq and sseq <= alarm.sseq:
            self.stats.replayed += 1
            return
        if alarm.known and ep == alarm.ep and seq <= alarm.seq:
            alarm.sseq = max(alarm.sseq, sseq)  # a republished duplicate
            return
        if ep != alarm.ep:
            self._by_ep[alarm.ep].discard(alarm.ch)
            self._by_ep[ep].add(alarm.ch)
            self.liveness.saw(ep, asyncio.get_running_loop().time())
        alarm.ep, alarm.seq = ep, seq
        if sseq:
            alarm.sseq = sseq
        alarm.source(msg["sev"], msg["st"], msg["c"], msg["t"], msg.get("v"))
        self._unheard.pop(alarm.ch, None)
        self.stats.applied += 1
        self.changed(alarm, "sev")

    async def _cover(self) -> None:
        """Read the current state of the tree's channels nothing was heard of:
        their last transition in ``CS_SEV``, else their last value in the
        last-value store; listed channels still unheard of are watched."""
        listed, self._to_cover = self._to_cover, set()
        patterns, self._cover_patterns = self._cover_patterns, False
        wanted = [u for u in listed if (a := self.alarms.get(u)) and not a.known]
        sev_stream = self.streams.sev_stream
        try:
            if patterns or len(wanted) > FETCH_AT_ONCE:
                await read_last(self.nc, sev_stream, f"{self.settings.prefix}.sev.>",
                                self._cover_last)  # fmt: skip
            elif wanted:
                subjects = {self.subjects.sev(parse_channel(u)): u for u in wanted}
                snap = await fetch_last(self.nc, list(subjects), stream=sev_stream,
                                        headers=True, timeout=60)  # fmt: skip
                heads = snap.headers or {}
                for subject, data in snap.messages.items():
                    sseq = int(header(heads.get(subject), "Nats-Sequence") or 0)
                    self._cover_last(subject, data, None, sseq)
            rest = [u for u in wanted if not self.alarms[u].known]
            if rest:
                await self._cover_from_values(rest)
        except Exception as exc:
            log.warning("current states not read (%s): trying again in %g s",
                        exc, COVER_RETRY_S)  # fmt: skip
            self._to_cover |= listed
            self._cover_patterns = self._cover_patterns or patterns
            self._cover_after = asyncio.get_running_loop().time() + COVER_RETRY_S
            return
        now = asyncio.get_running_loop().time()
        for uri in wanted:
            alarm = self.alarms.get(uri)
            if alarm is not None and not alarm.known:
                self._unheard.setdefault(uri, now)

    def _cover_last(self, subject: str, data: bytes, _heads: bytes | None,
                    sseq: int) -> None:  # fmt: skip
        """One channel's last transition: its state, if nothing was heard of it."""
        key = subject.encode()
        alarm = self._alarm_of.get(key, _UNSEEN)
        if alarm is _UNSEEN:
            alarm = self._alarm_of_subject(key)
        if alarm is not None and not alarm.known:
            self._cover_state(alarm, data, sseq, True)

    async def _cover_from_values(self, uris: list[str]) -> None:
        """The last values of channels without a transition in ``CS_SEV`` (an
        adapter that started before the stream existed), from the last-value
        store when there is one, a few thousand at a time."""
        stream = stream_name(self.settings.prefix)
        for start in range(0, len(uris), FETCH_AT_ONCE):
            values = {self.subjects.val(parse_channel(u)): u
                      for u in uris[start : start + FETCH_AT_ONCE]}  # fmt: skip
            try:
                snap = await fetch_last(
                    self.nc, list(values), stream=stream, timeout=60
                )
            except StoreError as exc:
                log.info("no last values read (%s)", exc)
                return
            for subject, data in snap.messages.items():
                self._cover_one(values.get(subject), data, 0, False)

    def _cover_one(self, uri: str | None, data: bytes, sseq: int, sev: bool) -> None:
        entry = self.index.lookup(uri) if uri else None
        if entry is None:
            return
        alarm = self.alarms.get(entry.uri) or self._create(entry)
        if not alarm.known:
            self._cover_state(alarm, data, sseq, sev)

    def _cover_state(self, alarm: Alarm, data: bytes, sseq: int, sev: bool) -> None:
        try:
            msg: dict[str, Any] = dict(decode_sev(data) if sev else decode_value(data))
        except DecodeError:
            self.stats.malformed += 1
            return
        if not sev and not isinstance(msg.get("v"), int | float | bool | str):
            msg.pop("v", None)
        self._source(msg, sseq, alarm)

    # -- requests ----------------------------------------------------------------------

    async def _on_request(self, msg: Any) -> None:
        """Apply a request at once; its states go ahead of the bulk, and it is
        answered (from a task of its own) once they are stored."""
        self.stats.requests += 1
        now = self.clock()
        try:
            request = decode_alarm_request(msg.data, now)
        except DecodeError as exc:
            self.stats.refused += 1
            await self._reply(msg, {"ok": False, "n": 0, "err": "bad_request",
                                    "msg": str(exc)})  # fmt: skip
            return
        first = self.publisher.added
        reply = apply_request(request, self, now)
        task = asyncio.create_task(
            self._answer(msg, reply, range(first, self.publisher.added))
        )
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, msg: Any, reply: dict[str, Any], gens: range) -> None:
        try:
            await self.publisher.commit(timeout=REQUEST_COMMIT_S, gens=gens)
        except TimeoutError:
            reply = {"ok": False, "n": reply["n"], "err": "unavailable",
                     "msg": "the new states are not confirmed stored yet: NATS "
                     "does not answer (they will be stored once it does)"}  # fmt: skip
        await self._reply(msg, reply)

    def alarm_for(self, uri: str) -> Alarm | None:
        """The alarm of a channel of the tree (made when nothing was heard of it
        yet), or None when the channel is not in the tree."""
        alarm = self.alarms.get(uri)
        if alarm is not None:
            return alarm
        entry = self.index.lookup(uri)
        return self._create(entry) if entry is not None else None

    def changed(
        self, alarm: Alarm, ev: str, who: str = "", why: str = "", urgent: bool = False
    ) -> bool:
        """Publish ``alarm``'s state if it changed (the one way states leave;
        ``urgent``: a person's change, sent ahead of the bulk); keep the shelved
        and active sets."""
        if alarm.shelf is not None:
            self._shelved.add(alarm.ch)
        else:
            self._shelved.discard(alarm.ch)
        if not alarm.worth_publishing():
            return False
        self.publisher.add(alarm, ev, who, why, urgent)
        if alarm.active:
            self._active.add(alarm.ch)
        else:
            self._active.discard(alarm.ch)
        return True

    async def _reply(self, msg: Any, body: dict[str, Any]) -> None:
        if msg.reply:
            with contextlib.suppress(Exception):
                await self.nc.publish(
                    msg.reply, encode({"ver": SCHEMA_VERSION, **body})
                )

    # -- liveness, shelve expiry, silent channels --------------------------------------

    async def _on_heartbeat(self, msg: Any) -> None:
        try:
            beat = decode_heartbeat(msg.data)
        except DecodeError:
            return
        self.liveness.beat(beat["id"], beat["ep"], beat["period"],
                           asyncio.get_running_loop().time())  # fmt: skip

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            if self.nc.is_connected:
                self.tick(asyncio.get_running_loop().time())

    def tick(self, now: float) -> None:
        """Mark channels of silent adapters no data (and back when they beat
        again), end expired shelves, and show unheard-of listed channels."""
        wall = self.clock()
        silent = (
            self.liveness.silent_epochs(now) & set(self._by_ep)
            if self._caught_up  # before: heartbeats wait behind the backlog
            else self._silent
        )
        for ep in silent - self._silent:
            for uri in self._by_ep[ep]:
                alarm = self.alarms.get(uri)
                if alarm is not None and not alarm.no_data_shown:
                    alarm.no_data(wall)
                    self.stats.no_data += 1
                    self.changed(alarm, "nodata")
        for ep in self._silent - silent:
            for uri in self._by_ep.get(ep, ()):
                alarm = self.alarms.get(uri)
                if alarm is not None and alarm.revive():
                    self.changed(alarm, "sev")
        self._silent = silent
        for uri in list(self._shelved):
            alarm = self.alarms.get(uri)
            if alarm is None or alarm.shelf is None:
                self._shelved.discard(uri)
            elif alarm.shelf["until"] <= wall:
                alarm.unshelve()
                self.changed(alarm, "unshelve", SYSTEM, "shelve expired")
        limit = self.settings.no_data_after
        expired = []
        for uri, since in self._unheard.items():  # oldest first: stop at the young
            if now - since < limit:
                break
            expired.append(uri)
        for uri in expired:
            del self._unheard[uri]
            alarm = self.alarms.get(uri)
            if alarm is not None and not alarm.known and alarm.st != NO_DATA:
                alarm.no_data(wall)
                self.stats.no_data += 1
                self.changed(alarm, "nodata")

    # -- heartbeat and demand ----------------------------------------------------------

    def active_count(self) -> int:
        return len(self._active)

    async def _heartbeat_loop(self) -> None:
        period = self.settings.heartbeat_period
        while True:
            body = {"ver": SCHEMA_VERSION, "id": self.settings.id, "t": self.clock(),
                    "period": period, "n": len(self.alarms),
                    "act": self.active_count(), "tree": self.index.revision}  # fmt: skip
            with contextlib.suppress(Exception):
                await self.nc.publish(self.subjects.alarm_heartbeat(), encode(body))
            await asyncio.sleep(period)

    async def _demand_loop(self) -> None:
        """Announce the listed channels as wanted, so that adapters monitor them
        (the announcements are encoded once per tree revision)."""
        lease = self.settings.lease
        made: tuple[int, list[tuple[str, bytes]]] = (-1, [])
        while True:
            if made[0] != self.index.revision:
                made = (self.index.revision, demand_messages(
                    self.subjects, self.index.listed, lease, self.settings.id))  # fmt: skip
            if self.nc.is_connected:
                for i, (subject, data) in enumerate(made[1]):
                    with contextlib.suppress(Exception):
                        await self.nc.publish(subject, data)
                    if i % 20 == 19:
                        await asyncio.sleep(0)
            await asyncio.sleep(lease / 3)


_UNSEEN: Any = object()


def parse_channel_of(subjects: Subjects, subject: str) -> str:
    """The channel URI of a ``sev`` subject."""
    return subjects.parse(subject)[1].uri


def _patterns(tree: dict[str, Any]) -> list[tuple[str, ...]]:
    from synoptic_schemas.alarmtree import walk

    return [(p, *n.get("patterns", ())) for p, n, _, _ in walk(tree)]


def demand_messages(
    subjects: Subjects, uris: Iterable[str], lease: float, by: str
) -> list[tuple[str, bytes]]:
    """``cs.want.<proto>`` announcements of ``uris`` (chunks of
    :data:`DEMAND_CHUNK`)."""
    by_proto: dict[str, list[str]] = defaultdict(list)
    for uri in uris:
        by_proto[uri.partition("://")[0]].append(uri)
    out = []
    for proto, listed in by_proto.items():
        for i in range(0, len(listed), DEMAND_CHUNK):
            body = {"ver": SCHEMA_VERSION, "ch": listed[i : i + DEMAND_CHUNK],
                    "lease": lease, "by": by}  # fmt: skip
            out.append((subjects.want(proto), encode(body)))
    return out
