"""CPU time and resident memory of processes, read from ``/proc`` (Linux)."""

from __future__ import annotations

import os
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command name, which is in parentheses and may hold spaces.
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    return (utime + stime) / _TICKS


def runqueue_wait_seconds(pid: int) -> float:
    """Seconds the threads of process ``pid`` have spent runnable but waiting for a
    CPU (``/proc/PID/task/*/schedstat``, threads alive now): how much more it
    wanted than it got."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that just ended
    return total / 1e9


def rss_mib(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class CpuMeter:
    """CPU % of one core used by named processes between :meth:`start` and
    :meth:`stop`, and the % of that interval each spent waiting for a CPU
    (:attr:`wait_pct`, set by :meth:`stop`)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.wait_pct: dict[str, float] = {}
        self._cpu0: dict[str, float] = {}
        self._wait0: dict[str, float] = {}
        self._t0 = 0.0

    def start(self) -> None:
        self._cpu0 = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self._wait0 = {n: runqueue_wait_seconds(p) for n, p in self.pids.items()}
        self._t0 = time.monotonic()

    def stop(self) -> dict[str, float]:
        """CPU % of one core per process over the interval."""
        elapsed = time.monotonic() - self._t0
        self.wait_pct = {
            name: 100 * (runqueue_wait_seconds(pid) - self._wait0[name]) / elapsed
            for name, pid in self.pids.items()
        }
        return {
            name: 100 * (cpu_seconds(pid) - self._cpu0[name]) / elapsed
            for name, pid in self.pids.items()
        }

    def rss(self) -> dict[str, float]:
        """Current RSS (MiB) per process."""
        return {name: rss_mib(pid) for name, pid in self.pids.items()}
