"""The counting subscriber process (:mod:`.subscriber`) as the adapter benchmarks
drive it: start it, wait for its window, read what it counted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from synoptic_bus.procs import Process


class CountingSubscriber:
    """A subscriber process on ``cs.val.>`` of ``url`` that waits for ``channels``
    channels, then ``warmup`` seconds, then counts for ``window`` seconds; its
    result is written under ``folder``."""

    def __init__(
        self, url: str, warmup: float, window: float, channels: int, folder: Path
    ) -> None:
        self.out = folder / "sub.json"
        argv = [
            sys.executable, "-m", "synoptic_benchmarks.bus.subscriber",
            url, str(warmup), str(window), str(self.out), str(channels),
        ]  # fmt: skip
        self.window = window
        self.proc = Process("subscriber", argv)
        self.proc.wait_for("subscriber ready", 30)

    def window_start(self, timeout: float) -> None:
        """Block until the counting window has started."""
        self.proc.wait_for("window start", timeout)

    def window_end(self) -> None:
        """Block until the counting window has ended."""
        self.proc.wait_for("window end", self.window + 60)

    def result(self) -> dict[str, Any]:
        """What it counted (``received``, ``gaps``, ``seq_gaps``, ``latency_ms`` …)."""
        self.proc.wait_for("subscriber done", 60)
        return json.loads(self.out.read_text())

    def stop(self) -> None:
        self.proc.stop()

    def __enter__(self) -> CountingSubscriber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
