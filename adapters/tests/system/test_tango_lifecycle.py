"""Stopping and releasing at scale: the simulated device server on SIGTERM, and
the Tango source letting go of many attributes while their events still arrive."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from tango_support import CollectingSink, start_sim, started_source

from synoptic_adapters.demand import RELEASED_STATUS
from synoptic_adapters.testing import eventually, synoptic_command
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_schemas import SCHEMA_VERSION, Subjects, decode_value, encode

pytestmark = pytest.mark.system
SUBJECTS = Subjects()


async def test_sim_server_exits_on_sigterm_while_slow_reads_run() -> None:
    """A client reading the 2 s and 6 s attributes does not keep the simulated
    server alive after SIGTERM: it exits by itself, status 0, within seconds (no SIGKILL needed)."""
    server = start_sim(rate=10.0)
    sink = CollectingSink()
    source = await started_source(server.settings(), sink)
    try:
        slow, timeout = server.channel("slow"), server.channel("timeout")
        await source.monitor([slow, timeout])
        await sink.wait(lambda: sink.last(slow) is not None, timeout=20)
        started = time.monotonic()
        returncode = await asyncio.to_thread(server.proc.stop, 20.0)
        assert returncode == 0  # not the SIGKILL that stop() falls back to
        assert time.monotonic() - started < 5.0
    finally:
        await source.stop()
        server.proc.kill()


@pytest.mark.timeout(240)
async def test_lease_lapse_releases_400_attributes_under_event_load(
    nc: NatsClient, nats_server: NatsServer, tmp_path: Path
) -> None:
    """400 demanded attributes changing at 10 Hz (4000 events/s) are released when
    their lease lapses, twice, while their events keep arriving: the adapter
    neither crashes nor stalls (a configured attribute keeps updating), publishes
    every released channel as such, takes them back on the next demand, and still
    stops cleanly."""
    server = start_sim(bulk=400, rate=10.0)
    adapter: Process | None = None
    try:
        bulk = [server.channel(f"bulk_{n:04d}").uri for n in range(400)]
        steady = server.channel("long").uri
        config = {
            "id": "test-tango-release",
            "nats": {"url": nats_server.url},
            "channels": [steady],
            "demand": {"sweep_period": 0.2},
            "tango": {"no_database_hosts": [server.hostport]},
        }
        path = tmp_path / "adapter.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        argv = [synoptic_command(), "adapter", "tango", "--config", str(path)]
        adapter = Process("adapter-tango-release", argv)
        adapter.wait_for(r"adapter \S+ ready", 60)
        latest: dict[str, dict[str, Any]] = {}
        counts: dict[str, int] = defaultdict(int)

        async def on_value(msg: Any) -> None:
            _, channel = SUBJECTS.parse(msg.subject)
            latest[channel.uri] = decode_value(msg.data)
            counts[channel.uri] += 1

        sub = await nc.subscribe("cs.val.tango.>", cb=on_value)
        want = encode({"ver": SCHEMA_VERSION, "ch": bulk, "lease": 4.0, "by": "test"})
        for cycle in range(2):
            before = dict(counts)

            def live(b: dict[str, int] = before) -> list[str]:
                return [u for u in bulk
                        if counts[u] >= b.get(u, 0) + 3 and latest[u]["c"]]  # fmt: skip

            # renewed every second until every attribute is live and changing, as a
            # gateway renews while watched (a start slower than one lease on a loaded
            # machine must not lapse it); generous: in the second cycle the 400
            # re-subscriptions queue behind the paced background unsubscriptions
            # (cppTango does one at a time per process), which took > 30 s once on a
            # loaded 2-core machine
            try:
                async with asyncio.timeout(60):
                    while len(live()) < len(bulk):
                        await nc.publish(SUBJECTS.want("tango"), want)
                        with contextlib.suppress(TimeoutError):
                            await eventually(lambda: len(live()) == len(bulk), 1.0)
            except TimeoutError:
                raise AssertionError(
                    f"cycle {cycle}: {len(live())} of {len(bulk)} attributes live; "
                    f"{describe(bulk, counts, latest)}; adapter alive: {adapter.alive()}; "
                    f"adapter log tail:\n{adapter.output()[-3000:]}"
                ) from None
            # no renewal: the lease lapses while the events keep coming
            await eventually(
                lambda: all(latest[u]["st"] == RELEASED_STATUS for u in bulk),
                timeout=30,
            )
            assert adapter.alive(), f"adapter died in cycle {cycle}"
            released = dict(counts)
            steady_count = counts[steady]
            await eventually(lambda n=steady_count: counts[steady] >= n + 10)
            assert all(counts[u] == released[u] for u in bulk)  # no stray values
        await sub.unsubscribe()
        assert adapter.stop(20) == 0
    finally:
        if adapter is not None:
            adapter.kill()
        server.proc.stop()


def describe(
    uris: list[str], counts: dict[str, int], latest: dict[str, dict[str, Any]]
) -> str:
    """What a failing cycle saw: how many values per attribute, and the statuses."""
    received = sorted(counts[u] for u in uris)
    statuses: dict[str, int] = defaultdict(int)
    for uri in uris:
        value = latest.get(uri)
        statuses[
            "none" if value is None else f"c={value['c']} st={value.get('st')}"
        ] += 1
    return f"values per attribute min {received[0]} max {received[-1]}, statuses {dict(statuses)}"
