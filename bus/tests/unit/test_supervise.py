"""The supervisor with real child processes: an exited child is reaped and started
again after a backoff that doubles while it keeps failing; stop() ends it all."""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time

import pytest

from synoptic_bus.procs import Process, ProcessError
from synoptic_bus.supervise import Child, Supervisor

#: prints its readiness line, then lives until killed (or exits at once with "exit")
CHILD = (
    "import sys, time; print('child ready', flush=True); "
    "time.sleep(0 if sys.argv[1] == 'exit' else 300)"
)


class Lines:
    """The supervisor's log, awaited line by line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.cond = threading.Condition()

    def __call__(self, line: str) -> None:
        with self.cond:
            self.lines.append(line)
            self.cond.notify_all()

    def wait(self, needle: str, count: int = 1, timeout: float = 30.0) -> list[str]:
        with self.cond:
            ok = self.cond.wait_for(
                lambda: len([x for x in self.lines if needle in x]) >= count, timeout
            )
            assert ok, f"{needle!r} x{count} not logged: {self.lines}"
            return [x for x in self.lines if needle in x]


def spawner(mode: str, starts: list[float]):
    def spawn() -> Process:
        starts.append(time.monotonic())
        return Process("child", [sys.executable, "-c", CHILD, mode])

    return spawn


def test_a_killed_child_is_reaped_and_restarted() -> None:
    log = Lines()
    sup = Supervisor(log, backoff_min=0.05, backoff_max=1.0)
    starts: list[float] = []
    try:
        first = sup.add(Child("child", spawner("live", starts), "child ready", 20))
        first.signal(9)
        log.wait("child restarted (pid")
        exited = log.wait("exited with -9")[0]
        assert f"(pid {first.pid})" in exited and "restarting in 0.1 s" in exited
        # reaped at once: the old pid is gone, not a zombie
        assert not os.path.exists(f"/proc/{first.pid}")
        second = sup.children[0].process
        assert second is not None and second.pid != first.pid and second.alive()
    finally:
        sup.stop()
    assert not second.alive()


def test_backoff_doubles_while_a_child_keeps_failing_and_stop_ends_it() -> None:
    log = Lines()
    sup = Supervisor(log, backoff_min=0.1, backoff_max=0.4, stable=60)
    starts: list[float] = []
    sup.add(Child("child", spawner("exit", starts), "child ready", 20))
    lines = log.wait("restarting in", 4)[:4]
    sup.stop()
    count = len(starts)
    delays = [float(line.rsplit("restarting in ", 1)[1].split()[0]) for line in lines]
    assert delays == [0.1, 0.2, 0.4, 0.4]
    assert all(b - a >= 0.1 for a, b in itertools.pairwise(starts))
    time.sleep(0.5)  # nothing may start after stop (a check of absence)
    assert len(starts) == count


def test_a_restart_that_never_gets_ready_is_tried_again() -> None:
    log = Lines()
    sup = Supervisor(log, backoff_min=0.05, backoff_max=0.2)
    modes = iter(["live", "exit-silent", "exit-silent", "live"])
    starts: list[float] = []

    def spawn() -> Process:
        starts.append(time.monotonic())
        mode = next(modes, "live")
        code = CHILD if mode == "live" else "pass"
        return Process("child", [sys.executable, "-c", code, mode])

    try:
        first = sup.add(Child("child", spawn, "child ready", 20))
        first.signal(9)
        failed = log.wait("failed to start again", 2)
        assert "before printing 'child ready'" in failed[0]
        log.wait("child restarted (pid")
        assert sup.children[0].process is not None
        assert sup.children[0].process.alive() and len(starts) == 4
    finally:
        sup.stop()


def test_a_child_that_never_gets_ready_fails_add() -> None:
    sup = Supervisor(lambda _: None)
    with pytest.raises(ProcessError, match="exited"):
        sup.add(Child("child", spawner("exit", []), "never printed", 20))
    sup.stop()


def test_stop_during_a_restart_leaves_nothing_running() -> None:
    """stop() lands while a restart spawns (a slow spawn, as initdb's): the
    process spawned then is stopped too, and nothing starts after."""
    log = Lines()
    sup = Supervisor(log, backoff_min=0.01, backoff_max=0.01)
    spawning = threading.Event()
    release = threading.Event()
    spawned: list[Process] = []

    def spawn() -> Process:
        if spawned:  # a restart: hold it in the middle of its spawn
            spawning.set()
            release.wait(10)
        process = Process("child", [sys.executable, "-c", CHILD, "live"])
        spawned.append(process)
        return process

    first = sup.add(Child("child", spawn, "child ready", 20))
    first.signal(9)
    assert spawning.wait(10)
    stopper = threading.Thread(target=sup.stop)
    stopper.start()
    assert sup._stopping.wait(10)  # stop() has begun
    release.set()
    stopper.join(20)
    assert not stopper.is_alive()
    for process in spawned:
        process.popen.wait(10)
    assert len(spawned) == 2 and not [p for p in spawned if p.alive()]
    assert not [line for line in log.lines if "restarted (pid" in line]


def test_run_once_is_ended_by_stop() -> None:
    sup = Supervisor(lambda _: None)
    errors: list[Exception] = []

    def run() -> None:
        try:
            sup.run_once("sleeper", [sys.executable, "-c", CHILD, "live"], 60)
        except ProcessError as exc:
            errors.append(exc)

    runner = threading.Thread(target=run)
    runner.start()
    deadline = time.monotonic() + 20
    while not sup._transient and time.monotonic() < deadline:  # it runs
        time.sleep(0.01)
    started = time.monotonic()
    sup.stop()
    runner.join(20)
    assert time.monotonic() - started < 10 and not runner.is_alive()
    assert errors and "stopping" in str(errors[0])
