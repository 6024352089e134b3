"""Child processes that announce readiness by a line of output.

Used by test fixtures, ``synoptic demo`` and benchmarks to start nats-server, soft
IOCs, Tango device servers, adapters and gateways, wait for a readiness line (never a
fixed sleep), and stop them by PID.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import chain
from pathlib import Path


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
    has not handed out lately."""
    with _given_lock:
        for _ in range(100):
            with socket.socket() as sock:
                sock.bind((host, 0))
                port = sock.getsockname()[1]
            if port not in _given_ports:
                _given_ports.append(port)
                return port
    raise ProcessError("no fresh free port")


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
        self.popen = subprocess.Popen(
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
