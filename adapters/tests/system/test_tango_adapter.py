"""The Tango adapter end to end: a real device server, a real nats-server and
``synoptic adapter tango`` as a child process; a NATS client watches and writes."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tango_support import SimServer, start_sim

from synoptic_adapters.testing import Tap, eventually, synoptic_command
from synoptic_adapters.testing import bus_command as command
from synoptic_adapters.testing import bus_put as put
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_port
from synoptic_bus.store import fetch_last
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_meta,
    decode_value,
    encode,
)

pytestmark = pytest.mark.system
SUBJECTS = Subjects()
CONFIGURED = ["double", "spectrum", "image", "mode", "devstate", "string", "polled"]


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    server = start_sim(rate=10.0)
    try:
        yield server
    finally:
        server.proc.stop()


@pytest.fixture(scope="module")
def spare_port() -> int:
    """Port of a second device server that tests start, kill and restart."""
    return free_port()


@pytest.fixture(scope="module")
def metrics_port() -> int:
    """Port of the adapter's /metrics."""
    return free_port()


@pytest.fixture(scope="module")
def adapter(
    nats_server: NatsServer, sim: SimServer, spare_port: int, metrics_port: int
) -> Iterator[str]:
    """The adapter process; yields its id."""
    adapter_id = f"test-tango-{uuid.uuid4().hex[:6]}"
    config = {
        "metrics": {"port": metrics_port, "addr": "127.0.0.1"},
        "id": adapter_id,
        "nats": {"url": nats_server.url},
        "channels": [sim.channel(name).uri for name in CONFIGURED],
        "demand": {"sweep_period": 0.2},
        "tango": {
            "no_database_hosts": [sim.hostport, f"127.0.0.1:{spare_port}"],
            "poll_period": 0.3,
        },
    }
    with tempfile.TemporaryDirectory(prefix="synoptic-tango-") as folder:
        path = Path(folder) / "adapter.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]
        process = Process(f"adapter-{adapter_id}", argv)
        try:
            process.wait_for(r"adapter \S+ ready", 60)
            yield adapter_id
        finally:
            process.stop()


async def test_values_and_metadata_on_the_bus(
    nc: NatsClient, adapter: str, sim: SimServer
) -> None:
    channels = [sim.channel(name) for name in CONFIGURED]
    subjects = [SUBJECTS.val(c) for c in channels] + [
        SUBJECTS.meta(c) for c in channels
    ]

    async def snapshot() -> dict[str, bytes] | None:
        snap = await fetch_last(nc, subjects)
        return snap.messages if len(snap.messages) == len(subjects) else None

    messages: dict[str, bytes] | None = None
    for _ in range(400):  # up to ~40 s
        if messages := await snapshot():
            break
        await asyncio.sleep(0.1)
    assert messages is not None, "not every channel in the last-value store"
    value = {
        c.name.rsplit("/", 1)[1]: decode_value(messages[SUBJECTS.val(c)])
        for c in channels
    }
    meta = {
        c.name.rsplit("/", 1)[1]: decode_meta(messages[SUBJECTS.meta(c)])
        for c in channels
    }
    assert all(v["c"] and v["v"] is not None for v in value.values())
    assert value["double"]["sev"] in (0, 1)  # its warning limits are ±90
    assert all(v["sev"] == 0 for k, v in value.items() if k != "double")
    assert isinstance(value["double"]["v"], float) and meta["double"]["unit"] == "mm"
    spectrum = value["spectrum"]["v"]
    assert isinstance(spectrum, np.ndarray) and spectrum.dtype == np.float64
    assert spectrum.shape == (128,)
    assert value["image"]["v"].dtype == np.uint16 and value["image"]["v"].shape == (
        24,
        32,
    )
    assert meta["image"]["shape"] == [24, 32]
    assert meta["mode"]["labels"] == ["OFF", "STANDBY", "ON", "FAULT"]
    assert meta["devstate"]["labels"][value["devstate"]["v"]] in {
        "ON", "MOVING", "ALARM", "STANDBY",
    }  # fmt: skip
    assert value["string"]["v"].startswith("tick ")
    now = time.time_ns()
    assert all(now - 60 * 10**9 < v["t"] <= now + 10**9 for v in value.values())

    tap = await Tap().start(nc)
    uri = sim.channel("double").uri
    await eventually(lambda: len(tap.values[uri]) >= 5, timeout=20)
    seqs = [v["seq"] for v in tap.values[uri][:5]]
    assert seqs == list(range(seqs[0], seqs[0] + 5))


async def test_puts_over_nats(nc: NatsClient, adapter: str, sim: SimServer) -> None:
    tap = await Tap().start(nc)
    double = sim.channel("double").uri
    assert (await put(nc, double, -42.25))["ok"] is True
    await eventually(lambda: any(v["v"] == -42.25 for v in tap.values[double]))
    refused = await put(nc, double, 1e6)
    assert refused["ok"] is False and refused["err"] == "failed"
    assert refused["msg"].startswith("API_WAttrOutsideLimit")
    read_only = await put(nc, sim.channel("devstate").uri, 1)
    assert read_only["err"] == "access"
    assert (await put(nc, sim.channel("mode").uri, "FAULT"))["ok"] is True
    mode = sim.channel("mode").uri
    await eventually(lambda: any(v["v"] == 3 for v in tap.values[mode]))


