"""A simulated PV Access server (p4p) for the demo, tests and benchmarks.

It serves the simulated IOC's channels as normative types, under a prefix ``P``:

- ``N`` counters ``<P>CNT:00000`` … (NTScalar double) adding 1 at rate ``R``;
- the IOC's extras: ``SINE`` (display, control and valueAlarm limits it crosses:
  MINOR beyond ±5, MAJOR beyond ±8), ``NOISE``, ``WALK``, ``WF1K`` and the
  writable ``WF100K`` (NTScalarArray double), the writable ``WF:I16`` (NTScalarArray
  of 8 signed 16-bit integers) and ``NAMES`` (NTScalarArray of strings), ``STATE`` (NTEnum cycling
  Idle/Running/Fault) and the writable ``MODE`` (NTEnum), ``MSG`` and the
  writable ``MSG:SP`` (strings), the writable ``SP`` (0..100 A, clamped) and
  ``SP:RO``, which refuses every put;
- PV Access only: ``TABLE`` (NTTable of four columns, one row per counter up to
  8, changing every second), ``IMAGE`` (NTNDArray, 1024×1024 unsigned 16-bit,
  a moving pattern at the image rate), ``MOTOR`` (a structure of an unknown
  normative type, ``synoptic:sim/Motor:1.0``), ``HISTOGRAM`` (an NTHistogram,
  a normative type the adapter does not map, in MINOR alarm) and ``SWAP``, whose
  type is the one ``SWAP:CTL`` names (0 double, 1 string, 2 array of doubles,
  3 NTTable; ``--swap-type`` at start): writing ``SWAP:CTL`` closes it and opens
  it with that type, as an IOC restarted with a changed database would;
- ``IMAGE:LZ4``, ``IMAGE:BSLZ4``, ``IMAGE:BLOSC`` (96×128 unsigned 16-bit) and
  ``IMAGE:JPEG`` (96×128 RGB, 8-bit) compressed as areaDetector's codec plugin
  sends them, and ``IMAGE:ZFP``, compressed with a codec the adapter does not
  decode: a new image each second (:func:`codec_image`).

The server listens on loopback only, on one port for TCP and UDP search, and
sends its beacons to loopback (:func:`~synoptic_adapters.sim.pva_env.pva_environment`).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from p4p import Type, Value
from p4p.nt import NTEnum, NTNDArray, NTScalar, NTTable
from p4p.nt import common as nt_common
from p4p.nt.common import alarm as alarm_t
from p4p.server import Server
from p4p.server.thread import SharedPV

from synoptic_adapters.sim.epics_db import WAVEFORM_BIG, WAVEFORM_SMALL, SimSpec
from synoptic_adapters.sim.epics_db import counter_names as _counter_names
from synoptic_adapters.sim.nd_encode import encode, nd_data_type
from synoptic_adapters.sim.pva_env import CODEC_IMAGES, pva_environment
from synoptic_bus.stopsignal import StopSignals

READY = "sim pva ready"
#: Seconds each step of a stop may take (the moving threads, the server's close)
STOP_BOUND = 3.0
IMAGE_SIZE = 1024
TABLE_ROWS = 8
MOTOR_ID = "synoptic:sim/Motor:1.0"
HISTOGRAM_ID = "epics:nt/NTHistogram:1.0"
#: ``SWAP``'s types, by the value written to ``SWAP:CTL``: (normative type, value).
SWAP_TYPES: tuple[tuple[Any, Any], ...] = (
    (NTScalar("d"), 0.0),
    (NTScalar("s"), "text"),
    (NTScalar("ad"), np.array([1.0, 2.0, 3.0])),
    (NTTable([("name", "s"), ("x", "d")]), [{"name": "a", "x": 1.0}]),
)
CODEC_IMAGE_SHAPE = (96, 128)


@dataclass
class _Put:
    """A put handler: ``convert(pv, value)`` returns what to post, or raises."""

    convert: Callable[[SharedPV, Any], Any]

    def put(self, pv: SharedPV, op: Any) -> None:
        value = op.value()
        try:
            pv.post(
                self.convert(pv, getattr(value, "raw", value)), timestamp=time.time()
            )
        except Exception as exc:
            op.done(error=str(exc))
            return
        op.done()


def _refuse(_pv: SharedPV, _value: Any) -> Any:
    raise PermissionError("put not permitted: read-only PV")


def _clamped(lo: float, hi: float) -> Callable[[SharedPV, Any], Any]:
    def convert(_pv: SharedPV, value: Any) -> Any:
        return min(max(float(value["value"]), lo), hi)

    return convert


def _as_is(_pv: SharedPV, value: Any) -> Any:
    return value["value"]


def _enum_index(pv: SharedPV, value: Any) -> Any:
    current = pv.current().raw
    choices = list(current["value.choices"])
    index = int(value["value.index"])
    if not 0 <= index < len(choices):
        raise ValueError(f"index {index} beyond {len(choices)} choices")
    return {"value.index": index}


def _scalar(code: str, **kws: Any) -> NTScalar:
    return NTScalar(code, display=True, control=True, valueAlarm=True, form=True, **kws)


def _limits(units: str, precision: int, lo: float, hi: float, **alarm: Any) -> dict:
    fields: dict[str, Any] = {
        "display.units": units, "display.precision": precision,
        "display.limitLow": lo, "display.limitHigh": hi,
    }  # fmt: skip
    for key, value in alarm.items():
        fields[f"valueAlarm.{key}"] = value
    if alarm:
        fields["valueAlarm.active"] = True
    return fields


class SimServer:
    """The PVs and the threads that move them."""

    def __init__(
        self, spec: SimSpec, image_rate: float, fill_rate: float, swap_type: int = 0
    ) -> None:
        self.spec = spec
        self.image_rate = image_rate
        self.fill_rate = fill_rate
        self.stop = threading.Event()
        self.pvs: dict[str, SharedPV] = {}
        p = spec.prefix
        self.counters = [
            self._add(name, NTScalar("d"), 0.0) for name in _counter_names(spec)
        ]
        if not spec.extras:
            return
        sine_limits = _limits(
            "mm", 3, -10.0, 10.0, lowAlarmLimit=-8.0, lowWarningLimit=-5.0,
            highWarningLimit=5.0, highAlarmLimit=8.0,
        )  # fmt: skip
        self.sine = self._add(f"{p}SINE", _scalar("d"), {"value": 0.0, **sine_limits})
        self.noise = self._add(
            f"{p}NOISE", _scalar("d"), {"value": 0.0, **_limits("V", 4, -1.0, 1.0)}
        )
        self.walk = self._add(
            f"{p}WALK", _scalar("d"), {"value": 0.0, **_limits("um", 2, 0.0, 0.0)}
        )
        self.wf1k = self._add(
            f"{p}WF1K", _scalar("ad"),
            {"value": np.zeros(WAVEFORM_SMALL), **_limits("mm", 3, -10.0, 10.0)},
        )  # fmt: skip
        self.wf100k = self._add(
            f"{p}WF100K", _scalar("ad"),
            {"value": np.zeros(WAVEFORM_BIG), "display.units": "counts"},
            handler=_Put(_as_is),
        )  # fmt: skip
        self._add(
            f"{p}WF:I16", _scalar("ah"),
            {"value": np.arange(-4, 4, dtype=np.int16), "display.units": "counts"},
            handler=_Put(_as_is),
        )  # fmt: skip
        self._add(f"{p}NAMES", NTScalar("as"), ["alpha", "beta", "gamma"])
        self.state = self._add(
            f"{p}STATE", NTEnum(), {"value.index": 0,
                                    "value.choices": ["Idle", "Running", "Fault"]},
        )  # fmt: skip
        self._add(
            f"{p}MODE", NTEnum(), {"value.index": 0,
                                   "value.choices": ["Off", "On", "Standby"]},
            handler=_Put(_enum_index),
        )  # fmt: skip
        self._add(f"{p}MSG", NTScalar("s"), "hello from the simulated PVA server")
        self._add(f"{p}MSG:SP", NTScalar("s"), "", handler=_Put(_as_is))
        sp_limits = _limits(
            "A", 3, 0.0, 100.0, lowAlarmLimit=2.0, lowWarningLimit=5.0,
            highWarningLimit=80.0, highAlarmLimit=90.0,
        )  # fmt: skip
        self._add(
            f"{p}SP", _scalar("d"),
            {"value": 50.0, "control.limitLow": 0.0, "control.limitHigh": 100.0,
             **sp_limits},
            handler=_Put(_clamped(0.0, 100.0)),
        )  # fmt: skip
        self._add(
            f"{p}SP:RO", _scalar("d"), {"value": 1.0, "display.units": "A"},
            handler=_Put(_refuse),
        )  # fmt: skip
        self.table_nt = NTTable(
            [("name", "s"), ("position", "d"), ("current", "d"), ("ok", "?")]
        )
        self.table = self._add(f"{p}TABLE", self.table_nt, self._table_rows(0))
        self.image_nt = NTNDArray()
        self.image_base = _image_base(IMAGE_SIZE)
        self.image = self._add(f"{p}IMAGE", self.image_nt, self._image(0))
        self._add(f"{p}MOTOR", None, _motor(0))
        self._add(f"{p}HISTOGRAM", None, _histogram())
        self.codec_images = {
            codec: self._add(f"{p}IMAGE:{codec.upper()}", None, compressed(codec, 0))
            for codec in CODEC_IMAGES
        }
        self.swap = self._add(f"{p}SWAP", *SWAP_TYPES[swap_type])
        self._add(f"{p}SWAP:CTL", NTScalar("i"), swap_type, handler=_Put(self._swap))

    def _add(self, name: str, nt: Any, initial: Any, handler: Any = None) -> SharedPV:
        pv = (
            SharedPV(initial=initial, handler=handler)
            if nt is None
            else SharedPV(nt=nt, initial=initial, handler=handler)
        )
        self.pvs[name] = pv
        return pv

    def _swap(self, _pv: SharedPV, value: Any) -> Any:
        """Reopen ``SWAP`` with the type :data:`SWAP_TYPES` holds at the value
        written: its clients are disconnected and find that structure when they
        reconnect."""
        index = int(value["value"])
        if not 0 <= index < len(SWAP_TYPES):
            raise ValueError(f"SWAP:CTL is 0..{len(SWAP_TYPES) - 1}, not {index}")
        nt, initial = SWAP_TYPES[index]
        self.swap.close(destroy=True, sync=True, timeout=5.0)
        self.swap.open(initial, nt=nt)
        return index

    # -- moving values ----------------------------------------------------------------

    def _table_rows(self, tick: int) -> list[dict[str, Any]]:
        rows = min(max(self.spec.records, 1), TABLE_ROWS)
        return [
            {"name": f"M{i}", "position": round(10 * math.sin((tick + i) / 5), 3),
             "current": round(1.0 + 0.1 * i + 0.01 * (tick % 10), 3),
             "ok": (tick + i) % 7 != 0}
            for i in range(rows)
        ]  # fmt: skip

    def _image(self, tick: int) -> np.ndarray:
        shift = (tick * 8) % IMAGE_SIZE
        return np.roll(self.image_base, (shift, shift // 2), axis=(0, 1))

    def run_scalars(self) -> None:
        """Counters and the moving extras at the record rate."""
        period = 1.0 / self.spec.rate
        rng = np.random.default_rng(1)
        tick, walk, phase = 0, 0.0, 0.0
        history = np.zeros(WAVEFORM_SMALL)
        next_at = time.monotonic()
        while not self.stop.is_set():
            now = time.time()
            for pv in self.counters:
                pv.post(float(tick + 1), timestamp=now)
            if self.spec.extras:
                phase += 0.05
                sine = 10.0 * math.sin(phase)
                sev, message = _sine_alarm(sine)
                self.sine.post(sine, timestamp=now, severity=sev, message=message)
                self.noise.post(float(rng.uniform(-1, 1)), timestamp=now)
                walk += float(rng.uniform(-0.5, 0.5))
                self.walk.post(walk, timestamp=now)
                history = np.roll(history, -1)
                history[-1] = sine
                self.wf1k.post(history, timestamp=now)
                every_second = max(round(self.spec.rate), 1)
                if tick % every_second == 0:
                    second = tick // every_second
                    index = second % 3
                    self.state.post(
                        {"value.index": index}, timestamp=now,
                        severity=2 if index == 2 else 0,
                        message="STATE" if index == 2 else "",
                    )  # fmt: skip
                    self.table.post(self._table_rows(second), timestamp=now)
                    for codec, pv in self.codec_images.items():
                        pv.post(compressed(codec, second, now))
            tick += 1
            next_at += period
            self.stop.wait(max(next_at - time.monotonic(), 0.0))

    def run_image(self) -> None:
        """The image at the image rate."""
        period = 1.0 / self.image_rate
        tick = 0
        next_at = time.monotonic()
        while not self.stop.is_set():
            tick += 1
            self.image.post(self._image(tick), timestamp=time.time())
            next_at += period
            self.stop.wait(max(next_at - time.monotonic(), 0.0))

    def run_fill(self) -> None:
        """A moving 100k-point pattern in ``WF100K`` at the fill rate."""
        x = np.linspace(0.0, 40.0 * np.pi, WAVEFORM_BIG)
        envelope = 1000.0 * np.exp(-(((x - x.mean()) / (np.ptp(x) / 5)) ** 2))
        rng = np.random.default_rng(2)
        phase = 0.0
        while not self.stop.wait(1.0 / self.fill_rate):
            data = envelope * np.sin(x + phase) + rng.normal(0.0, 20.0, WAVEFORM_BIG)
            self.wf100k.post(data, timestamp=time.time())
            phase += 0.25


def _sine_alarm(value: float) -> tuple[int, str]:
    if abs(value) > 8:
        return 2, "HIHI" if value > 0 else "LOLO"
    if abs(value) > 5:
        return 1, "HIGH" if value > 0 else "LOW"
    return 0, ""


def _image_base(size: int) -> np.ndarray:
    """A 16-bit test pattern: a Gaussian spot on a gradient, with fixed noise."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    spot = np.exp(-(((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.01))
    rings = 0.5 + 0.5 * np.cos(40 * np.hypot(x - 0.3, y - 0.7))
    noise = np.random.default_rng(3).normal(0, 0.02, (size, size))
    image = 40000 * spot + 8000 * rings + 6000 * x + 2000 * noise + 2000
    return np.clip(image, 0, 65535).astype(np.uint16)


