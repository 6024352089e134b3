"""Helpers for tests and benchmarks: a simulated IOC or PV Access server and an
EPICS adapter (CA or PVA) as real child processes on private loopback ports, and a
separate CA client process.

Everything starts with :class:`~synoptic_bus.procs.Process`, waits for its
readiness line and stops by PID.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

from synoptic_adapters.sim.epics_ioc import ca_environment
from synoptic_adapters.sim.pva_env import pva_environment
from synoptic_bus.procs import Process, ProcessError, free_udp_tcp_port
from synoptic_bus.store import fetch_last, stream_name
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_cmd_reply,
    decode_put_reply,
    decode_value,
    encode,
    parse_channel,
)

_SUBJECTS = Subjects()


def synoptic_command() -> str:
    """The ``synoptic`` executable beside this Python."""
    return str(Path(sys.executable).parent / "synoptic")


#: The simulators without the rest of the ``synoptic`` command (a faster start).
SIM = [sys.executable, "-m", "synoptic_adapters.sim"]


def random_prefix() -> str:
    """A PV prefix no other test uses, e.g. ``T3f9a1c:``."""
    return f"T{uuid.uuid4().hex[:6]}:"


#: What an IOC prints when its CA port is in use: the simulator's own check
#: (it exits), or EPICS's when the port was taken after that (it suspends).
_PORT_TAKEN = "synoptic sim ioc: cannot listen on|CAS: No TCP server started"


class SimIoc:
    """``synoptic sim ioc`` on its own CA port (restartable on the same port)."""

    def __init__(
        self,
        *,
        records: int = 5,
        rate: float = 10.0,
        prefix: str | None = None,
        port: int | None = None,
        extras: bool = True,
        fill_rate: float = 0.0,
        interface: str | None = None,
    ) -> None:
        self.records, self.rate, self.extras = records, rate, extras
        self.fill_rate = fill_rate
        self.interface = interface
        self.prefix = prefix or random_prefix()
        self.port = port or free_udp_tcp_port()
        #: whether the port may still change: picked here and never served yet
        self._port_free_to_change = port is None
        self.process: Process | None = None

    @property
    def env(self) -> dict[str, str]:
        """CA settings a client of this IOC needs."""
        return ca_environment(self.port)

    def pv(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def uri(self, name: str) -> str:
        return f"ca://{self.prefix}{name}"

    def start(self, timeout: float = 60.0) -> SimIoc:
        argv = [
            *SIM, "ioc", "--records", str(self.records),
            "--rate", f"{self.rate:g}", "--prefix", self.prefix, "--port", str(self.port),
        ]  # fmt: skip
        if not self.extras:
            argv.append("--no-extras")
        if self.fill_rate:
            argv += ["--fill-rate", f"{self.fill_rate:g}"]
        if self.interface:
            argv += ["--interface", self.interface]
        for _ in range(3):
            self.process = Process("sim-ioc", argv, env=self.env)
            ready = self.process.wait_for(f"sim ioc ready|{_PORT_TAKEN}", timeout)
            if ready.group(0) == "sim ioc ready":
                self._port_free_to_change = False
                return self
            # the free port was taken between picking and binding it
            self.process.kill()
            self.process = None
            if not self._port_free_to_change:
                break
            self.port = free_udp_tcp_port()
            argv[argv.index("--port") + 1] = str(self.port)
        raise ProcessError(f"sim ioc: no CA server on port {self.port} ({_PORT_TAKEN})")

    def kill(self) -> None:
        if self.process:
            self.process.kill()
            self.process = None

    def stop(self) -> None:
        if self.process:
            self.process.stop()
            self.process = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SimPva(SimIoc):
    """``synoptic sim pva`` on its own PVA port (restartable on the same port)."""

    def __init__(
        self,
        *,
        image_rate: float = 10.0,
        swap_type: int = 0,
        beacons: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.image_rate = image_rate
        self.beacons = beacons
        #: SWAP's type at the next start (see ``synoptic sim pva --swap-type``)
        self.swap_type = swap_type

    @property
    def env(self) -> dict[str, str]:
        """PVA settings a client of this server needs."""
        return pva_environment(self.port)

    def uri(self, name: str) -> str:
        return f"pva://{self.prefix}{name}"

    def start(self, timeout: float = 60.0) -> SimPva:
        argv = [
            *SIM, "pva", "--records", str(self.records),
            "--rate", f"{self.rate:g}", "--prefix", self.prefix, "--port", str(self.port),
            "--image-rate", f"{self.image_rate:g}", "--fill-rate", f"{self.fill_rate:g}",
            "--swap-type", str(self.swap_type),
        ]  # fmt: skip
        if not self.beacons:
            argv.append("--no-beacons")
        if not self.extras:
            argv.append("--no-extras")
        if self.interface:
            argv += ["--interface", self.interface]
        self.process = Process("sim-pva", argv, env=self.env)
        self.process.wait_for(r"sim pva ready", timeout)
        return self


class SimTango:
    """``synoptic sim tango`` (database-less) on a free loopback port."""

    env: dict[str, str] | None = None

    def __init__(self, *, rate: float = 10.0, devices: int = 1) -> None:
        self.port = free_udp_tcp_port()
        self.rate = rate
        self.devices = devices
        self.process: Process | None = None

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self.port}"

    def uri(self, name: str, device: int = 1) -> str:
        """The URI of an attribute (or command) of device ``sim/test/<device>``."""
        return f"tango://{self.hostport}/sim/test/{device}/{name}"

    def start(self, timeout: float = 60.0) -> SimTango:
        argv = [
            sys.executable, "-m", "synoptic_adapters.sim.tango_command",
            "--port", str(self.port), "--rate", f"{self.rate:g}",
            "--devices", str(self.devices),
        ]  # fmt: skip
        self.process = Process("sim-tango", argv)
        self.process.wait_for(r"Ready to accept request", timeout)
        return self

    def stop(self) -> None:
        if self.process:
            self.process.stop()
            self.process = None

    def adapter(self, nats_url: str, channels: Sequence[str] = ()) -> EpicsAdapter:
        """A Tango adapter for this server (not started)."""
        tango = {"no_database_hosts": [self.hostport]}
        return EpicsAdapter(
            nats_url, self, channels, protocol="tango", extra={"tango": tango}
        )


class EpicsAdapter:
    """``synoptic adapter epics`` (or ``pva``, ``tango``) with a generated
    configuration file."""

    def __init__(
        self,
        nats_url: str,
        ioc: SimIoc | SimTango,
        channels: Sequence[str],
        *,
        protocol: str = "epics",
        adapter_id: str | None = None,
        shard: str = "0/1",
        extra: dict[str, Any] | None = None,
        connect_timeout: float = 2.0,
        metrics_port: int | None = None,
    ) -> None:
        self.nats_url = nats_url
        self.ioc = ioc
        self.id = adapter_id or f"test-{uuid.uuid4().hex[:6]}"
        self.shard = shard
        self._dir = tempfile.TemporaryDirectory(prefix="synoptic-adapter-")
        self.config_path = Path(self._dir.name) / "adapter.yaml"
        config: dict[str, Any] = {
            "id": self.id,
            "nats": {"url": nats_url},
            "channels": list(channels),
            protocol: {"connect_timeout": connect_timeout},
            **(extra or {}),
        }
        if metrics_port:
            config["metrics"] = {"port": metrics_port, "addr": "127.0.0.1"}
        #: ``http://127.0.0.1:PORT/metrics`` when metrics are on.
        self.metrics_url = (
            f"http://127.0.0.1:{metrics_port}/metrics" if metrics_port else None
        )
        self.config_path.write_text(json.dumps(config, indent=1))  # JSON is YAML
        self.process: Process | None = None
        self.protocol = protocol

    def start(self, timeout: float = 60.0) -> EpicsAdapter:
        argv = [
            synoptic_command(), "adapter", self.protocol, "--config", str(self.config_path),
            "--shard", self.shard,
        ]  # fmt: skip
        self.process = Process(f"adapter-{self.id}", argv, env=self.ioc.env)
        self.process.wait_for(r"adapter \S+ ready", timeout)
        return self

    def stop(self) -> int:
        code = self.process.stop() if self.process else 0
        self.process = None
        return code

    async def metrics(self) -> dict[str, float]:
        """The ``synoptic_adapter_*`` samples of one scrape, keyed by name and
        labels (``synoptic_adapter_published_total{adapter="…",proto="ca"}``)."""
        assert self.metrics_url is not None, "started without metrics_port"
        url = self.metrics_url
        text = await asyncio.to_thread(
            lambda: urllib.request.urlopen(url, timeout=10).read().decode()
        )
        return {
            line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("synoptic_adapter_")
        }

    def close(self) -> None:
        self.stop()
        self._dir.cleanup()

    def __enter__(self) -> EpicsAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_CA_CLIENT = """
