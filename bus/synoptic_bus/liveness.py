"""Adapter liveness: which adapter epochs (``ep``) still beat.

Every adapter instance publishes a heartbeat on ``cs.hb.<id>`` every ``period``
seconds (its id, epoch ``ep`` and period); every value message carries the ``ep``
of the adapter instance that published it. An epoch is **silent** when its adapter
has sent no heartbeat for ``misses`` × its period; an epoch never heard of is
silent once ``misses`` × ``default_period`` have passed since the consumer began
listening and since it first saw a value of that epoch (the grace covers an adapter
that publishes its first values just before its first heartbeat). A channel whose
latest value came from a silent epoch has no live source.

Every epoch ever seen is remembered (one small entry per adapter start), so a
channel's epoch is always known here. Loop time is used throughout; a consumer
(the gateway's hub, the alarm service) checks :meth:`Liveness.silent_epochs` about
twice a second and pauses the checks while the bus is down (no heartbeat can
arrive then: :meth:`restart_grace` on reconnect).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass
class Epoch:
    """What the heartbeats of one adapter epoch said, and when."""

    adapter: str
    period: float
    last_beat: float


class Liveness:
    """Heartbeats by epoch, and the epochs that fell silent."""

    def __init__(self, misses: float = 3.0, default_period: float = 1.0) -> None:
        self.misses = misses
        self.default_period = default_period
        self.epochs: dict[int, Epoch] = {}
        self.latest: dict[str, int] = {}  # adapter id -> its newest epoch
        self._first_seen: dict[int, float] = {}  # epochs seen in values, not beats
        self._listening_since: float | None = None

    @property
    def grace(self) -> float:
        return self.misses * self.default_period

    def start(self, now: float) -> None:
        """The heartbeat subscription is active from ``now``."""
        self._listening_since = now

    def restart_grace(self, now: float) -> None:
        """After the bus was away: heartbeats could not arrive; count from ``now``."""
        self._listening_since = now
        for epoch in self.epochs.values():
            epoch.last_beat = max(epoch.last_beat, now)
        for ep in self._first_seen:
            self._first_seen[ep] = max(self._first_seen[ep], now)

    def beat(self, adapter: str, ep: int, period: float, now: float) -> None:
        """A heartbeat arrived."""
        epoch = self.epochs.get(ep)
        if epoch is None:
            self.epochs[ep] = Epoch(adapter, max(period, 0.001), now)
            self._first_seen.pop(ep, None)
            previous = self.latest.get(adapter)
            if previous is None or ep > previous:
                self.latest[adapter] = ep
            log.info("adapter %s epoch %d beats (period %g s)", adapter, ep, period)
        else:
            epoch.last_beat = now
            epoch.period = max(period, 0.001)

    def saw(self, ep: int, now: float) -> None:
        """A value of epoch ``ep`` was seen (called when a channel's epoch changes)."""
        if ep not in self.epochs and ep not in self._first_seen:
            self._first_seen[ep] = now

    def is_silent(self, ep: int, now: float) -> bool:
        """Whether values of ``ep`` have no live source now."""
        epoch = self.epochs.get(ep)
        if epoch is not None:
            return now - epoch.last_beat > self.misses * epoch.period
        if self._listening_since is None:
            return False  # not listening yet: nothing is known
        since = max(self._listening_since, self._first_seen.get(ep, float("-inf")))
        return now - since > self.grace

    def silent_epochs(self, now: float) -> set[int]:
        """Every epoch seen (in a heartbeat, or by :meth:`saw`) that is silent now."""
        return {
            ep for ep in (*self.epochs, *self._first_seen) if self.is_silent(ep, now)
        }

    def silent_adapters(self, now: float) -> list[str]:
        """Adapter ids whose newest epoch is silent (dead, hung or cut off)."""
        return sorted(
            adapter for adapter, ep in self.latest.items() if self.is_silent(ep, now)
        )
