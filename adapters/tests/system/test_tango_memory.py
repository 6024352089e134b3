"""What the Tango adapter learns about reading each attribute outlives it: kept
in the ``tango_reads`` bucket, so that the next adapter process reads the known
slow attributes last from its first second. On a device never seen, a slow
attribute is read once in the first pass and not again before every other
attribute has a value.

The device: ``synoptic sim tango-standard --bad-first`` (Tango's default
serialisation model; ``slow``, ``timeout`` and ``broken`` declared, and
configured, before the healthy attributes), with short timings."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tango
from tango_support import StandardServer, start_standard

from synoptic_adapters.sim.tango_standard import BAD
from synoptic_adapters.tango.memory import BUCKET, decode, device_key
from synoptic_adapters.testing import synoptic_command
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]

EVENTS, POLLED = 20, 6
#: ``slow`` reads in 1.5 s (slow: over the 1 s of ``slow_after``); ``timeout``
#: holds the device 4 s, past the 1.5 s client timeout.
SLOW_S, TIMEOUT_S, READ_TIMEOUT = 1.5, 4.0, 1.5


@pytest.fixture
def device() -> Iterator[StandardServer]:
    server = start_standard(
        "--events", str(EVENTS), "--polled", str(POLLED), "--bad-first",
        "--slow-s", str(SLOW_S), "--timeout-s", str(TIMEOUT_S),
    )  # fmt: skip
    try:
        yield server
    finally:
        server.proc.stop()


def hardware_reads(server: StandardServer, name: str) -> int:
    """How many times the device's code read ``name`` so far."""
    return int(tango.DeviceProxy(server.url).command_inout("HardwareReads", name))


class Valued:
    """First valid value of each attribute on the bus, since :meth:`start`."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}
        self.changed = asyncio.Event()

    async def start(self, nc: NatsClient) -> Valued:
        from synoptic_schemas import decode_value

        async def on_msg(msg) -> None:
            value = decode_value(msg.data)
            if value["c"] and value["v"] is not None and value["sev"] < 3:
                self.first.setdefault(msg.subject.rsplit(".", 1)[1], time.monotonic())
                self.changed.set()

        self.sub = await nc.subscribe("cs.val.tango.>", cb=on_msg)
        await nc.flush()
        return self

    async def wait(self, names: list[str], timeout: float) -> float:
        """Until every one of ``names`` is valued; when the last one was."""
        async with asyncio.timeout(timeout):
            while missing := [n for n in names if n not in self.first]:
                self.changed.clear()
                await self.changed.wait()
                del missing
        return max(self.first[n] for n in names)


async def test_the_next_start_reads_the_known_slow_attributes_last(
    device: StandardServer, nats_server: NatsServer, nc: NatsClient, tmp_path: Path
) -> None:
    healthy = [f"po_{i:02d}" for i in range(POLLED)] + ["cached"]
    events = [f"ev_{i:03d}" for i in range(EVENTS)]
    names = [*BAD, *healthy, *events]
    config = {
        "id": "test-tango-memory",
        "nats": {"url": nats_server.url},
        "channels": [device.channel(n).uri for n in names],
        "tango": {"no_database_hosts": [device.hostport],
                  "read_timeout": READ_TIMEOUT, "slow_after": 1.0},
    }  # fmt: skip
    path = tmp_path / "adapter.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]

    # a device never seen: each bad attribute read once, then the others
    cold = await Valued().start(nc)
    adapter = Process("adapter-tango-cold", argv)
    try:
        await asyncio.to_thread(adapter.wait_for, r"adapter \S+ ready", 60)
        await cold.wait(healthy + events, 60)
        assert hardware_reads(device, "slow") == 1
        assert hardware_reads(device, "timeout") == 1
    finally:
        adapter.stop()
    await cold.sub.unsubscribe()

    # what it learned is on the bus
    kv = await nc.jetstream().key_value(BUCKET)
    key = device_key(device.channel("slow").tango_device)
    learned = decode((await kv.get(key)).value)
    assert learned["slow"].strikes >= 1 and learned["timeout"].strikes >= 1
    assert learned["slow"].cost >= SLOW_S - 0.2
    assert all(learned[n].proven for n in healthy if n != "cached")

    # a new adapter process: the healthy ones first, at once; the slow ones wait
    slow_reads = hardware_reads(device, "slow"), hardware_reads(device, "timeout")
    warm = await Valued().start(nc)
    adapter = Process("adapter-tango-warm", argv)
    try:
        await asyncio.to_thread(adapter.wait_for, r"adapter \S+ ready", 60)
        ready = time.monotonic()
        valued = await warm.wait(healthy, 30)
        assert valued - ready <= 3.0, f"healthy ones valued {valued - ready:.1f} s"
        assert (hardware_reads(device, "slow"), hardware_reads(device, "timeout")) == (
            slow_reads
        )  # not read before them
        await warm.wait(events, 30)
    finally:
        adapter.stop()
