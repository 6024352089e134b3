"""A Tango adapter instance with subscription workers (``--workers 2``): real
device servers, a real nats-server, ``synoptic adapter tango`` as a child process.

Device 1 (2 configured attributes) goes to worker 0, device 2 (1 attribute) to
worker 1; device 3, first demanded, to worker 1 (fewer attributes); device 4, first
written, to worker 0 (fewer devices by then)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from tango_support import Bus, SimServer, start_sim

from synoptic_adapters.testing import bus_command, eventually, synoptic_command
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_put_reply,
    encode,
    parse_channel,
)

pytestmark = pytest.mark.system
SUBJECTS = Subjects()


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    server = start_sim(rate=10.0, devices=4)
    try:
        yield server
    finally:
        server.proc.stop()


def _adapter(nats_server: NatsServer, sim: SimServer, folder: str) -> Process:
    adapter_id = f"test-tw-{uuid.uuid4().hex[:6]}"
    config = {
        "id": adapter_id,
        "nats": {"url": nats_server.url},
        "channels": [
            sim.channel("double", 1).uri,
            sim.channel("long", 1).uri,
            sim.channel("double", 2).uri,
        ],
        "demand": {"sweep_period": 0.2},
        "heartbeat": {"period": 0.5},
        "tango": {"no_database_hosts": [sim.hostport], "workers": 2},
    }
    path = Path(folder) / f"{adapter_id}.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]
    process = Process(f"adapter-{adapter_id}", argv)
    process.adapter_id = adapter_id  # type: ignore[attr-defined]
    process.wait_for(rf"adapter {adapter_id} ready: .* over 2 workers", 90)
    return process


@pytest.fixture(scope="module")
def adapter(nats_server: NatsServer, sim: SimServer) -> Iterator[Process]:
    with tempfile.TemporaryDirectory(prefix="synoptic-tango-workers-") as folder:
        process = _adapter(nats_server, sim, folder)
        try:
            yield process
        finally:
            process.stop()


def _worker_pid(process: Process, index: int) -> int:
    """The pid of worker ``index`` of the supervisor ``process``."""
    for child in psutil.Process(process.pid).children():
        argv = child.cmdline()
        if "--worker" in argv and argv[argv.index("--worker") + 1] == str(index):
            return child.pid
    raise AssertionError(f"no worker {index}")


async def test_workers_own_whole_devices_and_demand(
    nc: NatsClient, adapter: Process, sim: SimServer
) -> None:
    bus = await Bus().start(nc)
    base = adapter.adapter_id  # type: ignore[attr-defined]
    w0, w1 = f"{base}-w0", f"{base}-w1"
    await eventually(lambda: bus.ep_of(w0) and bus.ep_of(w1), timeout=10)
    assert bus.ep_of(w0) != bus.ep_of(w1)
    one_a, one_b = sim.channel("double", 1).uri, sim.channel("long", 1).uri
    two = sim.channel("double", 2).uri
    await eventually(
        lambda: (
            bus.live_from(one_a, bus.ep_of(w0))
            and bus.live_from(one_b, bus.ep_of(w0))
            and bus.live_from(two, bus.ep_of(w1))
        ),
        timeout=30,
    )
    # on demand: device 3 is new; it goes to worker 1 (fewer attributes)
    three = sim.channel("long", 3).uri
    want = {"ver": SCHEMA_VERSION, "ch": [three], "lease": 60.0, "by": "test"}
    await nc.publish(SUBJECTS.want("tango"), encode(want))
    await eventually(lambda: bus.live_from(three, bus.ep_of(w1)), timeout=20)
    assert not any(v["ep"] == bus.ep_of(w0) for v in bus.values[three])
    await eventually(lambda: bus.beats[w1]["n"] == 2, timeout=5)
    assert bus.beats[w0]["n"] == 2


async def test_put_reaches_the_worker_of_a_new_device(
    nc: NatsClient, adapter: Process, sim: SimServer
) -> None:
    # device 4 has no worker yet: the supervisor deals it (to worker 0, which
    # has one device to worker 1's two) and that worker writes
    uri = sim.channel("double", 4).uri
    mark = adapter.mark()
    request = {"ver": SCHEMA_VERSION, "v": 12.5, "who": "test", "timeout": 5.0}
    msg = await nc.request(SUBJECTS.put(parse_channel(uri)), encode(request), 10)
    assert decode_put_reply(msg.data)["ok"] is True
    line = re.escape(f"put {uri} by test: ok")
    adapter.wait_for(rf"w0 synoptic_adapters.runner: {line}", 5, since=mark)
    assert not re.search(rf"w1 \S+: {line}", adapter.output())
    # a refused write comes back from the same worker, with Tango's reason
    request["v"] = 1e6
    msg = await nc.request(SUBJECTS.put(parse_channel(uri)), encode(request), 10)
    refused = decode_put_reply(msg.data)
    assert refused["ok"] is False and refused["msg"].startswith("API_WAttrOutside")


async def test_command_is_relayed_to_the_worker_of_its_device(
    nc: NatsClient, adapter: Process, sim: SimServer
) -> None:
    uri = sim.channel("double", 4).uri.rsplit("/", 1)[0] + "/setlevel"
    mark = adapter.mark()
    reply = await bus_command(nc, uri, 3.5)
    assert reply == {"ver": SCHEMA_VERSION, "ok": True, "v": 3.5}
    line = re.escape(f"command {uri} by test: ok")
    adapter.wait_for(rf"w\d synoptic_adapters.runner: {line}", 5, since=mark)


async def test_killed_worker_comes_back_with_its_channels(
    nc: NatsClient, adapter: Process, sim: SimServer
) -> None:
    bus = await Bus().start(nc)
    base = adapter.adapter_id  # type: ignore[attr-defined]
    w1 = f"{base}-w1"
    two, three = sim.channel("double", 2).uri, sim.channel("long", 3).uri
    want = {"ver": SCHEMA_VERSION, "ch": [three], "lease": 60.0, "by": "test"}
    await nc.publish(SUBJECTS.want("tango"), encode(want))  # renew
    await eventually(lambda: bus.ep_of(w1), timeout=5)
    old_ep = bus.ep_of(w1)
    await eventually(lambda: bus.live_from(three, old_ep), timeout=10)
    mark = adapter.mark()
    pid = _worker_pid(adapter, 1)
    psutil.Process(pid).kill()
    killed_at = time.monotonic()
    # a put meanwhile: one reply, from the supervisor, saying why
    request = {"ver": SCHEMA_VERSION, "v": 1.5, "who": "test", "timeout": 5.0}
    msg = await nc.request(SUBJECTS.put(parse_channel(two)), encode(request), 10)
    refused = decode_put_reply(msg.data)
    assert refused["ok"] is False and refused["err"] == "disconnected"
    assert refused["msg"].startswith("adapter worker 1 "), refused
    for uri in (two, three):
        down = await eventually(
            lambda uri=uri: next((v for v in bus.values[uri] if not v["c"]), None),
            timeout=10,
        )
        assert "adapter worker 1 exited: signal 9" in down["st"]
    assert time.monotonic() - killed_at < 5.0
    # restarted: a new epoch, and both the configured and the demanded channel
    # publish again without a new want
    adapter.wait_for(r"worker 1 started: pid", 15, since=mark)
    await eventually(lambda: bus.ep_of(w1) not in (None, old_ep), timeout=30)
    await eventually(
        lambda: (
            bus.live_from(two, bus.ep_of(w1)) and bus.live_from(three, bus.ep_of(w1))
        ),
        timeout=30,
    )
    assert _worker_pid(adapter, 1) != pid


async def test_sigterm_and_sigkill_of_the_supervisor_leave_no_worker(
    nats_server: NatsServer, adapter: Process, sim: SimServer
) -> None:
    workers = psutil.Process(adapter.pid).children(recursive=True)
    assert len(workers) == 2
    adapter.signal(signal.SIGTERM)
    assert await asyncio.to_thread(adapter.popen.wait, 30) == 0
    await eventually(lambda: not any(w.is_running() for w in workers), timeout=5)
    # a supervisor killed outright: the kernel stops its workers
    with tempfile.TemporaryDirectory(prefix="synoptic-tango-workers-") as folder:
        second = _adapter(nats_server, sim, folder)
        try:
            workers = psutil.Process(second.pid).children(recursive=True)
            assert len(workers) == 2
            second.signal(signal.SIGKILL)  # the supervisor only, not its group
            await eventually(
                lambda: (
                    not any(
                        w.is_running() and w.status() != psutil.STATUS_ZOMBIE
                        for w in workers
                    )
                ),
                timeout=20,
            )
        finally:
            second.stop()
