"""Child processes that announce readiness by a line of output.

Used by test fixtures, ``synoptic demo`` and benchmarks to start nats-server, soft
IOCs, Tango device servers, adapters and gateways, wait for a readiness line (never a
fixed sleep), and stop them by PID.

A child never outlives this process: it gets SIGKILL from the kernel when this
process ends, however it ends (SIGKILL, a pytest worker killed by pytest-timeout,
a crash) (``PR_SET_PDEATHSIG``, see :func:`die_with_parent`). The kernel sends
that signal when the *thread* that forked the child ends, so every child is forked
by one thread that lives as long as the process (:func:`spawn`), never by the
short-lived thread that asked for it (``asyncio.to_thread``, a start-up thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import queue
import random
import re
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")


class ProcessError(RuntimeError):
    """A child process exited or did not become ready in time."""


#: Ports this process has handed out lately: the kernel may give a port released
#: a moment ago to the next ``bind(0)``, and two servers of one set-up (a NATS
#: node's client and monitor ports) must never be told the same one.
#: Lines matching a :class:`Process`'s ``keep`` pattern kept beyond its last lines.
KEPT_LINES = 10_000
_given_ports: deque[int] = deque(maxlen=4096)
_given_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host`` and that this process
    has not handed out lately. It lies below the kernel's ephemeral range where
    there is room: the local port of an outgoing connection (taken from that range)
    can then never take it before the server it is meant for binds it (a server
    that starts slowly, Keycloak, lost it that way)."""
    low, high = _quiet_ports()
    with _given_lock:
        for _ in range(200):
            if high > low:
                port = _random.randrange(low, high)
                with socket.socket() as sock:
                    try:
                        sock.bind((host, port))
                    except OSError:
                        continue
            else:
                with socket.socket() as sock:
                    sock.bind((host, 0))
                    port = sock.getsockname()[1]
            if port not in _given_ports:
                _given_ports.append(port)
                return port
    raise ProcessError("no fresh free port")


#: The lowest port :func:`free_port` hands out (above the well-known services and
#: the demo's fixed ports).
_QUIET_LOW = 20_000
_random = random.SystemRandom()


@functools.cache
def _quiet_ports() -> tuple[int, int]:
    """``[low, high)``: ports below the ephemeral range, or an empty range where
    that range leaves no room (``free_port`` then asks the kernel)."""
    try:
        start = int(
            Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]
        )
    except (OSError, ValueError, IndexError):
        return 0, 0
    return (_QUIET_LOW, start) if start - _QUIET_LOW >= 4096 else (0, 0)


def free_udp_tcp_port(host: str = "127.0.0.1") -> int:
    """A port free for both TCP and UDP (EPICS CA servers use both)."""
    for _ in range(50):
        port = free_port(host)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            try:
                udp.bind((host, port))
            except OSError:
                continue
            return port
    raise ProcessError("no port free for both TCP and UDP")


#: prctl(2) option: the signal a process gets when its parent thread ends.
_PR_SET_PDEATHSIG = 1
#: prctl(2), looked up now: nothing is looked up between fork and exec.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with(parent: int) -> None:  # in the child, between fork and exec
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before prctl took effect
        os._exit(1)


