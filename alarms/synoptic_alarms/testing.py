"""Test helpers: the alarm service as a process, a tap on the alarm states, and
requests as a gateway sends them."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synoptic_bus.connect import NatsClient
from synoptic_bus.procs import Process
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode
from synoptic_schemas.alarms import AlarmMsg, decode_alarm, decode_alarm_reply
from synoptic_schemas.codec import encode_sev


class AlarmProcess:
    """``synoptic alarms run`` with a tree file, restartable; killable by PID."""

    def __init__(self, nats_url: str, tree: str | None = None, *,
                 no_data_after: float = 15.0, prefix: str = "cs",
                 bucket: str = "alarmtree") -> None:  # fmt: skip
        self.nats_url = nats_url
        self._dir = tempfile.TemporaryDirectory(prefix="synoptic-alarms-")
        self.tree_file: Path | None = None
        if tree is not None:
            self.tree_file = Path(self._dir.name) / "tree.yaml"
            self.tree_file.write_text(tree)
        self.no_data_after = no_data_after
        self.prefix = prefix
        self.bucket = bucket
        self.process: Process | None = None

    def start(self, timeout: float = 60.0) -> AlarmProcess:
        argv = [sys.executable, "-m", "synoptic_bus.cli", "alarms", "run",
                "--nats", self.nats_url, "--prefix", self.prefix, "--bucket", self.bucket,
                "--no-data-after", f"{self.no_data_after:g}"]  # fmt: skip
        if self.tree_file is not None:
            argv += ["--tree", str(self.tree_file)]
        echo = bool(os.environ.get("SYNOPTIC_TEST_ECHO"))  # its log on stdout
        self.process = Process(f"alarms-{uuid.uuid4().hex[:4]}", argv, echo=echo)
        self.process.wait_for(r"alarm service \S+ ready", timeout)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def kill(self) -> None:
        """SIGKILL: a crash, not a shutdown."""
        if self.process is not None:
            self.process.kill()
            self.process = None

    def close(self) -> None:
        self.stop()
        self._dir.cleanup()


class StateTap:
    """Every alarm state published, by channel, as a consumer keeps them: a
    repeated ``n`` is counted in :attr:`repeats` and dropped."""

    def __init__(self) -> None:
        self.states: dict[str, list[AlarmMsg]] = defaultdict(list)
        self.order: list[tuple[str, int, str]] = []  # (ch, n, ev) as they came
        self.repeats = 0
        self._changed = asyncio.Event()

    async def attach(
        self, nc: NatsClient, subjects: Subjects | None = None
    ) -> StateTap:
        await nc.subscribe((subjects or Subjects()).alarms(), cb=self._on)
        await nc.flush()
        return self

    async def _on(self, msg: Any) -> None:
        state = decode_alarm(msg.data)
        kept = self.states[state["ch"]]
        if kept and state["n"] <= kept[-1]["n"]:
            self.repeats += 1
            return
        kept.append(state)
        self.order.append((state["ch"], state["n"], state["ev"]))
        self._changed.set()

    def latest(self, uri: str) -> AlarmMsg | None:
        kept = self.states.get(uri)
        return kept[-1] if kept else None

    async def wait(self, uri: str, check: Callable[[AlarmMsg], bool],
                   timeout: float = 30.0) -> AlarmMsg:  # fmt: skip
        """The first latest state of ``uri`` that passes ``check``."""
        async with asyncio.timeout(timeout):
            while True:
                state = self.latest(uri)
                if state is not None and check(state):
                    return state
                self._changed.clear()
                await self._changed.wait()

    async def wait_count(self, count: int, timeout: float = 30.0) -> None:
        """Until states of ``count`` alarms have come."""
        async with asyncio.timeout(timeout):
            while len(self.states) < count:
                self._changed.clear()
                await self._changed.wait()


async def request(
    nc: NatsClient, op: str, uris: list[str], who: str = "tester", *,
    why: str = "", minutes: float = 0.0, prefix: str = "cs", timeout: float = 15.0,
) -> dict[str, Any]:  # fmt: skip
    """Send an alarm request as a gateway does; the decoded reply."""
    body: dict[str, Any] = {"ver": SCHEMA_VERSION, "op": op, "ch": uris, "who": who,
                            "by": "test"}  # fmt: skip
    if why:
        body["why"] = why
    if minutes:
        body["until"] = time.time_ns() + int(minutes * 60e9)
    reply = await nc.request(Subjects(prefix).alarm_request(), encode(body),
                             timeout=timeout)  # fmt: skip
    return dict(decode_alarm_reply(reply.data))


class FakeAdapter:
    """Publishes severity transitions and heartbeats as an adapter would."""

    def __init__(self, nc: NatsClient, name: str = "fake", ep: int | None = None,
                 prefix: str = "cs") -> None:  # fmt: skip
        self.nc = nc
        self.name = name
        self.ep = ep or time.time_ns() // 1_000_000
        self.seq: dict[str, int] = defaultdict(int)
        self.subjects = Subjects(prefix)

    async def sev(self, uri: str, sev: int, st: str = "", c: bool = True,
                  v: Any = None) -> None:  # fmt: skip
        from synoptic_schemas import parse_channel

        self.seq[uri] += 1
        data = encode_sev(v, time.time_ns(), sev, st or ("NO_ALARM" if sev == 0 else "HIHI"),
                          self.seq[uri], self.ep, c)  # fmt: skip
        await self.nc.publish(self.subjects.sev(parse_channel(uri)), data)

    async def beat(self) -> None:
        body = {"ver": 1, "id": self.name, "proto": "ca", "ep": self.ep,
                "t": time.time_ns(), "period": 1.0, "n": len(self.seq), "conn": 0}  # fmt: skip
        await self.nc.publish(self.subjects.hb(self.name), encode(body))
