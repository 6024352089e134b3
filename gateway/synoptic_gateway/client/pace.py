"""The client's side of the gateway's frame rate limit: frames leave no faster than
the rate and burst the gateway announced in ``hello`` (``limits.rate``,
``limits.burst``), so a program asking in a loop is slowed down, not dropped (a
frame over the limit gets no answer: the gateway does not read it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

#: Share of the announced rate and burst the client uses: the gateway counts
#: frames as they arrive, and the network may bunch them up.
MARGIN = 0.9


class Pace:
    """A token bucket awaited before each frame (none before the first ``hello``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.rate = 0.0  # 0: not limited
        self.burst = 0.0
        self._tokens = 0.0
        self._last = clock()
        #: seconds spent waiting for the rate, in all
        self.waited = 0.0

    def limit(self, limits: Mapping[str, Any]) -> None:
        """Follow ``hello``'s ``limits`` (a new connection starts with a full bucket)."""
        rate, burst = limits.get("rate"), limits.get("burst")
        if not isinstance(rate, int | float) or rate <= 0:
            self.rate = 0.0
            return
        self.rate = float(rate) * MARGIN
        self.burst = max(
            float(burst if isinstance(burst, int | float) else 1) * MARGIN, 1.0
        )
        self._tokens, self._last = self.burst, self._clock()

    def delay(self) -> float:
        """Take one token; how long to wait before sending (0: at once)."""
        if not self.rate:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    async def wait(self) -> None:
        """Wait for this frame's turn."""
        if (delay := self.delay()) > 0:
            self.waited += delay
            await asyncio.sleep(delay)
