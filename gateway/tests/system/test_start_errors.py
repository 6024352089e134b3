"""A port in use or a child dying at start ends ``synoptic demo`` at once with one
line that says which and what to do, never a traceback; a gateway that cannot
bind its port exits non-zero with one line."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.procs import Process, free_port, free_udp_tcp_port

pytestmark = pytest.mark.system

SYNOPTIC = [sys.executable, "-m", "synoptic_bus.cli"]


def listener(port: int, host: str = "0.0.0.0") -> socket.socket:
    """Another program's server on ``port``."""
    sock = socket.socket()
    sock.bind((host, port))
    sock.listen()
    return sock


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """The demo's data folder, one the ``postgres`` user can reach."""
    path = Path(tempfile.mkdtemp(prefix="synoptic-demo-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def demo_argv(var: Path, ports: dict[str, int]) -> list[str]:
    return [*SYNOPTIC, "demo", "--var", str(var),
            "--nats-port", str(ports["nats"]), "--http-port", str(ports["http"]),
            "--tango-port", str(ports["tango"])]  # fmt: skip


@pytest.mark.parametrize(
    ("taken", "option"),
    [("http", "--http-port"), ("nats", "--nats-port"), ("tango", "--tango-port")],
)
def test_a_port_in_use_ends_the_demo_at_once(
    var_dir: Path, taken: str, option: str
) -> None:
    ports = {"nats": free_port(), "http": free_port(), "tango": free_udp_tcp_port()}
    with listener(ports[taken]):
        demo = Process("demo", demo_argv(var_dir, ports))
        code = demo.popen.wait(60)
        output = demo.output()
        demo.stop()
    assert code == 1, output
    lines = [line for line in output.splitlines() if "already in use" in line]
    assert len(lines) == 1, output
    assert f"port {ports[taken]} " in lines[0] and option in lines[0]
    assert "Traceback" not in output and "pid" not in output  # nothing started


@pytest.mark.timeout(400)
def test_a_child_dying_at_start_ends_the_demo_with_one_line(var_dir: Path) -> None:
    """The Tango port is free when the demo checks it, taken before the simulated
    device server starts: that child dies, the demo says so and stops the rest."""
    ports = {"nats": free_port(), "http": free_port(), "tango": free_udp_tcp_port()}
    demo = Process("demo", demo_argv(var_dir, ports))
    try:
        demo.wait_for(r"^postgres +pid", 240)  # the simulators start after it
        with listener(ports["tango"], "127.0.0.1"):
            code = demo.popen.wait(240)
            ended = time.monotonic()
            output = demo.output()
    finally:
        demo.stop()
    assert code == 1, output
    [line] = [ln for ln in output.splitlines() if ln.startswith("demo: cannot start")]
    assert "sim-tango exited with 1 before it was ready" in line, line
    assert f"127.0.0.1:{ports['tango']}" in line and "--port" in line, line
    assert "Traceback" not in output, output
    pids = re.findall(r"^\S+ +pid (\d+)", output, re.M)
    while [p for p in pids if os.path.exists(f"/proc/{p}")]:
        assert time.monotonic() - ended < 20, "children left running"
        time.sleep(0.05)


def test_a_gateway_that_cannot_bind_exits_non_zero_with_one_line() -> None:
    port = free_port()
    with listener(port):
        gateway = Process("gateway", [*SYNOPTIC, "gateway", "--host", "0.0.0.0",
                                      "--port", str(port),
                                      "--nats", f"nats://127.0.0.1:{free_port()}"])  # fmt: skip
        code = gateway.popen.wait(60)
        output = gateway.output()
        gateway.stop()
    assert code == 1, output
    assert output.strip() == (
        f"synoptic gateway: port {port} on 0.0.0.0 is already in use: stop the "
        f"program listening there or pass --port with a free one"
    )
