"""Children started through the fixture machinery (:class:`Process`,
:class:`NatsServer`) never outlive the process that started them, however it
ends: a pytest worker killed by pytest-timeout leaves nothing running."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time

from synoptic_bus.procs import Process

#: Starts a nats-server (main thread) and an echoing child from a thread that
#: ends at once (as ``asyncio.to_thread`` does), prints their pids, then waits.
_PARENT = """
import asyncio, sys
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process

nats = NatsServer().start()
echo = [sys.executable, "-c", "import sys\\nfor line in sys.stdin: print(line, end='', flush=True)"]

async def main():
    return await asyncio.to_thread(Process, "echo", echo, keep_stdin_open=True)

child = asyncio.run(main())  # its thread and the loop's executor are gone now
child.popen.stdin.write("still here\\n")
child.popen.stdin.flush()
child.wait_for("still here", 60)
print("pids", nats.process.pid, child.pid, flush=True)
sys.stdin.read()
"""

#: Seconds within which the children must be gone once their parent is killed.
GONE_WITHIN = 10.0


def _gone_within(pid_fds: list[int], timeout: float) -> list[int]:
    """The pidfds whose process has not ended within ``timeout`` seconds."""
    waiting, deadline = set(pid_fds), time.monotonic() + timeout
    while waiting and (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select(list(waiting), [], [], left)
        waiting -= set(ready)
    return sorted(waiting)


def test_children_end_when_their_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    fds: list[int] = []
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line.startswith("pids "), line
        pids = [int(p) for p in line.split()[1:]]
        fds = [os.pidfd_open(pid) for pid in pids]  # before the kill: no pid reuse
        assert _gone_within(fds, 0) == fds  # both running
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        started = time.monotonic()
        assert _gone_within(fds, GONE_WITHIN) == [], f"still running: {pids}"
        print(f"children gone {time.monotonic() - started:.3f} s after the kill")
    finally:
        parent.kill()
        parent.wait(30)
        for pipe in (parent.stdin, parent.stdout):
            if pipe is not None:
                pipe.close()
        for fd in fds:  # what a failure left running
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            os.close(fd)


def test_a_child_started_from_a_thread_outlives_that_thread() -> None:
    echo = [sys.executable, "-c",
            "import sys\nfor line in sys.stdin: print(line, end='', flush=True)"]  # fmt: skip
    started: list[Process] = []
    native: list[int] = []

    def start() -> None:
        native.append(threading.get_native_id())
        started.append(Process("echo", echo, keep_stdin_open=True))

    thread = threading.Thread(target=start)
    thread.start()
    thread.join(60)
    (child,) = started
    try:
        # the thread has ended in the kernel too (its parent-death signal, were
        # the child forked by it, is sent by then)
        deadline = time.monotonic() + 30
        while os.path.exists(f"/proc/self/task/{native[0]}"):
            assert time.monotonic() < deadline, "the starting thread did not end"
            time.sleep(0.01)
        assert child.popen.stdin is not None
        child.popen.stdin.write("alive\n")
        child.popen.stdin.flush()
        child.wait_for("^alive$", 30)
        assert child.alive()
    finally:
        child.stop()