async def test_commands_over_nats(
    nc: NatsClient, adapter: str, sim: SimServer, spare_port: int
) -> None:
    tap = await Tap().start(nc)
    double = sim.channel("double").uri
    device = double.rsplit("/", 1)[0]
    level = await command(nc, f"{device}/SetLevel", 12.5)
    assert level == {"ver": SCHEMA_VERSION, "ok": True, "v": 12.5}
    await eventually(lambda: any(v["v"] == 12.5 for v in tap.values[double]))
    assert (await command(nc, f"{device}/SetLevel", "7.25"))["v"] == 7.25
    assert await command(nc, f"{device}/Reset") == {"ver": SCHEMA_VERSION, "ok": True}
    reversed_ = (await command(nc, f"{device}/Reverse", [1, 2, 3]))["v"]
    assert reversed_.dtype == np.int32 and reversed_.tolist() == [3, 2, 1]

    refused = await command(nc, f"{device}/SetLevel", 1e6)
    assert refused["err"] == "failed" and refused["msg"].startswith("SIM_OutOfRange")
    wrong = await command(nc, f"{device}/SetLevel", "high")
    assert wrong["err"] == "type" and "'high' is not a number" in wrong["msg"]
    missing = await command(nc, f"{device}/SetLevel")
    assert missing["err"] == "type" and "needs a DevDouble" in missing["msg"]
    extra = await command(nc, f"{device}/Reset", 1)
    assert extra["err"] == "type" and "takes no argument" in extra["msg"]
    unknown = await command(nc, f"{device}/NoSuchCommand")
    assert unknown["err"] == "unknown" and "API_CommandNotFound" in unknown["msg"]
    down = await command(nc, f"tango://127.0.0.1:{spare_port}/sim/test/1/Reset")
    assert down["ok"] is False and down["err"] == "disconnected", down

    # a command slower than its timeout: answered in time, reads go on meanwhile
    before = len(tap.values[double])
    started = time.monotonic()
    slow = await command(nc, f"{device}/Sleep", 4.0, timeout=1.0)
    assert slow["err"] == "timeout" and time.monotonic() - started < 3.0
    await eventually(lambda: len(tap.values[double]) >= before + 5, timeout=5)
    assert (await command(nc, f"{device}/Sleep", 0.1))["v"] == "slept 0.1 s"


async def test_demand_then_device_server_killed_and_restarted(
    nc: NatsClient, adapter: str, spare_port: int
) -> None:
    server = start_sim(rate=10.0, port=spare_port)
    try:
        tap = await Tap().start(nc)
        uri = f"tango://127.0.0.1:{spare_port}/sim/test/1/long"
        want = {"ver": SCHEMA_VERSION, "ch": [uri], "lease": 60.0, "by": "test"}
        await nc.publish(SUBJECTS.want("tango"), encode(want))
        await eventually(lambda: len(tap.values[uri]) >= 3, timeout=20)

        server.proc.kill()
        killed_at = time.monotonic()
        down = await eventually(
            lambda: next((v for v in tap.values[uri] if not v["c"]), None), timeout=10
        )
        assert time.monotonic() - killed_at < 5.0
        assert down["sev"] == 3 and down["v"] is None

        server.restart()
        count = len(tap.values[uri])
        await eventually(
            lambda: len(tap.values[uri]) >= count + 5 and tap.values[uri][-1]["c"],
            timeout=30,
        )
    finally:
        server.proc.stop()


async def test_per_device_metrics(
    nc: NatsClient, adapter: str, sim: SimServer, metrics_port: int
) -> None:
    """Time busy with our reads, attributes in backoff and events received vs
    expected, per device, on the adapter's /metrics."""
    device = f'device="{sim.hostport}/sim/test/1"'

    def figures() -> dict[str, float]:
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        found = {}
        for line in text.splitlines():
            if line.startswith("synoptic_adapter_device_") and device in line:
                name = line.split("{", 1)[0].removeprefix("synoptic_adapter_device_")
                found[name] = float(line.rsplit(" ", 1)[1])
        return found

    async def received() -> float:
        return (await asyncio.to_thread(figures)).get("events_received_total", 0)

    counts = [await received()]
    for _ in range(200):  # events keep coming (10 Hz attributes)
        if counts[0] > 0 and counts[-1] > counts[0]:
            break
        await asyncio.sleep(0.1)
        counts.append(await received())
        counts[0] = counts[0] or counts[-1]
    found = await asyncio.to_thread(figures)
    assert found["events_received_total"] > counts[0] > 0, counts[-5:]
    # every configured event attribute is polled by the server at 10 Hz
    assert found["events_expected_per_s"] >= 10 * (len(CONFIGURED) - 1)
    assert found["in_backoff"] == 0 and found["busy_pings_total"] == 0
    assert 0 <= found["busy_fraction"] < 0.5 and found["connects_total"] >= 1
