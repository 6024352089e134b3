"""CPython's full garbage collections deferred while a set imports.

A set's import only builds: element trees, widgets, reports, most of them kept
until its end, and no reference cycles of its own. CPython (3.11) runs a full
collection whenever the objects promoted since the last one reach a quarter of
those that survived it, and each walks every object of the process: on a set of
541 displays that was a third of the import's time, for nothing collected.
Young collections still run; the thresholds are restored when the last import
running ends."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Young collections between full ones while a set imports (CPython's: 10).
DEFERRED = 100_000

_lock = threading.Lock()
_running = 0
_saved: tuple[int, ...] = ()


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Full collections deferred for the block (nesting and threads allowed)."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = gc.get_threshold()
            young, middle = _saved[0], _saved[1] if len(_saved) > 1 else 10
            gc.set_threshold(young, middle, max(DEFERRED, *_saved[2:3]))
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_saved)
