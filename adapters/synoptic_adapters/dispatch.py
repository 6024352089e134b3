"""Fair, batched delivery of protocol events from library threads to the event loop.

A control-system library calls back in its own threads, once per update. Handing
each update to the loop separately (``call_soon_threadsafe`` per event) lets a
fast source starve every other task, the publisher included. Here each channel
is a :class:`Mailbox` that keeps only its newest undelivered event (a replaced one
is counted in ``merged``); mailboxes with news wait in one shared ready queue, and
the loop delivers at most ``BATCH`` of them per turn before yielding. Overload
thus costs counted, per-channel coalescing, never starvation or unbounded memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

#: Channels delivered per event-loop turn before other tasks get to run.
BATCH = 1000


#: While the sink holds more than this many undelivered events, delivery pauses
#: and updates coalesce per channel here (bounded by the channel count).
MAX_SINK_BACKLOG = 5_000
#: How long delivery pauses for a busy sink, seconds.
_BACKOFF = 0.002


class Dispatcher:
    """Carries channels with news from any thread to the event loop, in batches.

    ``backlog()`` tells how many events the sink still has to publish; above
    ``max_backlog`` delivery waits, so a slow publisher turns into per-channel
    coalescing (fresh values, counted merges) rather than a growing queue.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        backlog: Callable[[], int] = lambda: 0,
        max_backlog: int = MAX_SINK_BACKLOG,
        min_interval: float = 0.0,
    ) -> None:
        self.loop = loop
        self.backlog = backlog
        self.max_backlog = max_backlog
        #: Seconds between two drains: news arriving sooner waits, so that one
        #: wake-up of the loop delivers many channels (0: deliver at once).
        self.min_interval = min_interval
        self.ready: deque[Mailbox] = deque()
        self.scheduled = False
        self.pauses = 0
        self._last_drain = 0.0
        self._wake = self.drain if min_interval <= 0 else self._paced

    @classmethod
    def for_sink(cls, sink: object, min_interval: float = 0.0) -> Dispatcher:
        """A dispatcher on the running loop that pauses while ``sink`` is behind,
        if the sink tells its backlog (the Publisher's ``queued``)."""
        has_backlog = getattr(type(sink), "queued", None) is not None
        return cls(
            asyncio.get_running_loop(),
            backlog=(lambda: sink.queued) if has_backlog else (lambda: 0),  # type: ignore[attr-defined]
            min_interval=min_interval,
        )

    def notify(self, monitor: Mailbox) -> None:
        """Called from any thread when ``monitor`` has a value to deliver."""
        self.ready.append(monitor)
        if not self.scheduled:
            self.scheduled = True
            with contextlib.suppress(RuntimeError):  # loop closed at shutdown
                self.loop.call_soon_threadsafe(self._wake)

    def _paced(self) -> None:
        wait = self._last_drain + self.min_interval - self.loop.time()
        if wait > 0:
            self.loop.call_later(wait, self.drain)
        else:
            self.drain()

    def drain(self) -> None:
        """Deliver up to ``BATCH`` channels, then yield to the loop."""
        self._last_drain = self.loop.time()
        if self.backlog() > self.max_backlog:
            self.pauses += 1
            self.scheduled = True
            self.loop.call_later(_BACKOFF, self.drain)
            return
        self.scheduled = False
        ready = self.ready
        for _ in range(min(len(ready), BATCH)):
            monitor = ready.popleft()
            monitor.queued = False
            try:
                value = monitor.box.popleft()
            except IndexError:  # already delivered by an earlier turn
                continue
            monitor.deliver(value)
        if ready and not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.drain)


class Mailbox:
    """One channel's newest undelivered event; ``deliver`` runs in the loop."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.box: deque[Any] = deque(maxlen=1)
        self.queued = False
        self.merged = 0  # events replaced before delivery (loop behind)

    def put(self, value: Any) -> None:
        """Store the newest event and make sure the channel is queued (any thread)."""
        box = self.box
        if box:
            self.merged += 1
        box.append(value)
        if not self.queued:
            self.queued = True
            self.dispatcher.notify(self)

    def deliver(self, value: Any) -> None:
        """Handle one event in the loop (subclasses)."""
        raise NotImplementedError
