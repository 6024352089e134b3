"""A process's kept lines (``keep=``) outlive the last-lines window of its output
(a real child process)."""

from __future__ import annotations

import sys

import pytest

from synoptic_bus.procs import Process, ProcessError

_SCRIPT = """
print("progress: step one", flush=True)
for n in range(1000):
    print(f"noise {n}")
print("done", flush=True)
"""


def test_a_kept_line_is_found_after_a_burst_pushed_it_out_of_the_window() -> None:
    child = Process("keep", [sys.executable, "-c", _SCRIPT], keep=r"^progress: ")
    try:
        child.wait_for("^done$", 30)
        assert "progress" not in child.output()  # out of the last-lines window
        assert child.wait_for(r"step (\w+)", 1).group(1) == "one"
        with pytest.raises(ProcessError):  # kept lines still count from ``since``
            child.wait_for(r"step (\w+)", 0.2, since=1)
    finally:
        child.stop()


def test_without_keep_a_line_pushed_out_is_gone() -> None:
    child = Process("nokeep", [sys.executable, "-c", _SCRIPT])
    try:
        child.wait_for("^done$", 30)
        with pytest.raises(ProcessError):
            child.wait_for("step one", 0.2)
    finally:
        child.stop()
