"""Helpers for tests and benchmarks: start real gateway processes, publish
synthetic counting values straight onto NATS. Not used by the gateway itself."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synoptic_bus.connect import NatsClient
from synoptic_bus.procs import Process, free_port
from synoptic_schemas import Subjects, encode, parse_channel


class Changes:
    """What a recorder of messages shares: :meth:`note` on each message recorded,
    :meth:`until` awaits a condition on what was recorded (checked after each)."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def note(self) -> None:
        self._changed.set()

    async def until(self, predicate: Callable[[], Any], timeout: float = 60.0) -> None:
        """Return once ``predicate()`` is true; :class:`TimeoutError` after ``timeout`` s."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()


@dataclass
class GatewayProc:
    """One ``synoptic gateway`` child process."""

    proc: Process
    port: int

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(
        self, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        status, _, body = self.request(path, headers)
        return status, body

    def request(
        self, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """GET ``path``: status (304 and errors too), headers (lower-case names),
        the body as sent (not decoded)."""
        request = urllib.request.Request(self.http_url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                got = {k.lower(): v for k, v in response.headers.items()}
                return response.status, got, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        data: bytes | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """An HTTP request with a JSON ``body`` (or raw ``data``): status, the
        decoded JSON answer (raw bytes if not JSON) and the headers."""
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        payload = data if data is not None else (
            None if body is None else json.dumps(body).encode()
        )  # fmt: skip
        request = urllib.request.Request(
            self.http_url + path, data=payload, headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw = response.status, response.read()
                got = {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
            got = {k.lower(): v for k, v in exc.headers.items()}
        try:
            return status, json.loads(raw), got
        except ValueError:
            return status, raw, got

    def metrics(self) -> dict[str, float]:
        """Prometheus samples without labels, by name."""
        _, body = self.get("/metrics")
        out: dict[str, float] = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#") and "{" not in line:
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def gateway_id(self) -> str:
        return json.loads(self.get("/healthz")[1])["gw"]

    def stop(self) -> None:
        self.proc.stop()


def start_gateway(nats_url: str, *args: str, wait_nats: bool = True) -> GatewayProc:
    """Start a gateway on a free port; return once it listens (and NATS is up)."""
    port = free_port()
    argv = [sys.executable, "-m", "synoptic_bus.cli", "gateway", "--port", str(port),
            "--nats", nats_url, *args]  # fmt: skip
    ready = (
        (r"ready on http://", r"NATS connected")
        if wait_nats
        else (r"ready on http://",)
    )
    return GatewayProc(Process.started(f"gateway-{port}", argv, *ready), port)


def site_tree(root: Path, screens: dict[str, Any], index: str) -> tuple[Path, Path]:
    """Under ``root``: a screens folder (``<name>.json`` per entry of ``screens``)
    and a UI build (``index.html`` and an ``assets/`` folder) for ``--screens`` and
    ``--ui``; returns both folders."""
    screen_dir, ui = root / "screens", root / "dist"
    screen_dir.mkdir()
    (ui / "assets").mkdir(parents=True)
    for name, screen in screens.items():
        (screen_dir / f"{name}.json").write_text(json.dumps(screen))
    (ui / "index.html").write_text(index)
    return screen_dir, ui


@dataclass
class Publisher:
    """Publishes counting values (seq +1 each) of channels straight to NATS."""

    nc: NatsClient
    ep: int = field(default_factory=lambda: int(time.time() * 1000))
    subjects: Subjects = field(default_factory=Subjects)
    seq: dict[str, int] = field(default_factory=dict)

    async def value(self, uri: str, v: Any = None) -> int:
        """Publish the next value of ``uri`` (``v`` defaults to the seq)."""
        seq = self.seq[uri] = self.seq.get(uri, 0) + 1
        msg = {"ver": 1, "v": seq if v is None else v, "t": time.time_ns(), "sev": 0,
               "st": "NO_ALARM", "seq": seq, "ep": self.ep, "c": True}  # fmt: skip
        await self.nc.publish(self.subjects.val(parse_channel(uri)), encode(msg))
        return seq

    async def heartbeat(self, adapter_id: str = "test-publisher") -> None:
        """Say this publisher's epoch is alive, as an adapter does every second."""
        msg = {"ver": 1, "id": adapter_id, "proto": "ca", "ep": self.ep,
               "t": time.time_ns(), "period": 1.0, "n": len(self.seq),
               "conn": len(self.seq)}  # fmt: skip
        await self.nc.publish(self.subjects.hb(adapter_id), encode(msg))

    async def meta(self, uri: str, unit: str = "mA", desc: str | None = None) -> None:
        msg = {"ver": 1, "dt": "f8", "shape": [], "w": True, "t": time.time_ns(),
               "ep": self.ep, "unit": unit}  # fmt: skip
        if desc is not None:
            msg["desc"] = desc
        await self.nc.publish(self.subjects.meta(parse_channel(uri)), encode(msg))


def ca_env(port: int) -> dict[str, str]:
    """CA settings of a private soft IOC on loopback ``port`` (for the IOC and its
    clients), as the benchmarks start one."""
    return {
        "EPICS_CA_SERVER_PORT": str(port), "EPICS_CAS_SERVER_PORT": str(port),
        "EPICS_CA_REPEATER_PORT": str(port + 1), "EPICS_CAS_BEACON_PORT": str(port + 1),
        "EPICS_CA_ADDR_LIST": "127.0.0.1", "EPICS_CA_AUTO_ADDR_LIST": "NO",
        "EPICS_CAS_INTF_ADDR_LIST": "127.0.0.1",
        "EPICS_CAS_BEACON_ADDR_LIST": "127.0.0.1",
        "EPICS_CAS_AUTO_BEACON_ADDR_LIST": "NO",
    }  # fmt: skip