def codec_image(codec: str, tick: int) -> np.ndarray:
    """The uncompressed image ``IMAGE:<CODEC>`` sends at ``tick`` (seconds)."""
    h, w = CODEC_IMAGE_SHAPE
    y, x = np.mgrid[0:h, 0:w]
    pattern = (x * 37 + y * 11 + tick * 101) % 4096
    if codec == "jpeg":  # smooth: JPEG is lossy, its test compares within a bound
        ramp = (x * 2 + tick) % 256
        return np.stack([ramp, 255 - ramp, np.full_like(ramp, 128)], -1).astype(
            np.uint8
        )
    return pattern.astype(np.uint16)


def compressed(codec: str, tick: int, now: float | None = None) -> Value:
    """``IMAGE:<CODEC>``'s NTNDArray at ``tick``: the dimensions and colour mode
    of the uncompressed image, its bytes compressed as areaDetector does."""
    image = codec_image(codec, tick)
    value = NTNDArray().wrap(image)
    data = encode(codec, image) if codec != "zfp" else bytes(range(64))
    value["value"] = ("ubyteValue", np.frombuffer(data, np.uint8))
    value["codec.name"] = codec
    value["codec.parameters"] = nd_data_type(image.dtype)
    value["compressedSize"] = len(data)
    value["uncompressedSize"] = image.nbytes
    if now is not None:
        value["timeStamp.secondsPastEpoch"] = int(now)
        value["timeStamp.nanoseconds"] = int(now % 1 * 1e9)
    return value


