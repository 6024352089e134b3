"""How much of a device's time the adapter may take: backoff and the read budget.

Pure functions and small classes (no Tango import), used by
:mod:`synoptic_adapters.tango.reads`; the rules are decision 0016.

A standard Tango device serialises requests: while it runs one read it answers
nothing else and its polling thread (which makes the change events) waits, for
every client. So the adapter's reads of a device are paid in device time:

- an attribute whose read was slow (over ``slow_after``) or timed out waits
  :func:`backoff_wait` before its next try: twice the spacing that would keep its
  share of the device at the budget, doubling with each bad read in a row, at most
  ``backoff_max``;
- :class:`DeviceTime` counts the time the device spent on the adapter's reads
  (overlapping reads once) and holds a token bucket of ``fraction`` of the time:
  reads of attributes in backoff wait while it is empty.
"""

from __future__ import annotations

from collections import deque

#: Seconds of history behind the busy fraction and the bucket's capacity
#: (``fraction`` × this many seconds of device time may be spent at once).
WINDOW = 60.0


def backoff_wait(cost: float, strikes: int, fraction: float, maximum: float) -> float:
    """Seconds before the next read of an attribute after its ``strikes``-th slow
    or timed-out read in a row (``strikes`` ≥ 1) kept the device ``cost`` seconds
    busy: ``2**strikes × cost / fraction``, at most ``maximum``. The first retry
    keeps the attribute's share of the device at half the budget, the next at a
    quarter, and so on."""
    return min(maximum, (2 ** max(1, strikes)) * cost / fraction)


def slow_status(took: float, slow_after: float, wait: float) -> str:
    """Status of a read that answered, slowly."""
    return f"read took {took:.1f} s (slow: over {slow_after:g} s); next try in {wait:.0f} s"


def timeout_status(
    timeout: float, wait: float, busy: float | None = None, *, busy_now: bool = False
) -> str:
    """Status of a read that timed out (``busy``: how long the device turned out
    to be busy with it, once known; ``busy_now``: the device still is, its pings
    time out)."""
    held = f" (the device was busy {busy:.1f} s with it)" if busy else ""
    if busy_now:
        held = " (the device is still busy with it: pings time out)"
    return f"read timed out after {timeout:.1f} s{held}; next try in {wait:.0f} s"


class DeviceTime:
    """The time one device spent on this adapter's reads, and the budget.

    :meth:`spent` is told each interval during which a read of ours held (or may
    have held) the device; overlaps count once. :meth:`fraction` is the busy share
    over the last :data:`WINDOW` seconds; :meth:`allows` says whether the token
    bucket (capacity ``fraction × WINDOW``, refilled at ``fraction`` per second,
    drawn by every read) is not in debt."""

    def __init__(self, budget: float, now: float) -> None:
        self.budget = budget
        self.capacity = budget * WINDOW
        self._tokens = self.capacity
        self._at = now
        self._counted_until = now  # end of the last interval counted
        self._spans: deque[tuple[float, float]] = deque()
        self.total = 0.0  # seconds counted since the start

    def spent(self, start: float, end: float) -> None:
        """The device worked for us from ``start`` to ``end`` (monotonic s)."""
        start = max(start, self._counted_until)
        if end <= start:
            return
        self._counted_until = end
        self._refill(end)
        self._tokens -= end - start
        self.total += end - start
        self._spans.append((start, end))
        self._forget(end)

    def _forget(self, now: float) -> None:
        """Drop the intervals that ended before the window (memory stays bounded
        whether or not anyone asks for the fraction)."""
        since = now - WINDOW
        while self._spans and self._spans[0][1] <= since:
            self._spans.popleft()

    def fraction(self, now: float) -> float:
        """Share of the last :data:`WINDOW` seconds the device spent on us."""
        since = now - WINDOW
        self._forget(now)
        busy = sum(min(end, now) - max(start, since) for start, end in self._spans)
        return max(0.0, busy) / WINDOW

    def allows(self, now: float) -> bool:
        """Whether an expensive read may start now (the bucket is not in debt)."""
        self._refill(now)
        return self._tokens >= 0

    def wait(self, now: float) -> float:
        """Seconds until :meth:`allows` (0 when it does now)."""
        self._refill(now)
        return max(0.0, -self._tokens / self.budget)

    def _refill(self, now: float) -> None:
        if now > self._at:
            self._tokens = min(
                self.capacity, self._tokens + (now - self._at) * self.budget
            )
            self._at = now
