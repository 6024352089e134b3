"""The PV Access adapter end to end: the simulated PVA server (p4p), a real
nats-server (8 MiB payloads, as deployed), the adapter as a child process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from synoptic_adapters.sim.pva_server import CODEC_IMAGES, codec_image
from synoptic_adapters.testing import (
    EpicsAdapter,
    SimPva,
    Tap,
    assert_counts_in_order,
    bus_put,
    eventually,
    fetch_all,
)
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_audit,
    decode_heartbeat,
    decode_meta,
    decode_value,
    encode,
    parse_channel,
)
from synoptic_schemas.codec import MAX_PAYLOAD, to_json_view
from synoptic_schemas.jsonschemas import validator

pytestmark = pytest.mark.system
SUBJECTS = Subjects()
#: the root conftest's nats-server carries the demo's images (several MB a message)
NATS_MAX_PAYLOAD = MAX_PAYLOAD
EXTRAS = [
    "SINE", "WF1K", "WF100K", "WF:I16", "NAMES", "STATE", "MODE", "MSG", "MSG:SP", "SP", "SP:RO",
    "TABLE", "IMAGE", "MOTOR", "HISTOGRAM", "SWAP",
    *(f"IMAGE:{codec.upper()}" for codec in CODEC_IMAGES),
]  # fmt: skip


@pytest.fixture(scope="module")
def sim() -> Iterator[SimPva]:
    server = SimPva(records=3, image_rate=2.0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def adapter(nats_server: NatsServer, sim: SimPva) -> Iterator[EpicsAdapter]:
    channels = [sim.uri("CNT:00000"), sim.uri("CNT:00001")]
    channels += [sim.uri(name) for name in EXTRAS] + [sim.uri("NO:SUCH:PV")]
    running = EpicsAdapter(
        nats_server.url, sim, channels, protocol="pva",
        extra={"demand": {"sweep_period": 0.2}}, metrics_port=free_port(),
    ).start()  # fmt: skip
    try:
        yield running
    finally:
        running.close()


def _subjects(kind: str, uris: list[str]) -> list[str]:
    return [SUBJECTS.of(kind, parse_channel(uri)) for uri in uris]  # type: ignore[arg-type]


async def _meta(nc: NatsClient, sim: SimPva, names: list[str]) -> dict[str, dict]:
    subjects = _subjects("meta", [sim.uri(n) for n in names])
    got = await fetch_all(nc, subjects)
    return {n: dict(decode_meta(got[s])) for n, s in zip(names, subjects, strict=True)}


async def _values(nc: NatsClient, sim: SimPva, names: list[str]) -> dict[str, dict]:
    subjects = _subjects("val", [sim.uri(n) for n in names])
    got = await fetch_all(nc, subjects)
    return {n: dict(decode_value(got[s])) for n, s in zip(names, subjects, strict=True)}


async def test_scalars_arrive_in_order_with_alarms_and_limits(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    tap = await Tap().start(nc, "cs.val.pva.>")
    counter = sim.uri("CNT:00000")
    await eventually(lambda: len(tap.values[counter]) >= 15, timeout=20)
    seen = tap.values[counter][:15]
    await assert_counts_in_order(adapter, seen, "pva")
    assert all(abs(time.time_ns() - v["t"]) < 60e9 for v in seen)
    sine = sim.uri("SINE")
    alarmed = await eventually(
        lambda: next((v for v in tap.values[sine] if v["sev"] == 2), None), timeout=20
    )
    assert alarmed["st"] in ("HIHI", "LOLO") and abs(alarmed["v"]) > 8
    await eventually(
        lambda: any(
            v["st"] == "NO_ALARM" and abs(v["v"]) < 5 for v in tap.values[sine]
        ),
        timeout=20,
    )
    meta = await _meta(nc, sim, ["SINE", "SP", "CNT:00000", "MSG", "WF1K"])
    assert meta["SINE"] | {"t": 0, "ep": 0} == {
        "ver": 1, "dt": "f8", "shape": [], "w": True, "native": "epics:nt/NTScalar:1.0",
        "unit": "mm", "prec": 3, "disp": [-10.0, 10.0], "warn": [-5.0, 5.0],
        "alarm": [-8.0, 8.0], "t": 0, "ep": 0,
    }  # fmt: skip
    assert meta["SP"]["ctrl"] == [0.0, 100.0] and meta["SP"]["unit"] == "A"
    assert (meta["CNT:00000"]["dt"], meta["MSG"]["dt"]) == ("f8", "str")
    assert (meta["WF1K"]["dt"], meta["WF1K"]["shape"]) == ("f8", [1000])
    # an NTScalarArray's display as a scalar's
    assert (meta["WF1K"]["unit"], meta["WF1K"]["prec"]) == ("mm", 3)
    assert meta["WF1K"]["disp"] == [-10.0, 10.0]
    # an NTEnum's alarm: STATE is MAJOR with its message while it says Fault
    state = sim.uri("STATE")
    fault = await eventually(
        lambda: next((v for v in tap.values[state] if v["v"] == 2), None), timeout=20
    )
    assert (fault["sev"], fault["st"]) == (2, "STATE")
    idle = await eventually(
        lambda: next((v for v in tap.values[state] if v["v"] == 0), None), timeout=20
    )
    assert (idle["sev"], idle["st"]) == (0, "NO_ALARM")


async def test_enum_table_image_and_unknown_structure(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    names = ["STATE", "TABLE", "IMAGE", "MOTOR", "MSG", "WF100K"]
    values = await _values(nc, sim, names)
    meta = await _meta(nc, sim, names)
    assert meta["STATE"]["labels"] == ["Idle", "Running", "Fault"]
    assert values["STATE"]["v"] in (0, 1, 2)
    table = values["TABLE"]["v"]
    assert list(table) == ["name", "position", "current", "ok"]
    assert table["name"] == ["M0", "M1", "M2"]
    assert table["position"].dtype == np.float64 and table["ok"].dtype == np.bool_
    assert meta["TABLE"]["dt"] == "table" and meta["TABLE"]["cols"][1] == {
        "name": "position", "label": "position", "dt": "f8",
    }  # fmt: skip
    image = values["IMAGE"]["v"]
    assert image.shape == (1024, 1024) and image.dtype == np.uint16
    assert image.max() > 30000 and image.min() < 10000  # the pattern, not zeros
    assert (meta["IMAGE"]["dt"], meta["IMAGE"]["shape"]) == ("u2", [1024, 1024])
    assert meta["IMAGE"]["img"] == {"color": "mono"}
    motor = values["MOTOR"]
    assert motor["v"] == {
        "position": 1.5, "moving": False, "name": "sim motor",
        "limits": {"low": -10.0, "high": 10.0},
    }  # fmt: skip
    assert (motor["sev"], motor["c"]) == (0, True)
    assert meta["MOTOR"]["dt"] == "struct"
    assert meta["MOTOR"]["native"] == "synoptic:sim/Motor:1.0"
    assert values["MSG"]["v"] == "hello from the simulated PVA server"
    assert values["WF100K"]["v"].shape == (100_000,)


async def test_an_unknown_normative_type_is_a_generic_structure_with_its_alarm(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """NTHistogram has no mapping of its own: a map of its fields (typed arrays
    kept), its id as ``native``, alarm and timeStamp read as for any value."""
    value = (await _values(nc, sim, ["HISTOGRAM"]))["HISTOGRAM"]
    meta = (await _meta(nc, sim, ["HISTOGRAM"]))["HISTOGRAM"]
    v = value["v"]
    assert sorted(v) == ["descriptor", "ranges", "value"]  # alarm, timeStamp apart
    np.testing.assert_array_equal(v["ranges"], [0.0, 1.0, 2.0, 4.0])
    assert v["value"].dtype == np.int32 and list(v["value"]) == [5, 12, 3]
    assert v["descriptor"] == "beam loss per bin"
    assert (value["sev"], value["st"], value["c"]) == (1, "few counts", True)
    assert abs(time.time_ns() - value["t"]) < 3600e9  # the server's stamp
    assert (meta["dt"], meta["native"]) == ("struct", "epics:nt/NTHistogram:1.0")
    assert adapter.process is not None and adapter.process.alive()


async def test_every_published_value_and_meta_matches_the_json_schemas(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """The contract from the real server: each normative type's value and meta
    (tables, images, structures, unknown types, statuses) as the schemas say."""
    names = [n for n in EXTRAS if n not in ("SWAP",)] + ["CNT:00000", "NO:SUCH:PV"]
    values = await _values(nc, sim, names)
    metas = await _meta(nc, sim, [n for n in names if n != "NO:SUCH:PV"])
    for name in names:
        validator("value").validate(to_json_view(values[name]))
    for meta in metas.values():
        validator("meta").validate(to_json_view(meta))
    assert {m["dt"] for m in metas.values()} >= {"f8", "str", "enum", "table",
                                                  "struct", "u2", "u1"}  # fmt: skip


async def test_compressed_images_are_published_decompressed(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """areaDetector's codecs (ADR 0021): lz4, bslz4 and blosc give back the exact
    pixels, jpeg 8-bit RGB within its loss; an unknown codec is the channel's
    status (sev 3, nothing half), the others unaffected."""
    names = [f"IMAGE:{codec.upper()}" for codec in CODEC_IMAGES]
    values = await _values(nc, sim, names)
    meta = await _meta(nc, sim, names)
    for codec in ("lz4", "bslz4", "blosc"):
        image = values[f"IMAGE:{codec.upper()}"]["v"]
        assert (image.shape, image.dtype) == ((96, 128), np.uint16), codec
        # the pattern at (0, 0) is tick * 101 mod 4096: find the tick, compare all
        tick = int(image[0, 0]) * pow(101, -1, 4096) % 4096
        np.testing.assert_array_equal(image, codec_image(codec, tick))
        assert (
            meta[f"IMAGE:{codec.upper()}"]["dt"],
            meta[f"IMAGE:{codec.upper()}"]["shape"],
        ) == ("u2", [96, 128])
    jpeg = values["IMAGE:JPEG"]["v"]
    assert (jpeg.shape, jpeg.dtype) == ((96, 128, 3), np.uint8)
    assert np.abs(jpeg[:, :, 2].astype(int) - 128).max() <= 8
    assert meta["IMAGE:JPEG"]["img"] == {"color": "rgb"}
    odd = values["IMAGE:ZFP"]
    assert (odd["v"], odd["sev"], odd["c"]) == (None, 3, True)
    assert "codec 'zfp': not one the adapter decompresses" in odd["st"]
    # what it is, all the same: the type and shape its structure declares
    zfp = meta["IMAGE:ZFP"]
    assert (zfp["dt"], zfp["shape"], zfp["img"]) == ("u2", [96, 128], {"color": "mono"})


async def test_typed_arrays_of_integers_and_strings(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """NTScalarArray of int16 is a typed array of int16 (no per-element list);
    of strings, a list; puts are range-checked against the element type."""
    values = await _values(nc, sim, ["WF:I16", "NAMES"])
    meta = await _meta(nc, sim, ["WF:I16", "NAMES"])
    ints = values["WF:I16"]["v"]
    assert (ints.dtype, ints.tolist()) == (np.int16, list(range(-4, 4)))
    assert (meta["WF:I16"]["dt"], meta["WF:I16"]["shape"]) == ("i2", [8])
    assert meta["WF:I16"]["unit"] == "counts"
    assert values["NAMES"]["v"] == ["alpha", "beta", "gamma"]
    assert (meta["NAMES"]["dt"], meta["NAMES"]["shape"]) == ("str", [3])
    tap = await Tap().start(nc, "cs.val.pva.>")
    assert (await bus_put(nc, sim.uri("WF:I16"), [7, -7, 32767]))["ok"]
    written = await eventually(
        lambda: (v := tap.latest(sim.uri("WF:I16"))) and v["v"].tolist() == [7, -7, 32767]
        and v
    )  # fmt: skip
    assert written["v"].dtype == np.int16
    reply = await bus_put(nc, sim.uri("WF:I16"), [1, 40000])  # never wrapped
    assert (reply["ok"], reply["err"]) == (False, "type")
    assert "1..40000 are out of range for i2" in reply["msg"]
    assert tap.latest(sim.uri("WF:I16"))["v"].tolist() == [7, -7, 32767]


async def test_puts_through_nats_and_their_errors(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    tap = await Tap().start(nc, "cs.val.pva.>")
    assert await bus_put(nc, sim.uri("SP"), 33.5) == {"ver": 1, "ok": True}
    await eventually(lambda: tap.latest(sim.uri("SP")) and
                     tap.latest(sim.uri("SP"))["v"] == 33.5)  # fmt: skip
    assert (await bus_put(nc, sim.uri("MODE"), "Standby"))["ok"]
    await eventually(lambda: tap.latest(sim.uri("MODE")) and
                     tap.latest(sim.uri("MODE"))["v"] == 2)  # fmt: skip
    assert (await bus_put(nc, sim.uri("MSG:SP"), "written via NATS"))["ok"]
    await eventually(lambda: tap.latest(sim.uri("MSG:SP")) and
                     tap.latest(sim.uri("MSG:SP"))["v"] == "written via NATS")  # fmt: skip
    assert (await bus_put(nc, sim.uri("WF100K"), [1.0, 2.0, 3.0]))["ok"]
    reply = await bus_put(nc, sim.uri("SP"), "abc")
    assert (reply["ok"], reply["err"]) == (False, "type")
    assert "not a number" in reply["msg"]
    reply = await bus_put(nc, sim.uri("SP:RO"), 2.0)
    assert (reply["ok"], reply["err"]) == (False, "access")
    assert "read-only" in reply["msg"]
    reply = await bus_put(nc, sim.uri("MODE"), "Sideways")
    assert reply["err"] == "type" and "not one of the choices" in reply["msg"]
    reply = await bus_put(nc, sim.uri("TABLE"), 1)
    assert reply["err"] == "type" and "NTTable" in reply["msg"]
    reply = await bus_put(nc, sim.uri("NO:SUCH:PV"), 1.0, timeout=1.0)
    assert (reply["ok"], reply["err"]) == (False, "disconnected")


async def test_an_unknown_pv_is_reported_never_connected(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    value = (await _values(nc, sim, ["NO:SUCH:PV"]))["NO:SUCH:PV"]
    assert (value["c"], value["sev"], value["v"]) == (False, 3, None)
    assert value["st"].startswith("never connected")


async def test_a_structure_that_changes_type_across_a_reconnect(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """SWAP is reopened as a string, an array, a table and a double again: each
    new structure is published with its own type and metadata, never decoded
    with the old one; the other channels do not notice."""
    tap = await Tap().start(nc, "cs.val.pva.>")
    swap = sim.uri("SWAP")
    meta_sub = await nc.subscribe(SUBJECTS.meta(parse_channel(swap)))

    async def reopened_as(kind: int, dt: str) -> tuple[dict, dict]:
        count = len(tap.values[swap])
        assert (await bus_put(nc, sim.uri("SWAP:CTL"), kind))["ok"]
        async with asyncio.timeout(20):
            while (meta := decode_meta((await meta_sub.next_msg(20)).data))["dt"] != dt:
                pass
        value = await eventually(
            lambda: next((v for v in tap.values[swap][count:] if v["c"]
                          and v["v"] is not None), None), timeout=20,
        )  # fmt: skip
        assert any(not v["c"] for v in tap.values[swap][count:])  # the reconnect
        return value, meta

    text, meta = await reopened_as(1, "str")
    assert (text["v"], text["sev"]) == ("text", 0)
    assert meta["native"] == "epics:nt/NTScalar:1.0"
    array, meta = await reopened_as(2, "f8")
    assert list(array["v"]) == [1.0, 2.0, 3.0] and meta["shape"] == [3]
    assert meta["native"] == "epics:nt/NTScalarArray:1.0"
    table, meta = await reopened_as(3, "table")
    assert table["v"]["name"] == ["a"] and list(table["v"]["x"]) == [1.0]
    assert [c["name"] for c in meta["cols"]] == ["name", "x"]
    double, meta = await reopened_as(0, "f8")
    assert double["v"] == 0.0 and meta["shape"] == []
    await meta_sub.unsubscribe()
    reply = await bus_put(nc, sim.uri("SWAP:CTL"), 9)  # no such type: refused
    assert (reply["ok"], reply["err"]) == (False, "failed")
    # the counters did not notice, and nothing was published that failed
    counter = tap.values[sim.uri("CNT:00000")]
    assert all(v["c"] for v in counter)
    assert not [v for v in tap.values[swap] if v["c"] and v["sev"] == 3]
    assert adapter.process is not None and adapter.process.alive()


async def test_heartbeat_and_demand(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    sub = await nc.subscribe(SUBJECTS.hb(adapter.id))
    beat = decode_heartbeat((await sub.next_msg(timeout=5)).data)
    second = decode_heartbeat((await sub.next_msg(timeout=5)).data)
    await sub.unsubscribe()
    assert (beat["id"], beat["proto"], beat["period"]) == (adapter.id, "pva", 1.0)
    assert beat["n"] == 2 + len(EXTRAS) + 1
    assert beat["conn"] >= 2 + len(EXTRAS) - 1
    assert 0.5e9 <= second["t"] - beat["t"] <= 3e9 and second["ep"] == beat["ep"]
    tap = await Tap().start(nc, "cs.val.pva.>")
    uri = sim.uri("CNT:00002")  # not configured
    want = {"ver": SCHEMA_VERSION, "ch": [uri], "lease": 1.5, "by": "test-gateway"}
    await nc.publish(SUBJECTS.want("pva"), encode(want))
    await eventually(lambda: len(tap.values[uri]) >= 3)
    for _ in range(3):  # renewals keep it monitored past the first lease
        await asyncio.sleep(0.7)
        await nc.publish(SUBJECTS.want("pva"), encode(want))
    assert tap.latest(uri)["c"] and time.time_ns() - tap.latest(uri)["t"] < 1e9
    released = await eventually(
        lambda: tap.latest(uri) if not tap.latest(uri)["c"] else None, timeout=10
    )
    assert released["st"] == "released: no demand" and released["sev"] == 3
    count = len(tap.values[uri])
    await asyncio.sleep(1.0)
    assert len(tap.values[uri]) == count  # no updates after the release
    # configured channels are never released
    assert tap.latest(sim.uri("CNT:00000"))["c"]


async def test_arrays_over_the_limit_get_a_status_and_nothing_half(
    nats_server: NatsServer, nc: NatsClient, sim: SimPva
) -> None:
    names = ["WF1K", "IMAGE", "IMAGE:LZ4", "TABLE", "CNT:00000"]
    limited = EpicsAdapter(
        nats_server.url, sim, [sim.uri(n) for n in names], protocol="pva",
        extra={"pva": {"connect_timeout": 2.0, "max_array_bytes": 4096},
               "nats": {"url": nats_server.url, "prefix": "lim"}},
    )  # fmt: skip
    try:
        limited.start()
        subjects = [Subjects("lim").val(parse_channel(sim.uri(n))) for n in names]
        got = await fetch_all(nc, subjects, timeout=20, prefix="lim")
        wf1k, image, lz4, table, counter = (decode_value(got[s]) for s in subjects)
        assert (wf1k["v"], wf1k["sev"], wf1k["c"]) == (None, 3, True)
        assert wf1k["st"] == "array of 8000 bytes exceeds the limit of 4096 bytes"
        assert image["v"] is None and "exceeds the limit of 4096" in image["st"]
        # a compressed image is measured uncompressed, before it is decompressed
        assert (lz4["v"], lz4["sev"]) == (None, 3)
        assert lz4["st"] == (
            "image of 24576 bytes (uncompressed) exceeds the limit of 4096 bytes"
        )
        assert list(table["v"]) == ["name", "position", "current", "ok"]
        assert counter["c"] and counter["sev"] == 0
        metas = [Subjects("lim").meta(parse_channel(sim.uri(n))) for n in names[:3]]
        got = await fetch_all(nc, metas, timeout=20, prefix="lim")
        shapes = [(m["dt"], m["shape"]) for m in (decode_meta(got[s]) for s in metas)]
        assert shapes == [("f8", [1000]), ("u2", [1024, 1024]), ("u2", [96, 128])]
    finally:
        limited.close()


async def test_writes_through_a_gateway_are_granted_and_audited_as_for_ca(
    nats_server: NatsServer, nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    import jwt

    from synoptic_gateway.client import GatewayClient
    from synoptic_gateway.testing import start_gateway

    secret = "pva-test-secret-of-at-least-32-bytes!"
    audits: list[dict] = []

    async def on_audit(msg: Any) -> None:
        audits.append(decode_audit(msg.data))

    await nc.subscribe("cs.audit.pva", cb=on_audit)
    await nc.flush()
    sp, ro, mode = sim.uri("SP"), sim.uri("SP:RO"), sim.uri("MODE")
    grant = jwt.encode(
        {"sub": "alice", "exp": int(time.time()) + 600, "read": ["*"],
         "write": [sp, ro]},
        secret,
    )  # fmt: skip
    gateway = start_gateway(nats_server.url, "--jwt-secret", secret)
    try:
        async with GatewayClient(gateway.ws_url, token=grant) as client:
            assert (await client.put(sp, 12.0))["ok"] is True
            refused = await client.put(ro, 1.0)  # granted here, refused by the server
            assert (refused["ok"], refused["err"]) == (False, "access")
            denied = await client.put(mode, "On")  # no grant
            assert (denied["ok"], denied["err"]) == (False, "denied")
        await eventually(lambda: len(audits) >= 3)
        gateway_id = gateway.gateway_id()
    finally:
        gateway.stop()
    by_channel = {a["ch"]: a for a in audits}
    assert by_channel[sp]["ok"] is True and by_channel[sp]["v"] == 12.0
    assert by_channel[ro]["err"] == "access" and by_channel[mode]["err"] == "denied"
    assert "read-only" in by_channel[ro]["msg"]  # the server's own reason
    assert {a["who"] for a in audits} == {"alice"}
    assert all(a["by"] == gateway_id for a in audits)
    assert all(abs(time.time_ns() - a["t"]) < 60e9 for a in audits)


async def test_prometheus_metrics(
    nc: NatsClient, adapter: EpicsAdapter, sim: SimPva
) -> None:
    """The CA adapter's metrics, labelled ``proto="pva"``."""
    await bus_put(nc, sim.uri("SP:RO"), 1.0)  # one refused put, counted by result
    samples = await adapter.metrics()
    labels = f'adapter="{adapter.id}",proto="pva"'
    assert samples[f"synoptic_adapter_published_total{{{labels}}}"] > 10
    assert samples[f"synoptic_adapter_monitored{{{labels}}}"] >= 2 + len(EXTRAS)
    assert samples[f'synoptic_adapter_puts_total{{{labels},result="access"}}'] >= 1
    assert f"synoptic_adapter_source_merged_total{{{labels}}}" in samples
