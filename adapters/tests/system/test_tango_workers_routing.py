"""Tango adapter instances with subscription workers, routed: two replicas
``--shard 0/2`` and ``--shard 1/2``, each ``--workers 2``, over the devices of one
real device server, with a real nats-server.

- Every configured channel is served by exactly one worker of the replica that
  owns its device; the six adapter ids (two supervisors, four workers) differ.
- A ``want`` and a ``put`` of a device no worker has yet, sent back to back (the
  put races the hand-over the want starts), get exactly one reply each.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tango_support import Bus, SimServer, start_sim

from synoptic_adapters.sharding import Shard
from synoptic_adapters.testing import eventually, synoptic_command
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
#: Devices 1..CONFIGURED are configured (their "double"); the others are fresh.
CONFIGURED, DEVICES = 8, 30


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    server = start_sim(rate=2.0, devices=DEVICES)
    try:
        yield server
    finally:
        server.proc.stop()


@pytest.fixture(scope="module")
def replicas(nats_server: NatsServer, sim: SimServer) -> Iterator[list[Process]]:
    """Two replicas of one configuration (no id: each takes its shard's default
    id), ``--shard i/2 --workers 2``; each has its ``adapter_id`` attribute."""
    config = {
        "nats": {"url": nats_server.url},
        "channels": [sim.channel("double", d).uri for d in range(1, CONFIGURED + 1)],
        "demand": {"sweep_period": 0.2},
        "heartbeat": {"period": 0.5},
        "tango": {"no_database_hosts": [sim.hostport]},
    }
    with tempfile.TemporaryDirectory(prefix="synoptic-tango-routing-") as folder:
        path = Path(folder) / "adapter.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        processes = []
        try:
            for index in range(2):
                argv = [
                    synoptic_command(), "adapter", "tango", "--config", str(path),
                    "--shard", f"{index}/2", "--workers", "2",
                ]  # fmt: skip
                processes.append(Process(f"adapter-shard-{index}", argv))
            for process in processes:
                ready = process.wait_for(
                    r"adapter (\S+) ready: (\d+) configured channels over 2 workers",
                    90,
                )
                process.adapter_id = ready.group(1)  # type: ignore[attr-defined]
                process.configured = int(ready.group(2))  # type: ignore[attr-defined]
            yield processes
        finally:
            for process in processes:
                process.stop()


async def test_shards_with_workers_serve_each_channel_once(
    nc: NatsClient, replicas: list[Process], sim: SimServer
) -> None:
    bus = await Bus().start(nc)
    supervisors = [p.adapter_id for p in replicas]  # type: ignore[attr-defined]
    workers = [f"{s}-w{i}" for s in supervisors for i in range(2)]
    assert len({*supervisors, *workers}) == 6
    await eventually(lambda: all(i in bus.beats for i in supervisors + workers))
    # epoch -> workers: epochs are start times in ms, so two workers started in
    # the same millisecond share one (seen once in a full run)
    eps: dict[int, list[str]] = defaultdict(list)
    for w in workers:
        eps[bus.beats[w]["ep"]].append(w)
    uris = [sim.channel("double", d).uri for d in range(1, CONFIGURED + 1)]
    owners = {
        u: supervisors[0] if Shard(0, 2).owns(parse_channel(u)) else supervisors[1]
        for u in uris
    }
    assert [p.configured for p in replicas] == [  # type: ignore[attr-defined]
        sum(1 for u in uris if owners[u] == s) for s in supervisors
    ]
    await eventually(
        lambda: all(sum(v["c"] for v in bus.values[u]) >= 2 for u in uris), 30
    )
    for uri in uris:
        (ep,) = bus.live_eps(uri)  # one publisher
        assert any(w.startswith(f"{owners[uri]}-w") for w in eps[ep]), (uri, eps[ep])
    # each worker monitors only its own channels: none twice, none missing
    assert sum(bus.beats[w]["n"] for w in workers) == CONFIGURED


async def test_put_right_after_the_first_want_is_answered_once(
    nc: NatsClient, replicas: list[Process], sim: SimServer
) -> None:
    inbox = nc.new_inbox()
    replies: dict[str, list[dict[str, Any]]] = defaultdict(list)

    async def on_reply(msg: Any) -> None:
        replies[msg.subject.rsplit(".", 1)[1]].append(decode_put_reply(msg.data))

    await nc.subscribe(f"{inbox}.*", cb=on_reply)
    await nc.flush()
    marks = [p.mark() for p in replicas]
    fresh = range(CONFIGURED + 1, DEVICES + 1)
    for device in fresh:  # 22 devices no worker has yet
        channel = sim.channel("double", device)
        want = {"ver": SCHEMA_VERSION, "ch": [channel.uri], "lease": 30.0, "by": "t"}
        put = {"ver": SCHEMA_VERSION, "v": float(device), "who": f"race-{device}"}
        await nc.publish(SUBJECTS.want("tango"), encode(want))
        await nc.publish(
            SUBJECTS.put(channel), encode(put), reply=f"{inbox}.r{device}"
        )  # in the same flush as the want
        await eventually(lambda device=device: replies[f"r{device}"], 15)
    # a second put of each device, once its worker holds it; its reply comes
    # after any late duplicate of the first
    for device in fresh:
        put = {"ver": SCHEMA_VERSION, "v": 0.5, "who": f"again-{device}"}
        channel = sim.channel("double", device)
        await nc.publish(SUBJECTS.put(channel), encode(put), reply=f"{inbox}.a{device}")
    await eventually(lambda: all(replies[f"a{d}"] for d in fresh), 15)
    for device in fresh:
        assert [r["ok"] for r in replies[f"r{device}"]] == [True], device
        assert [r["ok"] for r in replies[f"a{device}"]] == [True], device
    # written by one worker each, once
    logs = "\n".join(_since(p, m) for p, m in zip(replicas, marks, strict=True))
    for device in fresh:
        uri = re.escape(sim.channel("double", device).uri)
        lines = re.findall(rf"w[01] \S+: put {uri} by race-{device}: ok", logs)
        assert len(lines) == 1, (device, lines)


def _since(process: Process, mark: int) -> str:
    """The lines ``process`` printed after ``mark`` (of those it keeps)."""
    lines = process.output().splitlines()
    return "\n".join(lines[max(0, len(lines) - (process.mark() - mark)) :])
