"""``synoptic demo`` keeps what it started alive: the real demo on free ports;
``kill -9`` of its nats-server and of its EPICS adapter: each is reaped (no
zombie), restarted with a log line saying so, and values flow to a gateway
client again. The PV Access server's types arrive whole through the demo's
gateway."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_gateway.client import GatewayClient, Subscription

pytestmark = pytest.mark.system

COUNTER = "ca://DEMO:CNT:00000"


def exists(pid: int | str) -> bool:
    """Whether a process ``pid`` exists, a zombie included."""
    return os.path.exists(f"/proc/{pid}")


async def counting(sub: Subscription, more: int, timeout: float = 60.0) -> None:
    """Wait until the counter has gone up ``more`` times from its value now."""

    def value() -> int:
        v = sub.value(COUNTER)
        return -1 if v is None else int(v["v"])

    start = value()
    await sub.wait_for(lambda _: value() >= start + more, timeout)


async def kill_and_see_restart(demo: Process, name: str, since: int) -> int:
    """SIGKILL ``name`` (its pid from the demo's log); the restarted pid."""
    pid_line = (
        rf"^{re.escape(name)}\s+pid (\d+)|{re.escape(name)} restarted \(pid (\d+)"
    )
    matches = re.findall(pid_line, demo.output(), re.M)
    old = int([a or b for a, b in matches][-1])
    mark = demo.mark()
    os.kill(old, signal.SIGKILL)
    exited = await asyncio.to_thread(
        demo.wait_for,
        rf"demo: {re.escape(name)} \(pid {old}\) exited with -9",
        30,
        mark,
    )
    assert "restarting in" in exited.string
    restarted = await asyncio.to_thread(
        demo.wait_for, rf"demo: {re.escape(name)} restarted \(pid (\d+)", 90, mark
    )
    assert not exists(old)  # reaped: not even a zombie
    return int(restarted[1])


async def pva_types_arrive(client: GatewayClient) -> None:
    """The demo's simulated PV Access server: its table, the 1024 × 1024 16-bit
    image whole (the demo's NATS takes 8 MiB payloads) and a compressed image."""
    uris = ["pva://DEMO:TABLE", "pva://DEMO:IMAGE", "pva://DEMO:IMAGE:LZ4"]
    sub = await client.subscribe(uris)

    def arrived(s: Subscription) -> bool:
        return all((v := s.value(u)) is not None and v["v"] is not None for u in uris)

    await sub.wait_for(arrived, 60)
    image, lz4 = sub.value(uris[1])["v"], sub.value(uris[2])["v"]
    assert (image.shape, str(image.dtype)) == ((1024, 1024), "uint16")
    assert (lz4.shape, str(lz4.dtype)) == ((96, 128), "uint16")
    assert list(sub.value(uris[0])["v"])[:2] == ["name", "position"]
    await client.unsubscribe(sub)


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """The demo's data folder, one the ``postgres`` user can reach (the demo's
    archive runs as that user; pytest's own temporary folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="synoptic-demo-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.timeout(900)
async def test_demo_restarts_a_killed_nats_server_and_adapter(var_dir: Path) -> None:
    http = free_port()
    argv = [sys.executable, "-m", "synoptic_bus.cli", "demo", "--var", str(var_dir),
            "--nats-port", str(free_port()), "--http-port", str(http),
            "--tango-port", str(free_udp_tcp_port()),
            "--idp-port", str(free_port())]  # fmt: skip
    demo = Process("demo", argv)
    pids: set[str] = set()  # every child's, read while its line is in the window

    def seen() -> None:
        pids.update(re.findall(r"(?:pid |restarted \(pid )(\d+)", demo.output()))

    try:
        # the last to start is the sign-in provider (a JVM: tens of seconds)
        await asyncio.to_thread(demo.wait_for, r"demo running", 540)
        seen()
        async with GatewayClient(f"ws://127.0.0.1:{http}/ws") as client:
            sub = await client.subscribe([COUNTER])
            await counting(sub, 3)
            await pva_types_arrive(client)

            nats = await kill_and_see_restart(demo, "nats-server", 0)
            seen()
            await counting(sub, 5)  # the gateway and the adapter are back on NATS
            assert exists(nats)

            await kill_and_see_restart(demo, "adapter-epics", 0)
            seen()
            await counting(sub, 5)
    finally:
        sent = time.monotonic()
        demo.stop(30)  # SIGTERM
    seen()
    while [p for p in pids if exists(p)] and time.monotonic() - sent < 20:  # noqa: ASYNC110 - no event tells of other processes ending
        await asyncio.sleep(0.05)
    took = time.monotonic() - sent
    assert "demo stopped" in demo.output()
    # every child, restarted ones included, was stopped with the demo, in time
    assert pids and not [p for p in pids if exists(p)]
    assert took < 20, f"the demo and its children took {took:.1f} s to stop"
