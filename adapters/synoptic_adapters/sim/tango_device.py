"""A simulated Tango device server (pytango) for the demo, tests and benchmarks.

Every device of class ``SynopticSim`` has:

- a scalar attribute of each Tango type (``boolean``, ``uchar``, ``short``,
  ``ushort``, ``long``, ``ulong``, ``long64``, ``ulong64``, ``float``, ``double``,
  ``string``), changing at the rate R with change events; ``double``,
  ``long``, ``boolean`` and ``string`` are writable (``double`` refuses values
  outside [-1000, 1000]);
- ``spectrum`` (128 doubles) and ``image`` (24 x 32 unsigned shorts), with events;
- ``devstate`` (DevState) and ``mode`` (DevEnum, writable), with events;
- ``alarm``: a sine of amplitude 10 crossing its warning (±5) and alarm (±8) limits;
- ``quality``: a counter whose quality cycles VALID, WARNING, ALARM, CHANGING,
  INVALID, one step per tick;
- ``polled`` and ``polled_string``: no change events (clients must poll);
- ``slow`` (every read takes 2 s) and ``timeout`` (every read takes 6 s, longer
  than the default 3 s client timeout);
- ``bulk_0000`` … : a configurable number of doubles, each counting up by 1 per
  poll with change events (a skipped count is a lost event), for benchmarks;
- commands: ``Reset`` (no argument, no output: written values are forgotten),
  ``SetLevel(double) -> double`` (writes ``double``, refusing values outside its
  limits with a DevFailed), ``Sleep(double) -> string`` (sleeps that many seconds,
  at most 10, for timeouts) and ``Reverse(long array) -> long array``.

Change events come from Tango's own polling (period 1/R, ``abs_change``
criteria), not from ``push_change_event`` in a user thread: the server runs with
the ``NO_SYNC`` serialisation model so that a slow read does not block other
reads of the same device (the default, by-device, would make every attribute of
a device as slow as its slowest one, whatever the client does), and under
``NO_SYNC`` a user thread that pushes while a client reads the same attribute
corrupts the server's heap (seen here: ``malloc_consolidate()`` aborts). With
polling, client reads of polled attributes are served from the polling buffer and
never run concurrently with the poller's reads. Run it with ``synoptic sim
tango`` (see :func:`serve`).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import tango
from tango import AttrQuality, AttrWriteType, DevState
from tango.server import Device, attribute, command, run

#: Environment variables that carry the settings into the server process.
ENV_RATE = "SYNOPTIC_TANGO_RATE"
ENV_BULK = "SYNOPTIC_TANGO_BULK"

MODE_LABELS = ("OFF", "STANDBY", "ON", "FAULT")
STATE_CYCLE = (DevState.ON, DevState.MOVING, DevState.ALARM, DevState.STANDBY)
QUALITY_CYCLE = (
    AttrQuality.ATTR_VALID,
    AttrQuality.ATTR_WARNING,
    AttrQuality.ATTR_ALARM,
    AttrQuality.ATTR_CHANGING,
    AttrQuality.ATTR_INVALID,
)
SLOW_READ_S = 2.0
TIMEOUT_READ_S = 6.0
SPECTRUM_LEN = 128
IMAGE_SHAPE = (24, 32)
DOUBLE_LIMITS = (-1000.0, 1000.0)
MAX_SLEEP_S = 10.0
WRITE_HOLD_TICKS = 50  # a written value is read back for this many ticks


def exit_now() -> None:
    """Exit at once, status 0 (a stop asked for, not a failure).

    Tango's own shutdown waits for the requests in progress (clients keep reading
    the 2 s and 6 s attributes, so it could take forever) and then races with
    requests still arriving while it deletes the devices (seen here: SIGSEGV in
    ``Util::find_device_name_core``). A simulator has nothing to save: the
    operating system closes its sockets, and clients see the server gone."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


#: Scalar attributes with events: name -> (Tango type, writable).
SCALARS: dict[str, tuple[object, bool]] = {
    "boolean": (tango.DevBoolean, True),
    "uchar": (tango.DevUChar, False),
    "short": (tango.DevShort, False),
    "ushort": (tango.DevUShort, False),
    "long": (tango.DevLong, True),
    "ulong": (tango.DevULong, False),
    "long64": (tango.DevLong64, False),
    "ulong64": (tango.DevULong64, False),
    "float": (tango.DevFloat, False),
    "double": (tango.DevDouble, True),
    "string": (tango.DevString, True),
}


