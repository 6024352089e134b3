"""Watching the adapters' heartbeats: which channels lost or regained their source.

A channel whose latest value came from an adapter epoch that stopped beating is
reported to its groups' sockets (``src`` up false, ``snap.stale``) within about
``liveness_misses`` heartbeat periods plus ``liveness_check``, and cleared (``src``
up true) when that epoch beats again. The bookkeeping of epochs is
:mod:`synoptic_gateway.liveness`; this module subscribes the heartbeats and turns
silent epochs into ``src`` frames for the groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from synoptic_bus.liveness import Liveness
from synoptic_gateway.bus import Bus
from synoptic_gateway.channel_state import ChannelState, Listener
from synoptic_gateway.group import Group, Points
from synoptic_gateway.metrics import Stats
from synoptic_gateway.settings import Settings
from synoptic_schemas import ContractError, Subjects, decode_heartbeat

log = logging.getLogger(__name__)


@dataclass(eq=False)
class SourceWatch:
    """Heartbeats in, ``src`` frames out to the groups of ``groups``."""

    bus: Bus
    subjects: Subjects
    settings: Settings
    stats: Stats
    liveness: Liveness
    channels: Mapping[str, ChannelState]
    groups: Mapping[tuple[tuple[str, ...], Points], Group]
    #: channels whose value has no live source (at the last check)
    stale_channels: int = 0

    async def run(self) -> None:
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
                self.check(now)
            except Exception:  # never let a bug end the watch
                log.exception("liveness check failed")

    def _on_heartbeat(self, subject: bytes, data: bytes) -> None:
        try:
            msg = decode_heartbeat(data)
        except ContractError:
            self.stats.bad_payloads += 1
            return
        self.liveness.beat(msg["id"], msg["ep"], float(msg["period"]), time.monotonic())

    def check(self, now: float) -> None:
        """Send ``src`` frames for what changed since the last check."""
        silent = self.liveness.silent_epochs(now)
        wanted: dict[Listener, set[int]] = {}
        stale_channels = 0
        if silent:
            for state in self.channels.values():
                if state.key is not None and state.key[0] in silent:
                    stale_channels += 1
                    for group, index in state.listeners.items():
                        wanted.setdefault(group, set()).add(index)
        self.stale_channels = stale_channels
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
