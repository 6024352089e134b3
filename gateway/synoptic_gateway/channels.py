"""The channels one gateway watches: one :class:`ChannelState` each, shared by
every group that shows it.

Guarantees:
- one NATS subscription per channel (value and metadata subjects), however many
  groups watch it; made for the first group, kept lingering after the last
  (:mod:`synoptic_gateway.linger`), then dropped, together with its demand;
- per channel, values only move forward in ``(ep, seq)`` and metadata in
  ``(ep, t)``: a live update and the last-value store's answer may arrive in any
  order, the newer one wins and none is passed on twice or out of order.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Coroutine, Iterable
from functools import partial
from typing import Any

from synoptic_bus.liveness import Liveness
from synoptic_gateway.bus import Bus
from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.demand import Demand
from synoptic_gateway.linger import Linger
from synoptic_gateway.metrics import Stats
from synoptic_gateway.settings import Settings
from synoptic_schemas import ContractError, parse_channel
from synoptic_schemas.channels import Channel
from synoptic_schemas.frames import meta_order, value_order


class Channels:
    """Channel states by URI, reference-counted by the groups that show them."""

    def __init__(
        self,
        bus: Bus,
        settings: Settings,
        stats: Stats,
        liveness: Liveness,
        demand: Demand,
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.stats = stats
        self.liveness = liveness
        self.demand = demand
        self.by_uri: dict[str, ChannelState] = {}
        self.linger = Linger(self.drop)
        self._spawn = spawn

    def __len__(self) -> int:
        return len(self.by_uri)

    def states(self) -> list[ChannelState]:
        return list(self.by_uri.values())

    def subscribed(self) -> int:
        """Channels with a NATS subscription (watched or lingering)."""
        return sum(1 for s in self.by_uri.values() if s.subs)

    # ----------------------------------------------------------- references

    def take(self, uri: str, channel: Channel | None = None) -> ChannelState:
        """The channel's state, one reference more (created without a
        subscription when new: :meth:`subscribe` subscribes those); ``channel``
        is ``uri`` parsed, if the caller has it."""
        state = self.by_uri.get(uri)
        if state is None:
            state = self.by_uri[uri] = ChannelState(
                channel or parse_channel(uri), self.settings.prefix
            )
        elif not state.refs:  # lingering: subscribed and current, taken back
            self.linger.take_back(state)
        state.refs += 1
        return state

    async def subscribe(self, fresh: list[ChannelState]) -> None:
        """Subscribe the value and metadata subjects of channels taken anew, in
        one write (no task or loop turn each), and announce the demand."""
        on_value, on_meta = self.on_value, self.on_meta
        entries: list[tuple[str, Callable[[bytes, bytes], None]]] = []
        for state in fresh:
            entries.append((state.val_subject, partial(on_value, state)))
            entries.append((state.meta_subject, partial(on_meta, state)))
        sids = await self.bus.subscribe_many(entries)
        for index, state in enumerate(fresh):
            state.subs = (sids[2 * index], sids[2 * index + 1])
            self.demand.add(state.channel)

    def release(self, states: Iterable[ChannelState]) -> None:
        """One reference less each; a channel nobody watches lingers (keeps its
        subscriptions) for ``settings.linger`` s, at most ``settings.linger_max``
        channels (the oldest go first), then it is dropped."""
        linger = self.settings.linger if self.bus.up else 0.0
        parked: list[ChannelState] = []
        dropped: list[ChannelState] = []
        for state in states:
            state.refs -= 1
            if state.refs > 0:
                continue
            if linger > 0 and state.subs is not None:
                parked.append(state)
            else:
                dropped.append(state)
        dropped.extend(self.linger.park(parked, linger, self.settings.linger_max))
        self.drop(dropped)

    def drop(self, states: list[ChannelState]) -> None:
        """Forget channels nobody watches; their subscriptions go in one write."""
        unsubscribe: list[int] = []
        for state in states:
            if self.by_uri.get(state.uri) is state:
                del self.by_uri[state.uri]
            self.demand.remove(state.channel)
            if state.subs is not None:
                unsubscribe.extend(state.subs)
                state.subs = None
        if unsubscribe:  # in one write, from one task
            self._spawn(self._unsubscribe(unsubscribe))

    def drop_lingering(self) -> None:
        """Drop every lingering channel now (their values would need a fresh
        read anyway: the bus was lost)."""
        self.drop(self.linger.drain())

    async def _unsubscribe(self, sids: list[int]) -> None:
        with contextlib.suppress(Exception):
            await self.bus.unsubscribe_many(sids)

    # ----------------------------------------------------------- values

    def on_value(self, state: ChannelState, subject: bytes, raw: bytes) -> None:
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

    def on_meta(self, state: ChannelState, _subject: bytes, raw: bytes) -> None:
        """Metadata of ``state``'s channel, live or from the store."""
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
