"""Run a generated soft-IOC database headless, in this process, with epicscorelibs.

``python -m epicscorelibs.ioc`` opens an interactive console and exits at the end
of stdin; this runs the same IOC start sequence (base dbd, records, access
security, ``iocInit``) without a console, prints a readiness line and serves until
SIGTERM/SIGINT. The CA server is bound to loopback on its own port so that two
simulated IOCs never answer for each other.
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from synoptic_adapters.sim.epics_db import (
    ACCESS_SECURITY,
    WAVEFORM_BIG,
    SimSpec,
    build_database,
)
from synoptic_bus.stopsignal import StopSignals

#: Largest CA payload for the server and its clients (100k doubles = 800 kB).
MAX_ARRAY_BYTES = 10_000_000


def ca_environment(port: int, interface: str = "127.0.0.1") -> dict[str, str]:
    """EPICS_CA_* settings that keep a server and its clients on one private port
    on loopback (use the same values on both sides). ``interface`` is the address
    the server listens on: ``0.0.0.0`` serves other hosts and containers, who then
    search it by name or address (their ``EPICS_CA_ADDR_LIST``)."""
    return {
        "EPICS_CA_SERVER_PORT": str(port),
        "EPICS_CAS_SERVER_PORT": str(port),
        "EPICS_CA_REPEATER_PORT": str(port + 1),
        "EPICS_CAS_BEACON_PORT": str(port + 1),
        "EPICS_CA_ADDR_LIST": "127.0.0.1",
        "EPICS_CA_AUTO_ADDR_LIST": "NO",
        "EPICS_CAS_INTF_ADDR_LIST": interface,
        "EPICS_CAS_BEACON_ADDR_LIST": "127.0.0.1",
        "EPICS_CAS_AUTO_BEACON_ADDR_LIST": "NO",
        "EPICS_CA_MAX_ARRAY_BYTES": str(MAX_ARRAY_BYTES),
    }


def run_ioc(
    spec: SimSpec,
    port: int,
    db_out: str | None = None,
    fill_rate: float = 0.0,
    interface: str = "127.0.0.1",
) -> int:
    """Start the IOC, print ``sim ioc ready``, serve until a signal; return 0.

    ``fill_rate`` > 0 rewrites the 100k-point waveform with a moving pattern that
    many times a second (the demo shows it); 0 leaves it to clients' puts."""
    signals = StopSignals()  # a flag and a pipe: safe whenever it lands
    os.environ.update(ca_environment(port, interface))
    text, names = build_database(spec)
    with tempfile.TemporaryDirectory(prefix="synoptic-ioc-") as tmp:
        db_path = Path(db_out) if db_out else Path(tmp) / "sim.db"
        db_path.write_text(text)
        acf_path = Path(tmp) / "sim.acf"
        acf_path.write_text(ACCESS_SECURITY)
        stop = threading.Event()  # set by the main thread, never in a handler
        _start(db_path, acf_path)
        if fill_rate > 0 and spec.extras:
            filler = threading.Thread(
                target=_fill_waveform,
                args=(f"{spec.prefix}WF100K", fill_rate, stop),
                daemon=True, name="wf100k",
            )  # fmt: skip
            filler.start()
        print(
            f"sim ioc ready: {len(names)} PVs ({spec.records} counters at "
            f"{spec.rate:g} Hz), prefix {spec.prefix} on CA port {port}",
            flush=True,
        )
        signals.wait()
        stop.set()
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


#: dbAccess's request type for doubles (dbFldTypes.h: DBR_DOUBLE = DBF_DOUBLE = 10).
#: Not Channel Access's DBR_DOUBLE (6, db_access.h), which dbPutField reads as
#: DBR_ULONG: the waveform then held the doubles' bytes as 32-bit integers.
DBR_DOUBLE = 10


def _fill_waveform(name: str, rate: float, stop: threading.Event) -> None:
    """Write a moving 100k-point pattern into ``name`` with ``dbPutField`` (in
    process, so the record posts monitors as for any put) until ``stop``."""
    from epicscorelibs import ioc

    db = ioc.dbCore
    db.dbNameToAddr.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    db.dbPutField.argtypes = [
        ctypes.c_void_p,
        ctypes.c_short,
        ctypes.c_void_p,
        ctypes.c_long,
    ]
    addr = ctypes.create_string_buffer(1024)  # a DBADDR is far smaller
    if db.dbNameToAddr(name.encode(), addr):
        print(f"sim ioc: no record {name} to fill", flush=True)
        return
    x = np.linspace(0.0, 40.0 * np.pi, WAVEFORM_BIG)
    envelope = 1000.0 * np.exp(-(((x - x.mean()) / (np.ptp(x) / 5)) ** 2))
    rng = np.random.default_rng(1)
    phase = 0.0
    while not stop.wait(1.0 / rate):
        data = envelope * np.sin(x + phase) + rng.normal(0.0, 20.0, WAVEFORM_BIG)
        data = np.ascontiguousarray(data, dtype="<f8")
        db.dbPutField(addr, DBR_DOUBLE, data.ctypes.data, WAVEFORM_BIG)
        phase += 0.25
