"""How long a process takes to stop on SIGTERM, its descendants included.

Used by the system tests and ``make bench-faults``: :func:`sigterm_try` starts a
command with a marker in its environment (every descendant inherits it, whether
it stays in the process group or starts a session of its own), sends SIGTERM to
the command's PID alone at the moment asked, and measures until no process with
the marker is left, as an operator's ``systemctl stop`` or ``docker stop`` would
see it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from synoptic_bus.procs import Process, ProcessError

#: The environment variable that marks a try's processes.
MARKER = "SYNOPTIC_STOP_TRY"


def marked(marker: str) -> list[int]:
    """PIDs of live processes (zombies excluded) whose environment holds
    ``MARKER=marker``."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


@dataclass
class StopResult:
    """One try: when SIGTERM was sent, how long until all was gone."""

    delay: float  # seconds after the start (or after ready) SIGTERM was sent
    after_ready: bool  # whether the command was ready then
    seconds: float  # SIGTERM to the last marked process gone (inf: never)
    returncode: int | None
    left: list[int]  # marked processes still alive at the bound (SIGKILLed then)
    output: str


def sigterm_try(
    name: str,
    argv: Sequence[str],
    *,
    ready: str,
    delay: float | None,
    bound: float,
    pause: float = 0.0,
    ready_timeout: float = 300.0,
    env: dict[str, str] | None = None,
) -> StopResult:
    """Start ``argv``, send SIGTERM to it ``delay`` seconds after the start (None:
    ``pause`` seconds after it printed ``ready``), and wait at most ``bound`` seconds for it and
    every descendant to be gone. What is left then is SIGKILLed (and reported)."""
    marker = uuid.uuid4().hex
    process = Process(name, argv, env={**(env or {}), MARKER: marker})
    after_ready = delay is None
    started = time.monotonic()
    try:
        if delay is None:
            process.wait_for(ready, ready_timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):  # an exit ends it
            process.popen.wait(pause if delay is None else delay)
        if delay is not None:
            after_ready = ready_seen(process, ready)
    except BaseException:
        _kill_marked(marker)
        process.kill()
        raise
    sent = time.monotonic()
    process.signal(signal.SIGTERM)
    deadline = sent + bound
    seconds = float("inf")
    left: list[int] = []
    while True:
        if process.popen.poll() is not None and not (left := marked(marker)):
            seconds = time.monotonic() - sent
            break
        if time.monotonic() > deadline:
            left = marked(marker)
            break
        time.sleep(0.02)
    _kill_marked(marker)
    if process.popen.poll() is None:
        process.kill()
    process.stop(5)
    return StopResult(
        delay=sent - started,
        after_ready=after_ready,
        seconds=seconds,
        returncode=process.popen.returncode,
        left=left,
        output=process.output(),
    )


def ready_seen(process: Process, ready: str) -> bool:
    """Whether ``process`` has printed ``ready`` (within its kept lines)."""
    try:
        process.wait_for(ready, 0)
    except ProcessError:
        return False
    return True


def _kill_marked(marker: str) -> None:
    for pid in marked(marker):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