@dataclass(frozen=True)
class SimSettings:
    """How fast values change and how many bulk attributes each device has."""

    rate_hz: float = 10.0
    bulk: int = 0

    @classmethod
    def from_env(cls) -> SimSettings:
        return cls(
            rate_hz=float(os.environ.get(ENV_RATE, "10")),
            bulk=int(os.environ.get(ENV_BULK, "0")),
        )


#: Attributes whose change events come from polling at the rate R.
EVENT_ATTRIBUTES = (
    *SCALARS,
    "spectrum",
    "image",
    "mode",
    "devstate",
    "alarm",
    "quality",
)


def _scalar_value(name: str, tick: int) -> object:
    """The value of scalar attribute ``name`` at ``tick`` (deterministic)."""
    if name == "mode":
        return (tick // 20) % len(MODE_LABELS)
    if name == "boolean":
        return tick % 2 == 1
    if name in ("float", "double"):
        return round(math.sin(tick / 10.0) * 100.0, 3)
    if name == "string":
        return f"tick {tick}"
    if name == "uchar":
        return tick % 256
    if name == "short":
        return (tick % 2000) - 1000
    if name == "ushort":
        return tick % 65536
    if name == "long64":
        return tick + 2**40
    if name == "ulong64":
        return tick + 2**63
    return tick  # long, ulong


def _alarm_quality(value: float) -> AttrQuality:
    if abs(value) >= 8.0:
        return AttrQuality.ATTR_ALARM
    if abs(value) >= 5.0:
        return AttrQuality.ATTR_WARNING
    return AttrQuality.ATTR_VALID


def _scalar_attribute(name: str) -> attribute:
    """Build the attribute object of one scalar (closures keep the name)."""
    dtype, writable = SCALARS[name]

    def fget(self: SynopticSim) -> object:
        return self._scalar(name)

    def fset(self: SynopticSim, value: object) -> None:
        self._write_scalar(name, value)

    extra: dict[str, object] = {}
    if dtype not in (tango.DevBoolean, tango.DevString):
        extra["abs_change"] = "0.0001"
    if name == "double":
        extra |= {
            "unit": "mm",
            "format": "%8.3f",
            "min_value": DOUBLE_LIMITS[0],
            "max_value": DOUBLE_LIMITS[1],
            "min_warning": -90.0,
            "max_warning": 90.0,
            "description": "a writable double",
        }
    return attribute(
        name=name,
        dtype=dtype,
        access=AttrWriteType.READ_WRITE if writable else AttrWriteType.READ,
        fget=fget,
        fset=fset if writable else None,
        **extra,
    )


class SynopticSim(Device):
    """Simulated device: every attribute kind a Tango adapter must handle."""

    boolean = _scalar_attribute("boolean")
    uchar = _scalar_attribute("uchar")
    short = _scalar_attribute("short")
    ushort = _scalar_attribute("ushort")
    long = _scalar_attribute("long")
    ulong = _scalar_attribute("ulong")
    long64 = _scalar_attribute("long64")
    ulong64 = _scalar_attribute("ulong64")
    float = _scalar_attribute("float")
    double = _scalar_attribute("double")
    string = _scalar_attribute("string")

    spectrum = attribute(
        dtype=(tango.DevDouble,),
        max_dim_x=SPECTRUM_LEN,
        fget="_read_spectrum",
        abs_change="0.0001",
        unit="V",
    )
    image = attribute(
        dtype=((tango.DevUShort,),),
        max_dim_x=IMAGE_SHAPE[1],
        max_dim_y=IMAGE_SHAPE[0],
        fget="_read_image",
        abs_change="1",
    )
    mode = attribute(
        dtype=tango.DevEnum,
        enum_labels=list(MODE_LABELS),
        access=AttrWriteType.READ_WRITE,
        fget="_read_mode",
        fset="_write_mode",
    )
    devstate = attribute(dtype=tango.DevState, fget="_read_devstate")
    alarm = attribute(
        dtype=tango.DevDouble,
        fget="_read_alarm",
        abs_change="0.0001",
        min_warning=-5.0,
        max_warning=5.0,
        min_alarm=-8.0,
        max_alarm=8.0,
        unit="A",
    )
    quality = attribute(dtype=tango.DevDouble, fget="_read_quality", abs_change="0.5")
    polled = attribute(dtype=tango.DevDouble, fget="_read_polled")
    polled_string = attribute(dtype=tango.DevString, fget="_read_polled_string")
    slow = attribute(dtype=tango.DevDouble, fget="_read_slow")
    timeout = attribute(dtype=tango.DevDouble, fget="_read_timeout")

    @command
    def Reset(self) -> None:  # noqa: N802 - Tango command names are CamelCase
        """Forget written values: attributes follow the simulation again."""
        with self._lock:
            self._written.clear()

    @command(dtype_in=tango.DevDouble, dtype_out=tango.DevDouble)
    def SetLevel(self, level: float) -> float:  # noqa: N802
        """Write ``double`` (within its limits) and return the value written."""
        low, high = DOUBLE_LIMITS
        if not low <= level <= high:
            tango.Except.throw_exception(
                "SIM_OutOfRange", f"level {level} outside [{low}, {high}]", "SetLevel"
            )
        self._write_scalar("double", level)
        return level

    @command(dtype_in=tango.DevDouble, dtype_out=tango.DevString)
    def Sleep(self, seconds: float) -> str:  # noqa: N802
        """Sleep ``seconds`` (at most 10): a command slower than its caller waits."""
        time.sleep(min(max(seconds, 0.0), MAX_SLEEP_S))
        return f"slept {seconds:g} s"

    @command(dtype_in=(tango.DevLong,), dtype_out=(tango.DevLong,))
    def Reverse(self, values: np.ndarray) -> np.ndarray:  # noqa: N802
        """The array, last element first."""
        return np.asarray(values)[::-1]

    def init_device(self) -> None:
        super().init_device()
        self.settings = SimSettings.from_env()
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._written: dict[str, tuple[int, object]] = {}  # name -> (tick, value)
        self._polls: dict[str, int] = {}
        self.set_state(DevState.ON)
        for signo in (signal.SIGTERM, signal.SIGINT):
            self.register_signal(signo)

    def signal_handler(self, signo: int) -> None:
        """SIGTERM/SIGINT: exit now (see :func:`exit_now`), before Tango's own
        shutdown starts."""
        if signo in (signal.SIGTERM, signal.SIGINT):
            exit_now()

    def initialize_dynamic_attributes(self) -> None:
        settings = SimSettings.from_env()
        for name in self._bulk_names(settings):
            self.add_attribute(
                attribute(
                    name=name,
                    dtype=tango.DevDouble,
                    unit="count",
                    abs_change="0.5",
                    fget=self._read_bulk,
                )
            )
        if settings.rate_hz > 0:
            period_ms = max(1, round(1000 / settings.rate_hz))
            for name in (*EVENT_ATTRIBUTES, *self._bulk_names(settings)):
                self.poll_attribute(name, period_ms)

    @staticmethod
    def _bulk_names(settings: SimSettings) -> list[str]:
        return [f"bulk_{i:04d}" for i in range(settings.bulk)]

    @property
    def _tick(self) -> int:
        return int((time.monotonic() - self._start) * max(self.settings.rate_hz, 1.0))

    def _scalar(self, name: str) -> object:
        tick = self._tick
        with self._lock:
            written = self._written.get(name)
        if written is not None and tick - written[0] < WRITE_HOLD_TICKS:
            return written[1]
        return _scalar_value(name, tick)

    def _write_scalar(self, name: str, value: object) -> None:
        with self._lock:
            self._written[name] = (self._tick, value)

    def _read_bulk(self, attr: tango.Attribute) -> float:
        name = attr.get_name()
        with self._lock:
            count = self._polls[name] = self._polls.get(name, 0) + 1
        return float(count)

    # -- values ------------------------------------------------------------------

    @staticmethod
    def _spectrum(tick: int) -> np.ndarray:
        x = np.arange(SPECTRUM_LEN, dtype=np.float64)
        return np.sin(x / 8.0 + tick / 5.0)

    @staticmethod
    def _image(tick: int) -> np.ndarray:
        height, width = IMAGE_SHAPE
        return (
            np.arange(height * width, dtype=np.uint16).reshape(height, width) + tick
        ).astype(np.uint16)

    @staticmethod
    def _alarm(tick: int) -> float:
        return round(10.0 * math.sin(tick / 7.0), 3)

    @staticmethod
    def _quality(tick: int) -> AttrQuality:
        return QUALITY_CYCLE[tick % len(QUALITY_CYCLE)]

    # -- attribute reads and writes ------------------------------------------------

    def _read_spectrum(self) -> np.ndarray:
        return self._spectrum(self._tick)

    def _read_image(self) -> np.ndarray:
        return self._image(self._tick)

    def _read_mode(self) -> int:
        return int(self._scalar("mode"))

    def _write_mode(self, value: int) -> None:
        self._write_scalar("mode", int(value))

    def _read_devstate(self) -> DevState:
        return STATE_CYCLE[(self._tick // 20) % len(STATE_CYCLE)]

    def _read_alarm(self) -> tuple[float, float, AttrQuality]:
        value = self._alarm(self._tick)
        return value, time.time(), _alarm_quality(value)

    def _read_quality(self) -> tuple[float, float, AttrQuality]:
        tick = self._tick
        return float(tick), time.time(), self._quality(tick)

    def _read_polled(self) -> float:
        return float(self._tick)

    def _read_polled_string(self) -> str:
        return f"poll {self._tick}"

    def _read_slow(self) -> float:
        time.sleep(SLOW_READ_S)
        return float(self._tick)

    def _read_timeout(self) -> float:
        time.sleep(TIMEOUT_READ_S)
        return float(self._tick)


# -- running the server ---------------------------------------------------------------

READY_LINE = "synoptic-sim-tango ready"


def device_names(count: int, prefix: str = "sim/test") -> list[str]:
    """``sim/test/1`` … ``sim/test/<count>``."""
    return [f"{prefix}/{i}" for i in range(1, count + 1)]


def register_in_database(instance: str, devices: list[str]) -> None:
    """Add the devices to the Tango database named by ``TANGO_HOST``."""
    database = tango.Database()
    for name in devices:
        info = tango.DbDevInfo()
        info.name = name
        info._class = "SynopticSim"
        info.server = f"SynopticSim/{instance}"
        database.add_device(info)


def serve(
    *,
    port: int,
    devices: list[str],
    instance: str = "sim",
    rate_hz: float = 10.0,
    bulk: int = 0,
    use_database: bool = False,
    host: str = "127.0.0.1",
) -> None:
    """Run the device server in this process until SIGTERM or SIGINT (it exits at
    once, status 0, even while clients read the slow attributes) or until killed.

    Without a database (the default) the devices answer on ``host:port`` and
    clients name them ``tango://host:port/<device>#dbase=no``; with
    ``use_database`` they are registered in the database of ``TANGO_HOST`` and the
    server listens on ``host:port``. Prints :data:`READY_LINE` when serving.
    """
    os.environ[ENV_RATE] = str(rate_hz)
    os.environ[ENV_BULK] = str(bulk)
    args = ["SynopticSim", instance]
    if use_database:
        register_in_database(instance, devices)
        args += ["-ORBendPoint", f"giop:tcp:{host}:{port}"]
    else:
        args += ["-nodb", "-port", str(port), "-dlist", ",".join(devices)]
        args += ["-ORBendPoint", f"giop:tcp:{host}:{port}"]

    def ready() -> None:
        tango.Util.instance().set_serial_model(tango.SerialModel.NO_SYNC)
        where = os.environ.get("TANGO_HOST", "") if use_database else f"{host}:{port}"
        print(
            f"{READY_LINE} at {where}: {len(devices)} device(s) "
            f"{devices[0]}..., {bulk} bulk attribute(s) each at {rate_hz} Hz",
            flush=True,
        )

    run((SynopticSim,), args=args, post_init_callback=ready)
