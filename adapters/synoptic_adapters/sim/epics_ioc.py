"""Run a generated soft-IOC database headless, in this process, with epicscorelibs.

``python -m epicscorelibs.ioc`` opens an interactive console and exits at the end
of stdin; this runs the same IOC start sequence (base dbd, records, access
security, ``iocInit``) without a console, prints a readiness line and serves until
SIGTERM/SIGINT. The CA server is bound to loopback on its own port so that two
simulated IOCs never answer for each other.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from pathlib import Path

from synoptic_adapters.sim.epics_db import ACCESS_SECURITY, SimSpec, build_database

#: Largest CA payload for the server and its clients (100k doubles = 800 kB).
MAX_ARRAY_BYTES = 10_000_000


def ca_environment(port: int) -> dict[str, str]:
    """EPICS_CA_* settings that keep a server and its clients on one private port
    on loopback (use the same values on both sides)."""
    return {
        "EPICS_CA_SERVER_PORT": str(port),
        "EPICS_CAS_SERVER_PORT": str(port),
        "EPICS_CA_REPEATER_PORT": str(port + 1),
        "EPICS_CAS_BEACON_PORT": str(port + 1),
        "EPICS_CA_ADDR_LIST": "127.0.0.1",
        "EPICS_CA_AUTO_ADDR_LIST": "NO",
        "EPICS_CAS_INTF_ADDR_LIST": "127.0.0.1",
        "EPICS_CAS_BEACON_ADDR_LIST": "127.0.0.1",
        "EPICS_CAS_AUTO_BEACON_ADDR_LIST": "NO",
        "EPICS_CA_MAX_ARRAY_BYTES": str(MAX_ARRAY_BYTES),
    }


def run_ioc(spec: SimSpec, port: int, db_out: str | None = None) -> int:
    """Start the IOC, print ``sim ioc ready``, serve until a signal; return 0."""
    os.environ.update(ca_environment(port))
    text, names = build_database(spec)
    with tempfile.TemporaryDirectory(prefix="synoptic-ioc-") as tmp:
        db_path = Path(db_out) if db_out else Path(tmp) / "sim.db"
        db_path.write_text(text)
        acf_path = Path(tmp) / "sim.acf"
        acf_path.write_text(ACCESS_SECURITY)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        _start(db_path, acf_path)
        print(
            f"sim ioc ready: {len(names)} PVs ({spec.records} counters at "
            f"{spec.rate:g} Hz), prefix {spec.prefix} on CA port {port}",
            flush=True,
        )
        while not stop.wait(1.0):
            pass
    print("sim ioc stopped", flush=True)
    sys.stdout.flush()
    # epicsExit's atexit cleanup can hang with live clients: leave at once.
    os._exit(0)


def _start(db_path: Path, acf_path: Path) -> None:
    from epicscorelibs import ioc  # loads the EPICS libraries

    ioc.iocshRegisterCommon()
    if ioc.dbLoadDatabase(b"base.dbd", ioc.DEFAULT_DBD_PATH.encode(), None):
        raise RuntimeError("cannot load base.dbd")
    if ioc.registerRecordDeviceDriver(ioc.pdbbase):
        raise RuntimeError("registerRecordDeviceDriver failed")
    if ioc.dbLoadRecords(str(db_path).encode(), b""):
        raise RuntimeError(f"cannot load {db_path}")
    ioc.ioc(f'asSetFilename("{acf_path}")')
    if ioc.iocInit():
        raise RuntimeError("iocInit failed")