import asyncio, json, sys
import numpy, aioca
async def main(ops):
    results = []
    for op, pv, value in ops:
        if op == "put":
            if isinstance(value, dict):
                value = numpy.arange(value["arange"], dtype=float)
            await aioca.caput(pv, value, wait=True, timeout=10)
            await asyncio.sleep(0.2)  # one monitor event per put
        else:
            got = await aioca.caget(pv, timeout=10)
            results.append(got.tolist() if hasattr(got, "tolist") else got)
    print(json.dumps(results))
asyncio.run(main(json.loads(sys.argv[1])))
"""


def ca_client(ioc: SimIoc, op: str, pv: str = "", value: Any = None) -> Any:
    """caput/caget from a separate CA client process (not the adapter's context).
    ``value`` ``{"arange": n}`` puts the array 0, 1, …, n-1. Several operations
    in one process: ``ca_batch``."""
    results = ca_batch(ioc, [(op, pv, value)])
    return results[0] if op == "get" else None


def ca_batch(ioc: SimIoc, ops: Sequence[tuple[str, str, Any]]) -> list[Any]:
    """Run ``(op, pv, value)`` operations ("put"/"get") in order in one separate CA
    client process (puts wait for completion, then 0.2 s); return the gets' values."""
    out = subprocess.run(
        [sys.executable, "-c", _CA_CLIENT, json.dumps([list(op) for op in ops])],
        env={**os.environ, **ioc.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if out.returncode != 0:
        raise RuntimeError(f"CA client failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


async def eventually(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``predicate`` until it returns something truthy (or time out)."""
    async with asyncio.timeout(timeout):
        while True:
            result = predicate()
            if result:
                return result
            await asyncio.sleep(0.02)


class Tap:
    """Decoded value messages per channel URI, as they arrive on the bus."""

    def __init__(self) -> None:
        self.values: dict[str, list[dict[str, Any]]] = defaultdict(list)

    async def start(self, nc: Any, pattern: str = "cs.val.>") -> Tap:
        """Subscribe to ``pattern`` (value subjects) on the NATS client ``nc``."""

        async def on_msg(msg: Any) -> None:
            _, channel = _SUBJECTS.parse(msg.subject)
            self.values[channel.uri].append(decode_value(msg.data))

        await nc.subscribe(pattern, cb=on_msg)
        await nc.flush()
        return self

    def latest(self, uri: str) -> dict[str, Any] | None:
        return self.values[uri][-1] if self.values[uri] else None


async def bus_put(nc: Any, uri: str, value: Any, timeout: float = 5.0) -> dict:
    """A put request through the bus, as a gateway makes it; the decoded reply."""
    request = {"ver": SCHEMA_VERSION, "v": value, "who": "test", "timeout": timeout}
    msg = await nc.request(
        _SUBJECTS.put(parse_channel(uri)), encode(request), timeout=timeout + 5
    )
    return dict(decode_put_reply(msg.data))


async def bus_command(nc: Any, uri: str, arg: Any = None, timeout: float = 5.0) -> dict:
    """A command request through the bus, as a gateway makes it (``arg`` None:
    none); the decoded reply."""
    request = {"ver": SCHEMA_VERSION, "who": "test", "timeout": timeout}
    if arg is not None:
        request["v"] = arg
    msg = await nc.request(
        _SUBJECTS.cmd(parse_channel(uri)), encode(request), timeout=timeout + 5
    )
    return dict(decode_cmd_reply(msg.data))


async def fetch_all(
    nc: Any, subjects: list[str], timeout: float = 15.0, prefix: str = "cs"
) -> dict:
    """The last message of every subject from the store (of the deployment
    ``prefix``), once all are there."""
    async with asyncio.timeout(timeout):
        while True:
            snap = await fetch_last(nc, subjects, stream=stream_name(prefix))
            if not snap.missing(subjects):
                return snap.messages
            await asyncio.sleep(0.1)


async def assert_counts_in_order(
    adapter: EpicsAdapter, seen: Sequence[dict[str, Any]], proto: str
) -> None:
    """A simulated counter's values ``seen`` (decoded, as they arrived) came each
    ``seq`` one more than the last and every count in order, skipping no more
    counts than ``adapter`` says it merged (its mailboxes keep a channel's newest
    update while its loop is behind: a busy machine); ``proto`` its label."""
    seqs = [v["seq"] for v in seen]
    assert seqs == list(range(seqs[0], seqs[0] + len(seen))), seqs
    steps = [b["v"] - a["v"] for a, b in itertools.pairwise(seen)]
    assert all(step >= 1 and step == int(step) for step in steps), steps
    labels = f'adapter="{adapter.id}",proto="{proto}"'
    merged = (await adapter.metrics())[
        f"synoptic_adapter_source_merged_total{{{labels}}}"
    ]
    assert sum(steps) - len(steps) <= merged, (steps, merged)
