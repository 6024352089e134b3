"""Channels no group watches any more, kept subscribed until a deadline.

A screen re-opened meanwhile (a page reload) finds them subscribed and current (no
store read, no unsubscribe/subscribe), and a closing screen costs no unsubscribes
on the way of the next open. At most ``limit`` channels linger (the oldest go
first); those whose time is up are dropped together, in one sweep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from itertools import islice

from synoptic_gateway.channel_state import ChannelState

#: Seconds after a lingering channel's deadline before the sweep that drops it, so
#: that the channels of one screen are unsubscribed together (one write).
LINGER_SLACK = 0.1


class Linger:
    """Lingering channels, oldest first, each with its deadline (loop time);
    ``drop`` is called with those whose time is up."""

    def __init__(self, drop: Callable[[list[ChannelState]], None]) -> None:
        self._drop = drop
        self._deadlines: dict[ChannelState, float] = {}
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._deadlines)

    def take_back(self, state: ChannelState) -> None:
        """``state`` is watched again: it no longer lingers."""
        self._deadlines.pop(state, None)

    def park(
        self, states: list[ChannelState], seconds: float, limit: int
    ) -> list[ChannelState]:
        """Let ``states`` linger for ``seconds``; return the oldest lingering
        channels beyond ``limit``, no longer lingering (for the caller to drop)."""
        deadlines = self._deadlines
        deadline = asyncio.get_running_loop().time() + seconds
        for state in states:
            deadlines[state] = deadline
        evicted: list[ChannelState] = []
        excess = len(deadlines) - max(0, limit)
        if excess > 0:
            evicted = list(islice(deadlines, excess))
            for state in evicted:
                del deadlines[state]
        self._arm()
        return evicted

    def drain(self) -> list[ChannelState]:
        """Every lingering channel, no longer lingering."""
        states, self._deadlines = list(self._deadlines), {}
        return states

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _sweep(self) -> None:
        """Drop the lingering channels whose time is up (in one call)."""
        self._timer = None
        now = asyncio.get_running_loop().time()
        expired: list[ChannelState] = []
        for state, deadline in self._deadlines.items():
            if deadline > now:
                break  # in deadline order
            expired.append(state)
        for state in expired:
            del self._deadlines[state]
        self._drop(expired)
        self._arm()

    def _arm(self) -> None:
        if self._timer is None and self._deadlines:
            first = next(iter(self._deadlines.values()))
            self._timer = asyncio.get_running_loop().call_at(
                first + LINGER_SLACK, self._sweep
            )
