"""TangoSource against a real simulated device server (database-less)."""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest
import tango
from tango_support import READY, CollectingSink, SimServer, start_sim, started_source

from synoptic_adapters.tango.settings import TangoSettings
from synoptic_adapters.tango.source import TangoSource
from synoptic_bus.procs import Process, free_port
from synoptic_schemas import PutError, parse_channel

pytestmark = pytest.mark.system

SCALARS = {
    "boolean": ("bool", bool),
    "uchar": ("u1", int),
    "short": ("i2", int),
    "ushort": ("u2", int),
    "long": ("i4", int),
    "ulong": ("u4", int),
    "long64": ("i8", int),
    "ulong64": ("u8", int),
    "float": ("f4", float),
    "double": ("f8", float),
    "string": ("str", str),
}


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    server = start_sim(rate=10.0)
    try:
        yield server
    finally:
        server.proc.stop()


@pytest.fixture
async def sink() -> CollectingSink:
    return CollectingSink()


@pytest.fixture
async def source(sim: SimServer, sink: CollectingSink) -> AsyncIterator[TangoSource]:
    src = await started_source(sim.settings(poll_period=0.3), sink)
    try:
        yield src
    finally:
        await src.stop()


async def test_every_type_decoded_with_metadata(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    names = [*SCALARS, "spectrum", "image", "mode", "devstate"]
    channels = {name: sim.channel(name) for name in names}
    await source.monitor(channels.values())
    await sink.wait(
        lambda: all(sink.last(c) and sink.last(c, "meta") for c in channels.values())
    )
    for name, (dt, kind) in SCALARS.items():
        value, meta = sink.last(channels[name]), sink.last(channels[name], "meta")
        assert isinstance(value.v, kind), (name, value.v)
        assert meta.meta["dt"] == dt and meta.meta["shape"] == []
        assert value.sev == 0 and value.st == "VALID"
        assert value.t > 1_600_000_000 * 10**9  # a real source timestamp, ns
    spectrum = sink.last(channels["spectrum"])
    assert spectrum.v.dtype == np.float64 and spectrum.v.shape == (128,)
    assert sink.last(channels["spectrum"], "meta").meta["unit"] == "V"
    image = sink.last(channels["image"])
    assert image.v.dtype == np.uint16 and image.v.shape == (24, 32)
    assert sink.last(channels["image"], "meta").meta["shape"] == [24, 32]
    mode_meta = sink.last(channels["mode"], "meta").meta
    assert mode_meta["dt"] == "enum"
    assert mode_meta["labels"] == ["OFF", "STANDBY", "ON", "FAULT"]
    assert 0 <= sink.last(channels["mode"]).v < 4
    state_meta = sink.last(channels["devstate"], "meta").meta
    assert state_meta["dt"] == "state"
    assert state_meta["labels"][sink.last(channels["devstate"]).v] in {
        "ON", "MOVING", "ALARM", "STANDBY",
    }  # fmt: skip
    double = sink.last(channels["double"], "meta").meta
    assert double["unit"] == "mm" and double["prec"] == 3 and double["w"] is True
    assert double["ctrl"] == [-1000.0, 1000.0] and double["warn"] == [-90.0, 90.0]
    assert double["desc"] == "a writable double"
    assert sink.last(channels["short"], "meta").meta["w"] is False
    # values keep changing through change events
    count = len(sink.of(channels["long"]))
    await sink.wait(lambda: len(sink.of(channels["long"])) >= count + 5)
    # every change subscription delivers without pytango's per-event wrappers
    (link,) = source.links.values()
    assert link.direct_callbacks >= len(names)


async def test_quality_maps_to_severity(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    quality, alarm = sim.channel("quality"), sim.channel("alarm")
    await source.monitor([quality, alarm])

    def seen(channel, pairs) -> bool:
        got = {(u.sev, u.st) for u in sink.of(channel)}
        return pairs <= got

    expected = {
        (0, "VALID"),
        (1, "WARNING"),
        (2, "ALARM"),
        (0, "CHANGING"),
        (3, "INVALID"),
    }
    await sink.wait(lambda: seen(quality, expected), timeout=20)
    invalid = [u for u in sink.of(quality) if u.st == "INVALID"]
    assert all(u.v is None for u in invalid)
    await sink.wait(
        lambda: seen(alarm, {(0, "VALID"), (1, "WARNING"), (2, "ALARM")}), 20
    )
    meta = sink.last(alarm, "meta").meta
    assert meta["warn"] == [-5.0, 5.0] and meta["alarm"] == [-8.0, 8.0]
    for update in sink.of(alarm):
        if update.sev == 2:
            assert abs(update.v) >= 8.0
        elif update.sev == 0:
            assert abs(update.v) < 5.0


async def test_attributes_without_events_are_polled(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    polled, text = sim.channel("polled"), sim.channel("polled_string")
    await source.monitor([polled, text])
    await sink.wait(lambda: len(sink.of(polled)) >= 4 and len(sink.of(text)) >= 4)
    values = [u.v for u in sink.of(polled)]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert sink.last(text).v.startswith("poll ")
    link = next(iter(source.links.values()))
    assert link.attrs["polled"].events.name == "NONE"


async def test_slow_and_timing_out_attributes_do_not_delay_others(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    polled, slow, timeout = (sim.channel(n) for n in ("polled", "slow", "timeout"))
    await source.monitor([polled, slow, timeout])
    await sink.wait(lambda: sink.last(slow) is not None, timeout=20)
    await sink.wait(lambda: sink.last(timeout) is not None, timeout=20)
    # the first status says the timeout; once the device answers a ping again,
    # a second one may add how long it was busy with the read (a loaded machine)
    assert sink.first(timeout).st.startswith("read timed out after 3.0 s; next try in")
    assert re.fullmatch(
        r"read timed out after 3\.0 s( \(the device was busy \d+\.\d s with it\))?; "
        r"next try in \d+ s",
        sink.last(timeout).st,
    ), sink.last(timeout).st
    assert sink.last(timeout).v is None and sink.last(timeout).sev == 3
    assert re.fullmatch(  # 2 s, more on a loaded machine
        r"read took [2-5]\.\d s \(slow: over 1 s\); next try in \d+ s",
        sink.last(slow).st,
    ), sink.last(slow).st
    assert sink.last(slow).sev == 3
    start = len(sink.of(polled))
    await sink.wait(lambda: len(sink.of(polled)) >= start + 10, timeout=20)
    # polled every 0.3 s: the slow (2 s) and timing-out (6 s) attributes are backed
    # off, so no gap between two values of the fast attribute comes near 2 s
    arrivals = [u.at for u in sink.of(polled)[start:]]
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert max(gaps) < 1.5, gaps
    link = next(iter(source.links.values()))
    assert link.attrs["slow"].strikes == 1 and link.attrs["timeout"].strikes == 1
    assert link.attrs["polled"].strikes == 0 and link.attrs["polled"].proven


async def test_writes_and_their_errors(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    double = sim.channel("double")
    await source.monitor([double])
    ok = await source.put(double, 12.5, 5)
    assert ok["ok"] is True
    await sink.wait(lambda: sink.last(double) and sink.last(double).v == 12.5)

    out_of_range = await source.put(double, 5000, 5)
    assert out_of_range["ok"] is False and out_of_range["err"] == PutError.FAILED
    assert "API_WAttrOutsideLimit" in out_of_range["msg"]
    assert "above the maximum" in out_of_range["msg"]

    read_only = await source.put(sim.channel("short"), 1, 5)
    assert read_only["err"] == PutError.ACCESS
    bad_type = await source.put(sim.channel("long"), 1.5, 5)
    assert bad_type["err"] == PutError.TYPE
    not_a_number = await source.put(double, "abc", 5)
    assert not_a_number["err"] == PutError.TYPE
    unknown = await source.put(sim.channel("nosuch"), 1, 5)
    assert unknown["err"] == PutError.UNKNOWN

    assert (await source.put(sim.channel("mode"), "on", 5))["ok"] is True
    assert (await source.put(sim.channel("string"), "hello", 5))["ok"] is True
    assert (await source.put(sim.channel("boolean"), True, 5))["ok"] is True
    assert (await source.put(sim.channel("mode"), "SIDEWAYS", 5))[
        "err"
    ] == PutError.TYPE


async def test_unknown_device_and_attribute_never_connected(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    nosuch_attr = sim.channel("nosuch")
    nosuch_device = parse_channel(f"tango://{sim.hostport}/sim/test/99/double")
    nobody = parse_channel(f"tango://127.0.0.1:{free_port()}/sim/test/1/double")
    fine = sim.channel("ushort")
    await source.monitor([nosuch_attr, nosuch_device, nobody, fine])
    for channel in (nosuch_attr, nosuch_device, nobody):
        await sink.wait(lambda c=channel: sink.last(c, "disconnected") is not None, 20)
        assert sink.last(channel, "disconnected").st.startswith("never connected")
        assert sink.last(channel) is None
    assert "has no attribute 'nosuch'" in sink.last(nosuch_attr, "disconnected").st
    await sink.wait(lambda: sink.last(fine) is not None)
    down = await source.put(nobody, 1.0, 3)
    assert down["ok"] is False and down["err"] in (
        PutError.DISCONNECTED,
        PutError.FAILED,
    )


async def test_release_stops_updates(
    sim: SimServer, sink: CollectingSink, source: TangoSource
) -> None:
    long = sim.channel("long")
    await source.monitor([long])
    await sink.wait(lambda: len(sink.of(long)) >= 2)
    await source.release([long])
    assert not source.links
    count = len(sink.of(long))
    other = sim.channel("ulong")
    await source.monitor([other])
    await sink.wait(lambda: len(sink.of(other)) >= 5)
    assert len(sink.of(long)) == count


async def test_with_a_tango_database(tmp_path: Path) -> None:
    """pytango's own database server (sqlite, no MySQL): the sim registers its
    device there and the adapter finds it through tango://DBHOST:PORT/…"""
    db_port = free_port()
    database = Process(
        "tango-db",
        [sys.executable, "-m", "tango.databaseds.database",
         "--host", "127.0.0.1", "--port", str(db_port), "2"],
        env={"PYTANGO_DATABASE_NAME": str(tmp_path / "tango.db")},
        cwd=tmp_path,
    )  # fmt: skip
    server = None
    try:
        database.wait_for(READY, timeout=60)
        server = start_sim(rate=10.0, env={"TANGO_HOST": f"127.0.0.1:{db_port}"})
        sink = CollectingSink()
        source = await started_source(TangoSettings(), sink)
        try:
            double = parse_channel(f"tango://127.0.0.1:{db_port}/sim/test/1/double")
            polled = parse_channel(f"tango://127.0.0.1:{db_port}/sim/test/1/polled")
            missing = parse_channel(f"tango://127.0.0.1:{db_port}/no/such/device/x")
            await source.monitor([double, polled, missing])
            await sink.wait(lambda: len(sink.of(double)) >= 3 and sink.of(polled), 20)
            assert sink.last(double, "meta").meta["unit"] == "mm"
            await sink.wait(lambda: sink.last(missing, "disconnected") is not None, 20)
            assert "DB_DeviceNotDefined" in sink.last(missing, "disconnected").st
            assert (await source.put(double, 3.5, 5))["ok"] is True
        finally:
            await source.stop()
    finally:
        if server is not None:
            server.proc.stop()
        database.stop()


async def test_metadata_read_again_without_configuration_events(
    sim: SimServer, sink: CollectingSink
) -> None:
    """A device with more attributes than ``config_events_max`` gets no
    configuration events; a changed unit still arrives, by periodic reads."""
    settings = sim.settings(config_events_max=0, meta_period=0.3)
    source = await started_source(settings, sink)
    proxy = tango.DeviceProxy(f"tango://{sim.hostport}/sim/test/1#dbase=no")
    info = proxy.get_attribute_config("alarm")
    try:
        alarm = sim.channel("alarm")
        await source.monitor([alarm])
        await sink.wait(lambda: sink.last(alarm, "meta") is not None)
        assert sink.last(alarm, "meta").meta["unit"] == "A"
        (link,) = source.links.values()
        assert link.attrs["alarm"].conf_id is None  # no configuration events
        info.unit = "mA"
        proxy.set_attribute_config(info)
        await sink.wait(lambda: sink.last(alarm, "meta").meta.get("unit") == "mA")
    finally:
        info.unit = "A"
        proxy.set_attribute_config(info)
        await source.stop()
