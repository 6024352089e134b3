"""Event unsubscription in the background, paced (decision 0010).

cppTango's event thread waits while a (un)subscription call runs, so thousands of
back-to-back calls stall every event of the process; and a DeviceProxy destroyed
while it still holds subscriptions has cppTango unsubscribe them after pytango
freed their callbacks. Hence:

- Releasing never waits: the caller hands ``(proxy, ids)`` over and its attributes
  stop publishing at once (their events are dropped by generation).
- One thread unsubscribes, ``chunk`` ids at a time under the process-wide
  subscription lock, pausing ``pause`` seconds between chunks so that events
  flow in between.
- The proxy stays referenced until its last id is unsubscribed, so it is never
  destroyed with live subscriptions.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

#: Unsubscription calls per chunk, and the pause between chunks (seconds).
CHUNK = 20
PAUSE = 0.02


class Unsubscriber:
    """Unsubscribes event ids in the background, a paced chunk at a time."""

    def __init__(
        self, lock: threading.Lock, *, chunk: int = CHUNK, pause: float = PAUSE
    ) -> None:
        self.lock = lock
        self.chunk = chunk
        self.pause = pause
        self.done = 0  # ids unsubscribed (or found gone) so far
        self._work: queue.SimpleQueue[tuple[Any, list[int]] | None] = (
            queue.SimpleQueue()
        )
        self._pending = 0
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        """Ids handed over and not unsubscribed yet."""
        return self._pending

    def submit(self, proxy: Any, ids: list[int]) -> None:
        """Unsubscribe ``ids`` of ``proxy`` soon (returns at once; any thread)."""
        if not ids or proxy is None:
            return
        with self._idle:
            self._pending += len(ids)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="tango-unsubscribe", daemon=True
                )
                self._thread.start()
        self._work.put((proxy, list(ids)))

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything handed over is unsubscribed; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Stop the thread after the work already handed over."""
        if self._thread is not None:
            self._work.put(None)

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            proxy, ids = item
            for start in range(0, len(ids), self.chunk):
                chunk = ids[start : start + self.chunk]
                with self.lock:
                    for event_id in chunk:
                        with contextlib.suppress(Exception):  # already gone
                            proxy.unsubscribe_event(event_id)
                with self._idle:
                    self._pending -= len(chunk)
                    self.done += len(chunk)
                    self._idle.notify_all()
                time.sleep(self.pause)
            del proxy, item  # the last reference may go here, in this thread
