"""Counting a client's updates of counting channels (each value = previous + 1)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

#: At most this many latency samples are kept per client process.
MAX_LATENCIES = 200_000


@dataclass
class Tally:
    """Updates received in the window ``[start, end)`` (wall-clock seconds).

    ``delivered`` counts every update received in the window; ``value_gaps`` the
    counts skipped between consecutive updates of one channel (the previous one may
    predate the window); ``latencies`` holds receipt - source timestamp (seconds)."""

    start: float
    end: float
    delivered: int = 0
    value_gaps: int = 0
    latencies: list[float] = field(default_factory=list)
    _last: dict[Hashable, float] = field(default_factory=dict)

    def count(
        self, key: Hashable, value: float | None, stamp: float, now: float
    ) -> None:
        """One update of channel ``key``: ``value`` (``None`` if not a number) with
        source timestamp ``stamp`` received at ``now`` (both seconds since 1970)."""
        previous = self._last.get(key)
        if self.start <= now < self.end:
            self.delivered += 1
            if value is not None and previous is not None and value > previous + 1:
                self.value_gaps += int(value - previous - 1)
            if len(self.latencies) < MAX_LATENCIES:
                self.latencies.append(now - stamp)
        if value is not None:
            self._last[key] = value

    def report(self) -> dict[str, Any]:
        """The counts as JSON fields."""
        return {
            "delivered": self.delivered,
            "value_gaps": self.value_gaps,
            "latencies": self.latencies,
        }
