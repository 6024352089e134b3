"""The workers benchmark reads every worker's progress lines from an output of
which only the last 400 lines are kept: a line printed while another worker's
line is awaited, or before the benchmark got to read it, must not be lost to a
burst of log lines (a real process; the lines are kept by ``keep=PROGRESS``)."""

from __future__ import annotations

import re
import sys
import threading

from synoptic_benchmarks.tango.workers import PROGRESS, milestones
from synoptic_bus.procs import Process

_W1_LIVE = "tango worker bench-tw-w1: every event subscription live (2 attributes)"

# w1 is done first; then, while w0 is still awaited, a burst of 1000 log lines
# (a server's late polling thread makes every attribute send an error event) and
# only then w0's last line
_SCRIPT = f"""
import sys
print("tango worker bench-tw-w0: first value of every attribute (3 attributes) at 10.5")
print("tango worker bench-tw-w1: first value of every attribute (2 attributes) at 11.5")
print("{_W1_LIVE} at 12.5", flush=True)
sys.stdin.readline()
for n in range(1000):
    print(f"INFO w0 synoptic_adapters.tango.device: bulk_{{n:04d}}: event error")
print("tango worker bench-tw-w0: every event subscription live (3 attributes) at 13.5")
sys.stdout.flush()
sys.stdin.readline()
"""


def test_a_line_printed_before_a_log_burst_is_not_lost() -> None:
    child = Process(
        "milestones", [sys.executable, "-c", _SCRIPT],
        keep_stdin_open=True, keep=PROGRESS,
    )  # fmt: skip

    def release_the_burst() -> None:  # once w1's last line has been printed
        child.wait_for(re.escape(_W1_LIVE), 30)
        assert child.popen.stdin is not None
        child.popen.stdin.write("\n")
        child.popen.stdin.flush()

    helper = threading.Thread(target=release_the_burst)
    helper.start()
    try:
        times = milestones(child, {0: 3, 1: 2}, since=0, timeout=30)
    finally:
        helper.join(30)
        assert child.popen.stdin is not None
        child.popen.stdin.write("\n")
        child.popen.stdin.flush()
        child.stop()
    assert sorted(times["first_values_s"]) == [10.5, 11.5]
    assert sorted(times["subscribed_s"]) == [12.5, 13.5]
    assert child.mark() > 1000  # the burst did push w1's lines out of the window
