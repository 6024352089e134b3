"""CPU and RSS of the server processes (and of k6), sampled once a second with
psutil in a background thread. CPU is in % of one core, summed over a role's
processes and their children."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

import psutil


@dataclass
class Series:
    """Samples of one role: seconds since start, CPU % of a core, RSS MiB."""

    t: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)


class Sampler:
    """Sample ``roles`` (role → PIDs) every ``interval`` seconds until stopped."""

    def __init__(self, roles: dict[str, list[int]], interval: float = 1.0) -> None:
        self.interval = interval
        self.series: dict[str, Series] = {role: Series() for role in roles}
        self.series["machine"] = Series()
        self._procs: dict[str, list[psutil.Process]] = {}
        for role, pids in roles.items():
            self._procs[role] = [psutil.Process(pid) for pid in pids]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sampler")
        self._started = 0.0
        self._known: dict[int, psutil.Process] = {}
        self._last_cpu: dict[int, float] = {}

    def add(self, role: str, pid: int) -> None:
        """Sample one more process (e.g. k6, once started)."""
        self.series.setdefault(role, Series())
        self._procs.setdefault(role, []).append(psutil.Process(pid))

    def start(self) -> Sampler:
        self._started = time.monotonic()
        psutil.cpu_percent(None)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _tree(self, proc: psutil.Process) -> list[psutil.Process]:
        with contextlib.suppress(psutil.Error):
            return [proc, *proc.children(recursive=True)]
        return []

    def _sample_role(self, procs: list[psutil.Process]) -> tuple[float, float, bool]:
        """CPU seconds used since the last sample by the live processes of a role
        (each PID measured against itself, so a process that exits or starts never
        makes a negative or a huge step), their RSS, and whether any was alive."""
        cpu_delta = 0.0
        rss = 0.0
        alive = False
        for root in procs:
            for proc in self._tree(root):
                known = self._known.setdefault(proc.pid, proc)
                try:
                    times = known.cpu_times()
                    rss += known.memory_info().rss
                except psutil.Error:
                    continue
                alive = True
                total = times.user + times.system
                previous = self._last_cpu.get(proc.pid)
                self._last_cpu[proc.pid] = total
                if previous is not None:
                    cpu_delta += max(0.0, total - previous)
        return cpu_delta, rss / 2**20, alive

    def elapsed(self) -> float:
        """Seconds since :meth:`start` (to mark the load window)."""
        return time.monotonic() - self._started

    def _run(self) -> None:
        last: dict[str, float] = {}
        first = True
        while not self._stop.wait(0 if first else self.interval):
            now = time.monotonic()
            for role, procs in list(self._procs.items()):
                cpu_delta, rss, alive = self._sample_role(procs)
                if role in last and alive and rss > 0:  # rss 0: an unreaped zombie
                    series = self.series[role]
                    series.t.append(round(now - self._started, 2))
                    series.cpu.append(round(100 * cpu_delta / (now - last[role]), 1))
                    series.rss_mib.append(round(rss, 1))
                last[role] = now
            busy = psutil.cpu_percent(None)  # since the previous call
            if not first:
                machine = self.series["machine"]
                machine.t.append(round(now - self._started, 2))
                machine.cpu.append(busy)
                machine.rss_mib.append(round(psutil.virtual_memory().used / 2**20, 1))
            first = False