def _motor(tick: int) -> Value:
    motor_type = Type(
        [
            ("position", "d"), ("moving", "?"), ("name", "s"),
            ("limits", ("S", None, [("low", "d"), ("high", "d")])),
            ("alarm", alarm_t),
        ],
        id=MOTOR_ID,
    )  # fmt: skip
    return Value(
        motor_type,
        {"position": 1.5 + tick, "moving": False, "name": "sim motor",
         "limits": {"low": -10.0, "high": 10.0}},
    )  # fmt: skip


def _histogram() -> Value:
    """An NTHistogram: a normative type with no mapping of its own in the adapter."""
    histogram_type = Type(
        [
            ("ranges", "ad"), ("value", "ai"), ("descriptor", "s"),
            ("alarm", alarm_t), ("timeStamp", nt_common.timeStamp),
        ],
        id=HISTOGRAM_ID,
    )  # fmt: skip
    return Value(
        histogram_type,
        {"ranges": np.array([0.0, 1.0, 2.0, 4.0]),
         "value": np.array([5, 12, 3], dtype=np.int32),
         "descriptor": "beam loss per bin",
         "alarm": {"severity": 1, "status": 0, "message": "few counts"},
         "timeStamp": {"secondsPastEpoch": int(time.time())}},
    )  # fmt: skip


