"""The hub: the channels, groups and sockets of one gateway, and the paths between
them. Data flows one way: bus → channel states (:mod:`.channels`) → groups
(:mod:`.group`) → sessions (:class:`~synoptic_gateway.member.Member`) → sockets.

Guarantees:
- one NATS subscription per channel, however many groups watch it; it is made for
  the first group and dropped with the last (reference-counted, lingering a while:
  :mod:`synoptic_gateway.channels`, :mod:`synoptic_gateway.linger`); a failed
  subscription rolls back what the group had taken;
- per channel, values only move forward in ``(ep, seq)``: a live update and the
  last-value store's answer (:mod:`synoptic_gateway.store_fill`) may arrive in any
  order, the newer one wins and none is sent twice or out of order;
- a socket's snapshot of a group is queued before any update of the group that
  is not in it;
- a group's batch is encoded once and the same bytes go to every socket of the
  group (:mod:`synoptic_gateway.group`); delivering to a socket never awaits;
- channels whose adapter stopped beating are reported to their groups
  (:mod:`synoptic_gateway.source_watch`); a socket whose send is stuck is closed
  (:mod:`synoptic_gateway.stalls`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Mapping
from typing import Any

from synoptic_bus.liveness import Liveness
from synoptic_gateway.bus import Bus
from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.channels import Channels
from synoptic_gateway.demand import Demand
from synoptic_gateway.group import Group, Points
from synoptic_gateway.member import Member
from synoptic_gateway.metrics import Stats
from synoptic_gateway.settings import Settings
from synoptic_gateway.shift import ShiftGroup
from synoptic_gateway.source_watch import SourceWatch
from synoptic_gateway.stalls import close_stalled
from synoptic_gateway.store_fill import FillTimes, StoreFill
from synoptic_schemas import Subjects, frames
from synoptic_schemas.channels import Channel

#: A group's identity: its channel set, reduced arrays and shift form or not.
GroupIdent = tuple[tuple[str, ...], Points, bool]

log = logging.getLogger(__name__)

#: Settle reads of channels subscribed anew on a cluster; each after ``SETTLE_BACKOFF``
#: times the delay of the one before, of the channels still silent since their
#: snapshot (25 ms, 250 ms, 2.5 s by default).
SETTLE_READS = 3
SETTLE_BACKOFF = 10.0


class UnavailableError(Exception):
    """The bus is down or refused a subscription: the request cannot be served."""


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
        #: (channel set, reduced arrays) -> its group
        self.groups: dict[GroupIdent, Group] = {}
        self.sessions: set[Member] = set()
        self.demand = Demand(bus, self.subjects, settings.want_lease, gateway_id)
        self.liveness = Liveness(settings.liveness_misses, settings.heartbeat_period)
        self.channels = Channels(
            bus, settings, stats, self.liveness, self.demand, self._spawn
        )
        self.store = StoreFill(
            bus, settings, stats, self.channels.on_value, self.channels.on_meta
        )
        self.sources = SourceWatch(
            bus, self.subjects, settings, stats, self.liveness,
            self.channels.by_uri, self.groups,
        )  # fmt: skip
        self._creating: dict[GroupIdent, asyncio.Future[Group]] = {}
        self._next_sid = 1
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watchdog: asyncio.Task[None] | None = None
        self._liveness_task: asyncio.Task[None] | None = None

    # ----------------------------------------------------------- lifecycle

    def start(self) -> None:
        self.demand.start()
        self._watchdog = asyncio.create_task(
            close_stalled(self.sessions, self.settings.stall_timeout), name="stalls"
        )
        self._liveness_task = asyncio.create_task(self.sources.run(), name="liveness")

    async def close(self) -> None:
        self.demand.stop()
        if self._watchdog:
            self._watchdog.cancel()
        if self._liveness_task:
            self._liveness_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        self.channels.linger.close()

    def gauges(self) -> dict[str, float]:
        """Current sizes, for ``/metrics``."""
        return {
            "connections": len(self.sessions),
            "conflating_sockets": sum(1 for s in self.sessions if s.conflating),
            "groups": len(self.groups),
            "nats_subscriptions": self.channels.subscribed(),
            "channels": len(self.channels),
            "lingering_channels": len(self.channels.linger),
            "bus_up": 1.0 if self.bus.up else 0.0,
            "silent_adapters": len(self.liveness.silent_adapters(time.monotonic())),
            "stale_channels": self.sources.stale_channels,
        }

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ----------------------------------------------------------- groups

    async def join(
        self,
        session: Member,
        key: tuple[str, ...],
        req_id: Any,
        parsed: Mapping[str, Channel] | None = None,
        points: Points = (),
        shift: bool = False,
    ) -> Group:
        """Add ``session`` to the group of channel set ``key`` with reduced arrays
        ``points`` and the shift form or not (``shift``), creating it, and queue
        its snapshot on the session before any update of the group. ``parsed`` may
        hold the channels of ``key``'s URIs already parsed."""
        ident = (key, points, shift)
        while True:
            group = self.groups.get(ident)
            if group is None:
                pending = self._creating.get(ident)
                if pending is not None:
                    group = await asyncio.shield(pending)
                else:
                    group = await self._create(key, parsed or {}, points, shift)
            if group.closed:  # emptied and dropped while we waited: make anew
                continue
            group.flush()  # members are up to date: the snapshot starts from here
            group.push_snap((session,), req_id)
            group.members[session] = None
            return group

    def leave(self, session: Member, group: Group) -> None:
        """Remove a session from a group; the last one out drops the group."""
        group.members.pop(session, None)
        if group.members or group.closed:
            return
        group.flush()
        group.closed = True
        self.groups.pop((group.key, group.points_key, group.shift), None)
        for state in group.states:
            state.listeners.pop(group, None)
        self.channels.release(group.states)

    async def _create(
        self,
        key: tuple[str, ...],
        parsed: Mapping[str, Channel],
        points: Points,
        shift: bool,
    ) -> Group:
        future: asyncio.Future[Group] = asyncio.get_running_loop().create_future()
        self._creating[key, points, shift] = future
        try:
            group = await self._build(key, parsed, points, shift)
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
            self._creating.pop((key, points, shift), None)

    async def _build(
        self,
        key: tuple[str, ...],
        parsed: Mapping[str, Channel],
        points: Points,
        shift: bool,
    ) -> Group:
        if not self.bus.up:
            raise UnavailableError("the bus is down")
        channels = self.channels
        clock = time.perf_counter
        started = clock()
        take, get = channels.take, parsed.get
        states = [take(uri, get(uri)) for uri in key]
        taken = clock()
        # the new channels' subscriptions in one write (no task or loop turn each)
        fresh = [state for state in states if state.refs == 1 and state.subs is None]
        if fresh:
            try:
                await channels.subscribe(fresh)
            except Exception as exc:
                channels.release(states)
                raise UnavailableError(f"cannot subscribe: {exc}") from exc
            except BaseException:
                channels.release(states)
                raise
        subscribed = clock()
        read = FillTimes()
        try:
            missing = [s for s in states if s.value is None or s.meta is None]
            if missing:
                # live first, then the store (after a barrier, see StoreFill): a
                # value is then either in the store's answer or delivered live
                read = await self.store.fill(missing)
        except Exception as exc:
            channels.release(states)
            raise UnavailableError(f"the bus did not answer: {exc}") from exc
        except BaseException:
            channels.release(states)
            raise
        sid, self._next_sid = self._next_sid, self._next_sid + 1
        group = (ShiftGroup if shift else Group)(
            sid, key, states, self.stats,
            self.batch_s, self.batch_max, self.large_value_bytes, points,
        )  # fmt: skip
        now = time.monotonic()
        is_silent = self.liveness.is_silent
        for index, state in enumerate(states):
            state.listeners[group] = index
            if state.key is not None and is_silent(state.key[0], now):
                group.stale.add(index)
        self.groups[key, points, shift] = group
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
        """The settle reads of channels subscribed anew (NATS cluster).

        On a cluster a value published on another node just before that node
        learns of a new subscription is not delivered live, and it may reach the
        stream leader after the barrier (ADR 0009): neither live nor in the
        snapshot. A route hop later it is stored; this read (after a barrier of
        its own) merges it by ``(ep, seq)`` and a newer value goes to the groups
        as an ordinary update, before the channel's next live update as long as
        that comes more than ``settle`` s after the snapshot.

        A route hop is longer on a loaded host, so the channels that are still
        silent (no live update, nothing newer read) are read again, up to
        ``SETTLE_READS`` times at growing delays: a slow channel's missed value
        would otherwise stay on screen until its next change, maybe hours later.
        A channel that has had an update needs no more: anything later is live."""
        delay = self.settings.settle
        silent = [(state, state.key) for state in states]  # with their snapshot's
        for _ in range(SETTLE_READS):
            await asyncio.sleep(delay)
            delay *= SETTLE_BACKOFF
            silent = [
                (s, key) for s, key in silent if s.subs is not None and s.key is key
            ]
            if not silent or not self.bus.up:
                return
            states = [state for state, _ in silent]
            try:
                times = await self.store.fill(states)
            except Exception as exc:  # the next live update brings them up to date
                log.warning("settle read of %d channels failed: %s", len(states), exc)
                return
            self.stats.settle_reads += 1
            self.stats.settle_updates += times.newer

    # ----------------------------------------------------------- bus state

    async def bus_down(self) -> None:
        """NATS lost: tell every socket; they stay open. Lingering channels are
        dropped (their values would need a fresh read anyway)."""
        self.channels.drop_lingering()
        down = frames.bus(False)
        packed, text = frames.pack(down), frames.to_json(down)
        for session in list(self.sessions):
            session.push_control(text if session.json else packed)

    async def bus_up(self) -> None:
        """NATS back: re-read every watched channel, then send ``bus`` up and a
        fresh snapshot of every group to its sockets."""
        self.liveness.restart_grace(time.monotonic())
        states = self.channels.states()
        if states:
            await self.store.fill(states)
        self.demand.announce_all()
        up = frames.bus(True)
        packed, text = frames.pack(up), frames.to_json(up)
        for session in list(self.sessions):
            session.push_control(text if session.json else packed)
        for group in list(self.groups.values()):
            group.flush()
            group.push_snap(group.members, None)
