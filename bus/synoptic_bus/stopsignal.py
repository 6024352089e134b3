"""SIGTERM and SIGINT as a flag and a self-pipe: safe whenever they land.

A Python signal handler runs in the main thread between two bytecodes, possibly
while that thread holds a lock (a ``threading.Event``'s, a ``Condition``'s, the
logging module's). A handler that takes the same lock (``Event.set()``) then
deadlocks the process. :class:`StopSignals`' handler takes no lock: it assigns
the signal's number and writes one byte to a non-blocking pipe, which wakes
:meth:`StopSignals.wait` (``select`` on the pipe). Processes with an asyncio loop
use the loop's own handlers (``loop.add_signal_handler``) instead.

The usual shape of a process that stops on a signal::

    signals = StopSignals()  # in the main thread, before any work starts
    worker = threading.Thread(target=start_and_serve, daemon=True)
    worker.start()
    signals.wait()           # the main thread only waits for the signal
    stop_everything()
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Iterable
from types import FrameType


class StopSignals:
    """Catches ``signals`` (SIGTERM and SIGINT by default) from now on.

    :attr:`received` is the number of the first signal caught (None before);
    :attr:`count` how many were caught. Construct it in the main thread."""

    def __init__(
        self, signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        self.received: int | None = None
        self.count = 0
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in signals}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # No lock, no allocation that can block: a plain assignment and a write.
        if self.received is None:
            self.received = signum
        self.count += 1
        with contextlib.suppress(OSError):  # full pipe: it wakes the waiter anyway
            os.write(self._write, b"\0")

    @property
    def stopping(self) -> bool:
        """Whether a stop signal has been caught."""
        return self.received is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a signal is caught or ``timeout`` passes; whether one was.

        Only the main thread sees its signals' handlers run (Python runs them
        there); a wait in another thread still returns when one is caught."""
        if self.received is None:
            with contextlib.suppress(InterruptedError):
                select.select([self._read], [], [], timeout)
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._read, 512):
                pass
        return self.received is not None

    def wake(self) -> None:
        """Wake :meth:`wait` without a signal (another thread's work is done)."""
        with contextlib.suppress(OSError):
            os.write(self._write, b"\0")

    def restore(self) -> None:
        """Put the handlers back as they were and close the pipe."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
