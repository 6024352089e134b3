"""The EPICS adapter end to end: a real soft IOC, a real nats-server, the adapter as
a child process, and changes made by a separate CA client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import numpy as np
import pytest

from synoptic_adapters.testing import (
    EpicsAdapter,
    SimIoc,
    Tap,
    assert_counts_in_order,
    ca_batch,
    ca_client,
    eventually,
)
from synoptic_adapters.testing import bus_put as put
from synoptic_adapters.testing import fetch_all as _fetch_all
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_heartbeat,
    decode_meta,
    decode_put_reply,
    decode_value,
    encode,
    parse_channel,
)

pytestmark = pytest.mark.system
SUBJECTS = Subjects()
EXTRAS = [
    "SINE", "WF1K", "WF100K", "STATE", "MODE", "MSG", "MSG:SP", "SP", "SP:RO",
    "UNSET", "UNSET:MSG",
]  # fmt: skip


@pytest.fixture(scope="module")
def ioc() -> Iterator[SimIoc]:
    with SimIoc(records=5).start() as sim:
        yield sim


@pytest.fixture(scope="module")
def adapter(nats_server: NatsServer, ioc: SimIoc) -> Iterator[EpicsAdapter]:
    channels = [ioc.uri("CNT:00000"), ioc.uri("CNT:00001")] + [
        ioc.uri(n) for n in EXTRAS
    ]
    channels.append(ioc.uri("NO:SUCH:PV"))
    with EpicsAdapter(
        nats_server.url,
        ioc,
        channels,
        extra={"demand": {"sweep_period": 0.2}},
        metrics_port=free_port(),
    ).start() as running:
        yield running


async def test_a_caput_from_another_client_arrives_decoded(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    tap = await Tap().start(nc)
    uri = ioc.uri("SP")
    before = time.time_ns()
    await asyncio.to_thread(ca_client, ioc, "put", ioc.pv("SP"), 12.5)
    value = await eventually(
        lambda: next((v for v in tap.values[uri] if v["v"] == 12.5), None)
    )
    assert (value["sev"], value["st"], value["c"]) == (0, "NO_ALARM", True)
    assert before - 1_000_000_000 <= value["t"] <= time.time_ns()
    # counters: every value published arrives, every count in order
    counter = ioc.uri("CNT:00000")
    await eventually(lambda: len(tap.values[counter]) >= 15, timeout=20)
    seen = tap.values[counter][:15]
    await assert_counts_in_order(adapter, seen, "ca")
    assert len({v["ep"] for v in seen}) == 1


async def test_alarm_transitions(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    tap = await Tap().start(nc)
    uri = ioc.uri("SP")
    expected = [
        (85.0, 1, "HIGH"), (95.0, 2, "HIHI"), (50.0, 0, "NO_ALARM"),
        (4.0, 1, "LOW"), (1.0, 2, "LOLO"), (60.0, 0, "NO_ALARM"),
    ]  # fmt: skip
    ops = [("put", ioc.pv("SP"), value) for value, _, _ in expected]
    await asyncio.to_thread(ca_batch, ioc, ops)
    await eventually(lambda: tap.latest(uri) and tap.latest(uri)["v"] == 60.0)
    seen = [(v["v"], v["sev"], v["st"]) for v in tap.values[uri]]
    assert [s for s in seen if s in expected] == expected


async def test_metadata_on_connect(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    names = ["SP", "SP:RO", "MODE", "MSG", "WF100K", "CNT:00000"]
    subjects = [SUBJECTS.meta(parse_channel(ioc.uri(n))) for n in names]
    snap = await _fetch_all(nc, subjects)
    meta = {n: decode_meta(snap[s]) for n, s in zip(names, subjects, strict=True)}
    sp = meta["SP"]
    assert (sp["dt"], sp["shape"], sp["w"], sp["unit"], sp["prec"]) == (
        "f8",
        [],
        True,
        "A",
        3,
    )
    assert (sp["ctrl"], sp["warn"], sp["alarm"], sp["disp"]) == (
        [0.0, 100.0], [5.0, 80.0], [2.0, 90.0], [0.0, 100.0],
    )  # fmt: skip
    assert sp["native"] == "DBR_DOUBLE"
    assert meta["SP:RO"]["w"] is False
    assert (
        meta["MODE"]["labels"] == ["Off", "On", "Standby"]
        and meta["MODE"]["dt"] == "enum"
    )
    assert meta["MSG"]["dt"] == "str"
    assert meta["WF100K"]["shape"] == [100_000] and meta["WF100K"]["unit"] == "counts"
    assert meta["CNT:00000"]["dt"] == "f8"


async def test_a_record_never_processed_is_published_with_its_arrival_time(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    """A record not processed since the IOC started has time stamp 0 (the EPICS
    epoch, 1990): its value is published with the time it arrived, never as a
    value from 1990 (which the history would keep and order as one)."""
    names = ["UNSET", "UNSET:MSG"]  # a number (read field by field) and a string
    subjects = [SUBJECTS.val(parse_channel(ioc.uri(n))) for n in names]
    snap = await _fetch_all(nc, subjects)
    for name, subject in zip(names, subjects, strict=True):
        value = decode_value(snap[subject])
        assert value["c"] and value["sev"] == 3 and value["st"] == "UDF", value
        # published since the module's adapter started (minutes ago at most)
        assert time.time_ns() - 600e9 < value["t"] <= time.time_ns(), (name, value)


async def test_waveform_of_100k_points(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    tap = await Tap().start(nc)
    uri = ioc.uri("WF100K")
    await asyncio.to_thread(
        ca_client, ioc, "put", ioc.pv("WF100K"), {"arange": 100_000}
    )
    value = await eventually(
        lambda: next((v for v in tap.values[uri] if np.size(v["v"]) == 100_000), None)
    )
    array = value["v"]
    assert isinstance(array, np.ndarray) and array.dtype == np.float64
    assert np.array_equal(array, np.arange(100_000, dtype=float))


async def test_puts_through_nats(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    assert await put(nc, ioc.uri("SP"), 33.5) == {"ver": 1, "ok": True}
    assert (await put(nc, ioc.uri("MODE"), "Standby"))["ok"]
    assert (await put(nc, ioc.uri("MSG:SP"), "written via NATS"))["ok"]
    ops = [("get", ioc.pv(name), None) for name in ("SP", "MODE", "MSG:SP")]
    got = await asyncio.to_thread(ca_batch, ioc, ops)
    assert got == [33.5, 2, "written via NATS"]


async def test_bad_puts_get_clear_errors(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    reply = await put(nc, ioc.uri("SP"), "abc")
    assert (reply["ok"], reply["err"]) == (False, "type") and "not a number" in reply[
        "msg"
    ]
    reply = await put(nc, ioc.uri("SP:RO"), 2.0)
    assert (reply["ok"], reply["err"]) == (False, "access")
    reply = await put(nc, ioc.uri("MODE"), "Sideways")
    assert (reply["err"], "not one of the labels" in reply["msg"]) == ("type", True)
    reply = await put(nc, ioc.uri("NO:SUCH:PV"), 1.0, timeout=1.0)
    assert (reply["ok"], reply["err"]) == (False, "disconnected")
    raw = await nc.request(
        SUBJECTS.put(parse_channel(ioc.uri("SP"))), b"\xc1garbage", timeout=5
    )
    reply = decode_put_reply(raw.data)
    assert (reply["ok"], reply["err"]) == (False, "bad_request")


async def test_an_unknown_pv_is_reported_never_connected(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    subject = SUBJECTS.val(parse_channel(ioc.uri("NO:SUCH:PV")))
    value = decode_value((await _fetch_all(nc, [subject]))[subject])
    assert (value["c"], value["sev"], value["v"]) == (False, 3, None)
    assert value["st"].startswith("never connected")
    assert adapter.process is not None and adapter.process.alive()


async def test_heartbeat(nc: NatsClient, adapter: EpicsAdapter) -> None:
    sub = await nc.subscribe(SUBJECTS.hb(adapter.id))
    first = decode_heartbeat((await sub.next_msg(timeout=5)).data)
    second = decode_heartbeat((await sub.next_msg(timeout=5)).data)
    assert (first["id"], first["proto"], first["period"]) == (adapter.id, "ca", 1.0)
    assert first["n"] >= 12 and 11 <= first["conn"] <= first["n"]
    assert 0.5e9 <= second["t"] - first["t"] <= 3e9 and second["ep"] == first["ep"]
    await sub.unsubscribe()


async def test_demand_monitors_on_want_and_releases_after_the_lease(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    tap = await Tap().start(nc)
    uri = ioc.uri("CNT:00003")  # not in the configuration
    want = {"ver": SCHEMA_VERSION, "ch": [uri], "lease": 1.5, "by": "test-gateway"}
    await nc.publish(SUBJECTS.want("ca"), encode(want))
    await eventually(lambda: len(tap.values[uri]) >= 3)
    for _ in range(3):  # renewals keep it monitored past the first lease
        await asyncio.sleep(0.7)
        await nc.publish(SUBJECTS.want("ca"), encode(want))
    assert tap.latest(uri)["c"] and time.time_ns() - tap.latest(uri)["t"] < 1e9
    released = await eventually(
        lambda: tap.latest(uri) if not tap.latest(uri)["c"] else None, timeout=10
    )
    assert released["st"] == "released: no demand" and released["sev"] == 3
    count = len(tap.values[uri])
    await asyncio.sleep(1.0)
    assert len(tap.values[uri]) == count  # no updates after the release
    # configured channels are never released
    assert tap.latest(ioc.uri("CNT:00000"))["c"]


async def test_prometheus_metrics(
    nc: NatsClient, adapter: EpicsAdapter, ioc: SimIoc
) -> None:
    await put(nc, ioc.uri("SP:RO"), 1.0)  # one refused put, counted by result
    samples = await adapter.metrics()
    labels = f'adapter="{adapter.id}",proto="ca"'
    assert samples[f"synoptic_adapter_published_total{{{labels}}}"] > 10
    assert samples[f"synoptic_adapter_dropped_total{{{labels}}}"] == 0
    assert samples[f"synoptic_adapter_monitored{{{labels}}}"] >= 12
    assert samples[f'synoptic_adapter_puts_total{{{labels},result="access"}}'] >= 1
    assert f"synoptic_adapter_source_merged_total{{{labels}}}" in samples
