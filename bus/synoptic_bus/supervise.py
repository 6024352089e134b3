"""Keep child processes alive: restart one that exits, with backoff.

A :class:`Supervisor` starts each child (waiting for its readiness line), then
watches it from a thread of its own: ``popen.wait()`` reaps a child the moment it
exits (no zombie), the exit is logged with its code and uptime, and the child is
started again after a delay that doubles with each quick failure (``backoff_min``
up to ``backoff_max``) and returns to ``backoff_min`` once a child has stayed up
``stable`` seconds. :meth:`Supervisor.stop` stops every child, the last added
first, and no child is restarted after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from synoptic_bus.procs import Process, ProcessError

#: Starts a child process (without waiting for it to be ready).
Spawn = Callable[[], Process]


@dataclass
class Child:
    """One supervised child: how to start it and how it says it is ready."""

    name: str
    spawn: Spawn
    ready: str  # regex of the line that says it is ready
    ready_timeout: float = 60.0
    process: Process | None = None
    restarts: int = 0
    ready_at: float = 0.0
    backoff: float = 0.0
    watcher: threading.Thread | None = field(default=None, repr=False)


class Supervisor:
    """Starts children and restarts any that exits, until :meth:`stop`."""

    def __init__(
        self,
        log: Callable[[str], None] = print,
        *,
        backoff_min: float = 1.0,
        backoff_max: float = 30.0,
        stable: float = 30.0,
    ) -> None:
        self.log = log
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.stable = stable
        self.children: list[Child] = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    def add(self, child: Child) -> Process:
        """Start ``child``, wait until it is ready (raises :class:`ProcessError` if
        it exits or times out first), then keep it alive; returns its process."""
        child.backoff = self.backoff_min
        self.children.append(child)
        process = self._start(child)
        if process is None:
            raise ProcessError(f"{child.name}: the supervisor is stopping")
        child.watcher = threading.Thread(
            target=self._watch, args=(child,), daemon=True, name=f"watch-{child.name}"
        )
        child.watcher.start()
        return process

    def _start(self, child: Child) -> Process | None:
        """Spawn ``child`` and wait for its readiness line; None when stopping."""
        with self._lock:
            if self._stopping.is_set():
                return None
            process = child.process = child.spawn()
        try:
            process.wait_for(child.ready, timeout=child.ready_timeout)
        except ProcessError:
            if self._stopping.is_set():
                return None
            process.kill()
            raise
        child.ready_at = time.monotonic()
        return process

    def _watch(self, child: Child) -> None:
        while True:
            process = child.process
            assert process is not None
            code = process.popen.wait()  # reaps it: no zombie
            if self._stopping.is_set():
                return
            uptime = time.monotonic() - child.ready_at
            if uptime >= self.stable:
                child.backoff = self.backoff_min
            self.log(
                f"{child.name} (pid {process.pid}) exited with {code} after "
                f"{uptime:.1f} s; restarting in {child.backoff:.1f} s"
            )
            process.stop()  # its output reader and pipes
            while True:
                if self._stopping.wait(child.backoff):
                    return
                child.backoff = min(child.backoff * 2, self.backoff_max)
                try:
                    started = self._start(child)
                except ProcessError as exc:
                    first = str(exc).splitlines()[0]
                    self.log(
                        f"{child.name} failed to start again ({first}); "
                        f"next try in {child.backoff:.1f} s"
                    )
                    continue
                if started is None:
                    return
                child.restarts += 1
                self.log(
                    f"{child.name} restarted (pid {started.pid}, restart "
                    f"{child.restarts})"
                )
                break

    def stop(self) -> None:
        """Stop every child (the last added first); none is restarted after."""
        self._stopping.set()
        with self._lock:
            processes = [c.process for c in reversed(self.children) if c.process]
        for process in processes:
            process.stop()
        for child in self.children:
            if child.watcher is not None:
                child.watcher.join(10)