def die_with(parent: int) -> None:
    """In a child, as it starts (for one exec'd without :func:`die_with_parent`):
    SIGKILL when its parent ``parent`` ends, or at once if it already has."""
    _die_with(parent)


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess`` and ``asyncio.create_subprocess_exec``:
    the child gets SIGKILL when the thread that forks it ends (its process ended,
    killed included). Fork from a thread that lives as long as the process (the
    event loop's, :func:`spawn`'s)."""
    return functools.partial(_die_with, os.getpid())


class _Spawner:
    """The thread that forks every :class:`Process` child (started at the first
    one; a daemon: it ends with the process, and so do the children)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]
        self._thread: threading.Thread | None = None

    def run(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` on the spawner thread; its result (or exception)."""
        if threading.current_thread() is self._thread:
            return fn()
        with self._lock:
            if self._pid != os.getpid() or self._thread is None:  # first, or forked
                self._pid = os.getpid()
                self._jobs = queue.SimpleQueue()
                self._thread = threading.Thread(
                    target=self._serve, args=(self._jobs,), daemon=True,
                    name="synoptic-spawner",
                )  # fmt: skip
                self._thread.start()
            done: Future[_T] = Future()
            self._jobs.put((fn, done))
        return done.result()

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]) -> None:
        while True:
            fn, done = jobs.get()
            try:
                done.set_result(fn())
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)


_spawner = _Spawner()


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **popen)`` forked by the spawner thread, the
    child to get SIGKILL when this process ends (:func:`die_with_parent`)."""
    return _spawner.run(
        lambda: subprocess.Popen(argv, preexec_fn=die_with_parent(), **popen)
    )


class Process:
    """A child process whose combined output is kept (last lines) and scanned."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        keep_stdin_open: bool = False,
        echo: bool = False,
        keep: str | None = None,
    ) -> None:
        """``keep``: a pattern of lines to keep (the last ``KEPT_LINES`` of them)
        beyond the last 400 lines of output, so that :meth:`wait_for` still finds
        them after a burst of other lines (progress lines awaited one by one)."""
        self.name = name
        self.argv = list(argv)
        self._echo = echo
        self._lines: deque[str] = deque(maxlen=400)
        self._keep = re.compile(keep) if keep else None
        self._kept: deque[tuple[int, str]] = deque(maxlen=KEPT_LINES)
        self._count = 0
        self._cond = threading.Condition()
        full_env = {**os.environ, **(env or {})}
        self.popen = spawn(
            self.argv,
            stdin=subprocess.PIPE if keep_stdin_open else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=cwd,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        self._reader = threading.Thread(
            target=self._read, daemon=True, name=f"{name}-out"
        )
        self._reader.start()

    @classmethod
    def started(
        cls, name: str, argv: Sequence[str], *ready: str, timeout: float = 60.0
    ) -> Process:
        """Start ``argv`` and return once it printed a line matching each of
        ``ready`` in turn (each within ``timeout`` s); killed if one never comes."""
        proc = cls(name, argv)
        try:
            for pattern in ready:
                proc.wait_for(pattern, timeout)
        except Exception:
            proc.kill()
            raise
        return proc

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            if self._echo:
                print(f"[{self.name}] {line}", end="", flush=True)
            line = line.rstrip("\n")
            with self._cond:
                self._lines.append(line)
                if self._keep is not None and self._keep.search(line):
                    self._kept.append((self._count, line))
                self._count += 1
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def output(self) -> str:
        """The last lines printed."""
        with self._cond:
            return "\n".join(self._lines)

    def mark(self) -> int:
        """How many lines have been printed so far (pass to :meth:`wait_for`)."""
        with self._cond:
            return self._count

    def wait_for(
        self, pattern: str, timeout: float = 30.0, since: int = 0
    ) -> re.Match[str]:
        """Block until a line matching ``pattern`` is printed (counting from line
        ``since``, see :meth:`mark`); raise if the process exits or ``timeout``
        passes first."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                first_kept = self._count - len(self._lines)
                older = [(i, text) for i, text in self._kept if i < first_kept]
                for index, line in chain(older, enumerate(self._lines, first_kept)):
                    if index >= since and (match := regex.search(line)):
                        return match
                since = max(since, self._count)
                if self.popen.poll() is not None and not self._reader.is_alive():
                    raise ProcessError(
                        f"{self.name} exited with {self.popen.returncode} before "
                        f"printing {pattern!r}; output:\n{self.output()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ProcessError(
                        f"{self.name} did not print {pattern!r} in {timeout:.0f} s; "
                        f"output:\n{self.output()}"
                    )
                self._cond.wait(min(remaining, 0.2))

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process (by PID)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL the process group at once and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)
        self._reader.join(5)
        if self.popen.stdout:
            self.popen.stdout.close()

    def terminate(self) -> None:
        """SIGTERM the process group without waiting (see :func:`stop_all`)."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; return the exit code."""
        self.terminate()
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.popen.stdin:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        self._reader.join(5)
        if self.popen.stdout:
            self.popen.stdout.close()
        return self.popen.returncode


def stop_all(processes: Sequence[Process], timeout: float = 10.0) -> None:
    """Stop ``processes`` together: SIGTERM to every process group at once, then
    SIGKILL to those still running ``timeout`` seconds later. Stopping them one
    after the other would add up their shutdown times."""
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + timeout
    for process in processes:
        process.stop(max(0.0, deadline - time.monotonic()))
