"""A CPU budget for the history service: at most a share of one core, on average.

Rewinds, playbacks and trends are CPU work (Python in the history thread or
process, and the bus server's work for its reads). A nice level only yields the
history's Python to the live loop where the CPUs are short; the bus server serves
both at the same priority. So the history service also paces itself: each
request waits, before its work, until the CPU its thread has used stays within
``share`` of one core (a burst of ``burst`` CPU seconds allowed), which bounds
its reads on the bus too. A busy history slows down (a playback's clock waits)
before the live viewers do. The history process uses it (ADR 0037); on the
gateway's thread the live loop waits for the GIL instead, which it does not bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class CpuBudget:
    """Paces the work of the thread it runs on to ``share`` of one core."""

    def __init__(
        self,
        share: float,
        burst: float = 0.1,
        *,
        cpu: Callable[[], float] = time.thread_time,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.share = share
        self._burst = burst
        self._cpu, self._clock, self._sleep = cpu, clock, sleep
        self._credit = burst
        self._last_cpu: float | None = None
        self._last_wall = 0.0
        self._lock: asyncio.Lock | None = None
        #: seconds requests waited for the budget, in all
        self.waited = 0.0

    def _refill(self) -> float:
        """The CPU seconds left to spend now (negative: owed)."""
        cpu, wall = self._cpu(), self._clock()
        if self._last_cpu is not None:
            earned = (wall - self._last_wall) * self.share
            spent = cpu - self._last_cpu
            self._credit = min(self._credit + earned - spent, self._burst)
        self._last_cpu, self._last_wall = cpu, wall
        return self._credit

    async def pace(self) -> None:
        """Return once the thread's CPU use is within the budget (at once where
        ``share`` is 0 or less: no budget)."""
        if self.share <= 0:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one at a time: each sees what those before spent
            while (credit := self._refill()) < 0:
                wait = -credit / self.share
                self.waited += wait
                await self._sleep(wait)  # the budget refills with time
