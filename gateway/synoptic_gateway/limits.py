"""Per-connection limits that need state: the control-frame rate (token bucket)."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        """Spend one token; False when none is left (the frame is over the rate)."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False
