"""StopSignals: a signal sets a flag and wakes the waiter, whatever the main
thread is doing; a second signal changes nothing."""

from __future__ import annotations

import os
import signal
import threading
import time

from synoptic_bus.stopsignal import StopSignals


def test_a_signal_wakes_the_waiter_and_is_remembered() -> None:
    signals = StopSignals()
    try:
        assert not signals.wait(0.01) and not signals.stopping
        killer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM))
        killer.start()
        started = time.monotonic()
        assert signals.wait(10)
        assert time.monotonic() - started < 5
        assert signals.received == signal.SIGTERM
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt, still SIGTERM
        assert signals.wait(0) and signals.count == 2
        assert signals.received == signal.SIGTERM
    finally:
        signals.restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_signals_landing_while_the_main_thread_holds_locks_never_block() -> None:
    """The deadlock of a handler calling Event.set(): signals sent in a burst while
    the main thread takes and releases an Event's lock in a loop."""
    signals = StopSignals()
    event = threading.Event()
    try:
        sender = threading.Thread(
            target=lambda: [os.kill(os.getpid(), signal.SIGTERM) for _ in range(200)]
        )
        sender.start()
        deadline = time.monotonic() + 10
        while sender.is_alive() and time.monotonic() < deadline:
            event.wait(0.0001)  # holds the Event's condition lock for a moment
        sender.join(10)
        assert not sender.is_alive()
        assert signals.wait(1) and signals.count >= 1
    finally:
        signals.restore()
