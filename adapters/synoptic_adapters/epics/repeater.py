"""An in-process CA repeater, so that IOC restarts are noticed at once.

An IOC announces itself with UDP beacons to the CA repeater port; libca clients
learn of a new or restarted IOC from the repeater and search for their
disconnected channels immediately. Without a repeater (epicscorelibs ships no
``caRepeater`` executable) a client only retries its searches on an exponential
back-off, and a restarted IOC can take a minute to be found. The adapter
therefore runs libca's own repeater loop in a daemon thread; if another repeater
already holds the port, the loop returns at once and that one is used.
"""

from __future__ import annotations

import logging
import threading

from epicscorelibs.ca import cadef

log = logging.getLogger(__name__)

_started = False


def start_repeater() -> None:
    """Start the repeater thread once per process (a no-op afterwards)."""
    global _started
    if _started:
        return
    _started = True
    try:
        loop = cadef.libca._Z11ca_repeaterv  # void ca_repeater() (C++)
    except AttributeError:
        log.warning(
            "libca has no ca_repeater: IOC restarts are found by search back-off"
        )
        return
    loop.restype = None
    loop.argtypes = []

    def run() -> None:
        loop()  # returns only if another repeater holds the port
        log.debug("CA repeater already running elsewhere")

    threading.Thread(target=run, name="ca-repeater", daemon=True).start()
