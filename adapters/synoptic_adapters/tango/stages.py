"""Opt-in stage timestamps of a Tango subscription, for the benchmark.

With ``SYNOPTIC_TANGO_STAGES=1`` in the environment the supervisor, the workers
and every device link print one line per stage of taking channels on, e.g.
``tango stage names bench/d/3 at 1795397487.214`` (wall-clock seconds), so that
``synoptic_benchmarks.tango.workers`` can tell where the time from a demand to every
subscription live goes. Off by default: then :func:`stage` costs one test. No
Tango import (the supervisor uses it).
"""

from __future__ import annotations

import os
import time

#: Whether stage lines are printed (read once, at import).
ENABLED = os.environ.get("SYNOPTIC_TANGO_STAGES") == "1"
#: The regular expression of a stage line: stage name, where, wall-clock time.
LINE = r"^tango stage (\S+) (\S+) at ([\d.]+)$"


def stage(name: str, where: str) -> None:
    """Print that ``where`` (a device, a worker) reached stage ``name`` now."""
    if ENABLED:
        print(f"tango stage {name} {where} at {time.time():.3f}", flush=True)