def serve(
    spec: SimSpec,
    port: int,
    *,
    image_rate: float = 10.0,
    fill_rate: float = 0.0,
    interface: str = "127.0.0.1",
    swap_type: int = 0,
    beacons: bool = True,
) -> int:
    """Serve until SIGTERM/SIGINT; print :data:`READY` once serving."""
    signals = StopSignals()  # a flag and a pipe: safe whenever it lands
    os.environ.update(pva_environment(port, interface))
    if not beacons:  # as a server whose beacons are not routed to its clients
        os.environ["EPICS_PVAS_BEACON_ADDR_LIST"] = ""
    sim = SimServer(spec, image_rate, fill_rate, swap_type)
    server = Server(providers=[sim.pvs])
    threads = [threading.Thread(target=sim.run_scalars, daemon=True, name="scalars")]
    if spec.extras and image_rate > 0:
        threads.append(
            threading.Thread(target=sim.run_image, daemon=True, name="image")
        )
    if spec.extras and fill_rate > 0:
        threads.append(threading.Thread(target=sim.run_fill, daemon=True, name="fill"))
    for thread in threads:
        thread.start()
    print(
        f"{READY}: {len(sim.pvs)} PVs ({spec.records} counters at {spec.rate:g} Hz), "
        f"prefix {spec.prefix} on PVA port {port}",
        flush=True,
    )
    signals.wait()
    sim.stop.set()  # by the main thread, never in a signal handler
    for thread in threads:  # no post in flight while the server stops
        thread.join(STOP_BOUND)
    stopper = threading.Thread(target=server.stop, daemon=True, name="stop")
    stopper.start()
    stopper.join(STOP_BOUND)  # p4p's stop waits on its workers: bounded
    print(
        "sim pva stopped" if not stopper.is_alive() else
        f"sim pva stopped (the server did not close within {STOP_BOUND:g} s)",
        flush=True,
    )  # fmt: skip
    sys.stdout.flush()
    os._exit(0)
