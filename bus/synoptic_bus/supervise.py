"""Keep child processes alive: restart one that exits, with backoff.

A :class:`Supervisor` starts each child (waiting for its readiness line), then
watches it from a thread of its own: ``popen.wait()`` reaps a child the moment it
exits (no zombie), the exit is logged with its code and uptime, and the child is
started again after a delay that doubles with each quick failure (``backoff_min``
up to ``backoff_max``) and returns to ``backoff_min`` once a child has stayed up
``stable`` seconds. :meth:`Supervisor.stop` stops every child at once (SIGTERM
to all, SIGKILL to those left after a bound); from the moment it is called no
child is started or restarted, and a start under way is undone.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from synoptic_bus.procs import Process, ProcessError, stop_all


class StoppingError(ProcessError):
    """The supervisor is stopping: nothing more starts."""


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
        #: one-shot commands running now (:meth:`run_once`)
        self._transient: list[Process] = []

    def add(self, child: Child) -> Process:
        """Start ``child``, wait until it is ready (raises :class:`ProcessError` if
        it exits or times out first), then keep it alive; returns its process."""
        child.backoff = self.backoff_min
        self.children.append(child)
        process = self._start(child)
        if process is None:
            raise StoppingError(f"{child.name}: the supervisor is stopping")
        child.watcher = threading.Thread(
            target=self._watch, args=(child,), daemon=True, name=f"watch-{child.name}"
        )
        child.watcher.start()
        return process

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` has been called."""
        return self._stopping.is_set()

    def _add_transient(self, process: Process) -> bool:
        """Keep ``process`` (just spawned) for :meth:`stop` to end; once stopping
        it is stopped here instead (:meth:`stop` may have missed it): False."""
        with self._lock:
            if not self._stopping.is_set():
                self._transient.append(process)
                return True
        process.stop(2)
        return False

    def run_once(self, name: str, argv: list[str], timeout: float) -> Process:
        """Run a command to its end (``bus init``); :meth:`stop` ends it too.
        Returns the exited process (its ``popen.returncode``, its output); raises
        :class:`ProcessError` when stopping or past ``timeout``."""
        if self._stopping.is_set():
            raise StoppingError(f"{name}: the supervisor is stopping")
        process = Process(name, argv)
        if not self._add_transient(process):
            raise StoppingError(f"{name}: the supervisor is stopping")
        try:
            process.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise ProcessError(f"{name} did not end in {timeout:.0f} s") from None
        finally:
            process.stop(2)
            with self._lock:
                self._transient.remove(process)
        if self._stopping.is_set():
            raise StoppingError(f"{name}: the supervisor is stopping")
        return process

    def _start(self, child: Child) -> Process | None:
        """Spawn ``child`` and wait for its readiness line; None when stopping."""
        if self._stopping.is_set():
            return None
        process = child.spawn()  # outside the lock: it may take a while (initdb)
        with self._lock:
            if self._stopping.is_set():
                process.stop(2)
                return None
            child.process = process
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

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every child together (SIGTERM, SIGKILL after ``timeout``); none is
        started or restarted from the moment this is called."""
        self._stopping.set()
        with self._lock:
            processes = [c.process for c in reversed(self.children) if c.process]
            processes += self._transient
        stop_all(processes, timeout)
        for child in self.children:
            if child.watcher is not None:
                child.watcher.join(5)
