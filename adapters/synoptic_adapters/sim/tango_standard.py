"""A simulated Tango device server in Tango's default serialisation model.

Facilities run standard synchronous device servers: Tango serialises the requests
of one device (``BY_DEVICE``), so while any client reads a slow attribute the
device answers nothing else, and its polling thread, which makes the change
events, waits too: every client of the device loses events. This server is that
case, from the Taurus performance study: one device (default
``sim/standard/1``) of 414 attributes:

- ``ev_000`` … ``ev_388``: doubles with change events (Tango polls them at
  ``--rate`` Hz, ``abs_change`` 0.5); each counts its polls, so a skipped count is
  a lost event and the event rate shows how often the device was free;
- ``po_00`` … ``po_20``: doubles without events (clients must poll), fast;
- ``cached``: polled by Tango itself but without change criteria (no events:
  clients poll it, and Tango serves their reads from its polling buffer);
- ``slow``: every read takes ``--slow-s`` (2 s); ``timeout``: every read takes
  ``--timeout-s`` (10 s, past the 3 s default client timeout); ``broken``: every
  read raises ``SIM_ReadFailed``. ``--clean`` makes the three fast and healthy.
  The commands ``SetSlow`` and ``SetTimeout`` change the two durations (seconds,
  0: fast) while the server runs; ``HardwareReads`` (an attribute name) says how
  many times the device's code read it (Tango's polling included; a read served
  from the polling buffer does not count).

The three bad attributes are declared last (first with ``--bad-first``). The timings are options so that tests
can use short ones.

The server runs on a file database (``-file``: a fresh file per start, removed at
exit), not ``-nodb``: without a database Tango takes the device's
``poll_old_factor`` for 0, so every read of its polling buffer is "not updated
any more" and falls through to the hardware; with one (as facilities run) the
factor is 4 and such reads are served from the buffer. Clients still name the
device ``…#dbase=no``. The ``NO_SYNC`` server of :mod:`.tango_device` stays for the
tests that need every attribute kind. Run with ``synoptic sim tango-standard``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import tango
from tango.server import Device, attribute, command, run

from synoptic_adapters.sim.tango_device import exit_now

#: Environment variable that carries :class:`StandardSettings` (JSON) into the
#: device (pytango builds the device after :func:`serve` returns control).
ENV_SETTINGS = "SYNOPTIC_TANGO_STANDARD"
#: Reason of the error every read of ``broken`` raises.
BROKEN_REASON = "SIM_ReadFailed"
BROKEN_DESC = "simulated hardware fault: the controller refused the read"
#: The bad attributes, in declaration order (last on the device).
BAD = ("slow", "timeout", "broken")
#: The folder of this process's file database (removed at exit).
_database_dir: Path | None = None


@dataclass(frozen=True)
class StandardSettings:
    """The case: how many attributes of each kind, how fast, how bad."""

    events: int = 389
    polled: int = 21
    rate_hz: float = 1.0
    slow_s: float = 2.0
    timeout_s: float = 10.0
    clean: bool = False
    #: declare the bad attributes before the healthy ones without events
    bad_first: bool = False

    @classmethod
    def from_env(cls) -> StandardSettings:
        raw = os.environ.get(ENV_SETTINGS)
        return cls(**json.loads(raw)) if raw else cls()

    def event_names(self) -> list[str]:
        return [f"ev_{i:03d}" for i in range(self.events)]

    def polled_names(self) -> list[str]:
        """Every attribute without events: healthy, ``cached``, then the bad (the
        bad first with ``bad_first``)."""
        healthy = [f"po_{i:02d}" for i in range(self.polled)] + ["cached"]
        return [*BAD, *healthy] if self.bad_first else [*healthy, *BAD]


class SynopticStandard(Device):
    """The Taurus case in the default (by-device) serialisation model."""

    def init_device(self) -> None:
        super().init_device()
        self.settings = StandardSettings.from_env()
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._polls: dict[str, int] = {}
        clean = self.settings.clean
        self._slow_s = 0.0 if clean else self.settings.slow_s
        self._timeout_s = 0.0 if clean else self.settings.timeout_s
        self.set_state(tango.DevState.ON)
        for signo in (signal.SIGTERM, signal.SIGINT):
            self.register_signal(signo)

    def signal_handler(self, signo: int) -> None:
        """Remove the file database and exit at once (see
        :func:`~.tango_device.exit_now`)."""
        if signo in (signal.SIGTERM, signal.SIGINT):
            if _database_dir is not None:
                shutil.rmtree(_database_dir, ignore_errors=True)
            exit_now()

    def initialize_dynamic_attributes(self) -> None:
        settings = StandardSettings.from_env()
        period_ms = max(1, round(1000 / settings.rate_hz))
        for name in settings.event_names():
            self.add_attribute(
                attribute(name=name, dtype=tango.DevDouble, abs_change="0.5",
                          fget=self._read_counter)
            )  # fmt: skip
        for name in settings.polled_names():
            read = self._read_tick if name.startswith("po_") else getattr(
                self, f"_read_{name}"
            )  # fmt: skip
            self.add_attribute(attribute(name=name, dtype=tango.DevDouble, fget=read))
        for name in settings.event_names():
            self.poll_attribute(name, period_ms)
        self.poll_attribute("cached", 1000)

    @property
    def _tick(self) -> float:
        return float(int(time.monotonic() - self._start))

    def _count(self, attr: tango.Attribute) -> int:
        """One more read of ``attr`` by the device's code; the count so far."""
        name = attr.get_name().lower()
        with self._lock:
            count = self._polls[name] = self._polls.get(name, 0) + 1
        return count

    def _read_counter(self, attr: tango.Attribute) -> float:
        return float(self._count(attr))

    def _read_tick(self, attr: tango.Attribute) -> float:
        self._count(attr)
        return self._tick

    _read_cached = _read_tick

    def _read_slow(self, attr: tango.Attribute) -> float:
        self._count(attr)
        time.sleep(self._slow_s)
        return self._tick

    def _read_timeout(self, attr: tango.Attribute) -> float:
        self._count(attr)
        time.sleep(self._timeout_s)
        return self._tick

    @command(dtype_in=str, dtype_out=int)
    def HardwareReads(self, name: str) -> int:  # noqa: N802 - Tango command name
        """Times the device's code read the attribute ``name`` (Tango's polling
        included; reads served from the polling buffer are not)."""
        with self._lock:
            return self._polls.get(name.lower(), 0)

    @command(dtype_in=float)
    def SetSlow(self, seconds: float) -> None:  # noqa: N802 - Tango command name
        """Seconds every read of ``slow`` takes from now on."""
        self._slow_s = max(0.0, seconds)

    @command(dtype_in=float)
    def SetTimeout(self, seconds: float) -> None:  # noqa: N802 - Tango command name
        """Seconds every read of ``timeout`` takes from now on."""
        self._timeout_s = max(0.0, seconds)

    def _read_broken(self, attr: tango.Attribute) -> float:
        self._count(attr)
        if not self.settings.clean:
            tango.Except.throw_exception(
                BROKEN_REASON, BROKEN_DESC, "SynopticStandard.read_broken"
            )
        return self._tick


def serve(
    *,
    port: int,
    device: str = "sim/standard/1",
    instance: str = "standard",
    settings: StandardSettings | None = None,
    host: str = "127.0.0.1",
) -> None:
    """Run the server on a file database of its own (clients name the device
    ``tango://host:port/<device>#dbase=no``) until SIGTERM or SIGINT. Tango
    prints ``Ready to accept request`` when serving."""
    global _database_dir
    os.environ[ENV_SETTINGS] = json.dumps(asdict(settings or StandardSettings()))
    _database_dir = Path(tempfile.mkdtemp(prefix="synoptic-tango-standard-"))
    database = _database_dir / "devices.db"
    database.write_text(
        f"SynopticStandard/{instance}/DEVICE/SynopticStandard: {device}\n"
    )
    args = [
        "SynopticStandard", instance, f"-file={database}",
        "-ORBendPoint", f"giop:tcp:{host}:{port}",
    ]  # fmt: skip
    try:
        run((SynopticStandard,), args=args)
    finally:
        shutil.rmtree(_database_dir, ignore_errors=True)
