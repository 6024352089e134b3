"""Helpers for the Tango tests: a real simulated device server process and a
sink that collects what a source reports."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from synoptic_adapters.tango.settings import TangoSettings
from synoptic_adapters.tango.source import TangoSource
from synoptic_bus.connect import NatsClient
from synoptic_bus.procs import Process, free_port
from synoptic_schemas import Channel, Subjects, parse_channel
from synoptic_schemas.codec import decode_heartbeat, decode_value

READY = r"Ready to accept request"


@dataclass
class SimServer:
    """A running ``synoptic sim tango`` process (database-less)."""

    port: int
    proc: Process
    argv: list[str]
    env: dict[str, str] | None = None

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self.port}"

    def channel(self, attribute: str, device: int = 1) -> Channel:
        return parse_channel(f"tango://{self.hostport}/sim/test/{device}/{attribute}")

    def restart(self) -> None:
        """Start the same server again (after :meth:`Process.kill`)."""
        self.proc = Process("tango-sim", self.argv, env=self.env)
        self.proc.wait_for(READY, timeout=60)

    def settings(self, **overrides: Any) -> TangoSettings:
        return TangoSettings(no_database_hosts=frozenset({self.hostport}), **overrides)


def start_sim(
    *,
    bulk: int = 0,
    rate: float = 10.0,
    devices: int = 1,
    port: int | None = None,
    env: dict[str, str] | None = None,
) -> SimServer:
    """Start a simulated device server on a free loopback port: database-less,
    or registered in the database of ``TANGO_HOST`` when ``env`` sets it."""
    port = port or free_port()
    argv = [
        sys.executable, "-m", "synoptic_adapters.sim.tango_command",
        "--port", str(port), "--bulk", str(bulk), "--rate", str(rate),
        "--devices", str(devices),
    ]  # fmt: skip
    if env and "TANGO_HOST" in env:
        argv.append("--database")
    proc = Process("tango-sim", argv, env=env)
    proc.wait_for(READY, timeout=60)
    return SimServer(port, proc, argv, env)


@dataclass
class Update:
    """One call the source made on the sink."""

    kind: str  # value, meta, disconnected
    channel: Channel
    at: float  # time.monotonic() when received
    v: Any = None
    t: int = 0
    sev: int = 0
    st: str = ""
    meta: dict[str, Any] | None = None


@dataclass
class CollectingSink:
    """A ``ChannelSink`` that records everything, for assertions."""

    updates: list[Update] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    #: the updates per (channel, kind): lookups stay cheap with many channels
    _index: dict[tuple[Channel, str], list[Update]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def value(self, channel: Channel, v: Any, *, t: int, sev: int, st: str) -> None:
        self._add(Update("value", channel, time.monotonic(), v, t, sev, st))

    def meta(self, channel: Channel, meta: dict[str, Any]) -> None:
        self._add(Update("meta", channel, time.monotonic(), meta=meta))

    def disconnected(self, channel: Channel, reason: str) -> None:
        self._add(Update("disconnected", channel, time.monotonic(), st=reason))

    def _add(self, update: Update) -> None:
        self.updates.append(update)
        self._index[update.channel, update.kind].append(update)
        self._changed.set()

    def of(self, channel: Channel, kind: str = "value") -> list[Update]:
        return list(self._index.get((channel, kind), ()))

    def last(self, channel: Channel, kind: str = "value") -> Update | None:
        found = self._index.get((channel, kind))
        return found[-1] if found else None

    def first(self, channel: Channel, kind: str = "value") -> Update | None:
        found = self._index.get((channel, kind))
        return found[0] if found else None

    async def wait(self, predicate: Any, timeout: float = 10.0) -> None:
        """Wait until ``predicate()`` is true (checked on every update)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"condition not met in {timeout} s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))


async def started_source(settings: TangoSettings, sink: CollectingSink) -> TangoSource:
    """A started source reporting to ``sink``."""
    source = TangoSource(settings)
    await source.start(sink)
    return source


class Bus:
    """What Tango adapters publish, as a test sees it: values per channel URI
    and the latest heartbeat per adapter id."""

    def __init__(self) -> None:
        self.values: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.beats: dict[str, dict[str, Any]] = {}

    async def start(self, nc: NatsClient) -> Bus:
        async def on_value(msg: Any) -> None:
            _, channel = Subjects().parse(msg.subject)
            self.values[channel.uri].append(decode_value(msg.data))

        async def on_beat(msg: Any) -> None:
            beat = decode_heartbeat(msg.data)
            self.beats[beat["id"]] = dict(beat)

        await nc.subscribe("cs.val.tango.>", cb=on_value)
        await nc.subscribe("cs.hb.*", cb=on_beat)
        await nc.flush()
        return self

    def ep_of(self, adapter_id: str) -> int | None:
        beat = self.beats.get(adapter_id)
        return beat["ep"] if beat else None

    def live_from(self, uri: str, ep: int | None, count: int = 2) -> bool:
        return ep is not None and (
            sum(1 for v in self.values[uri] if v["c"] and v["ep"] == ep) >= count
        )

    def live_eps(self, uri: str) -> set[int]:
        """The epochs that published a connected value of ``uri``."""
        return {v["ep"] for v in self.values[uri] if v["c"]}


@dataclass
class StandardServer:
    """A running ``synoptic sim tango-standard`` process (database-less): one
    device in Tango's default serialisation model."""

    port: int
    proc: Process
    argv: list[str]
    device: str = "sim/standard/1"

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self.port}"

    def restart(self) -> None:
        """Start the same server again, on the same port (after a stop)."""
        self.proc = Process("tango-standard", self.argv)
        self.proc.wait_for(READY, timeout=60)

    @property
    def url(self) -> str:
        return f"tango://{self.hostport}/{self.device}#dbase=no"

    def channel(self, attribute: str) -> Channel:
        return parse_channel(f"tango://{self.hostport}/{self.device}/{attribute}")

    def settings(self, **overrides: Any) -> TangoSettings:
        return TangoSettings(no_database_hosts=frozenset({self.hostport}), **overrides)


def start_standard(*options: str) -> StandardServer:
    """Start the default-serialisation simulator on a free loopback port with
    ``options`` of ``synoptic sim tango-standard``."""
    port = free_port()
    argv = [
        sys.executable, "-m", "synoptic_adapters.sim.tango_command",
        "tango-standard", "--port", str(port), *options,
    ]  # fmt: skip
    proc = Process("tango-standard", argv)
    proc.wait_for(READY, timeout=60)
    return StandardServer(port, proc, argv)
