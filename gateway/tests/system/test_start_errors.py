"""A port in use or a child dying at start ends ``synoptic demo`` at once with one
line that says which and what to do, never a traceback; a gateway that cannot
bind its port exits non-zero with one line."""

from __future__ import annotations

import asyncio
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

from synoptic_adapters.testing import SimIoc
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer, nats_server_executable
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_schemas import decode_value

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


# -- prerequisites on the bus and beside it ------------------------------------------


@pytest.fixture
def nats_without_jetstream() -> Iterator[str]:
    """A nats-server with JetStream off; its URL."""
    port = free_port()
    server = Process("nats", [nats_server_executable(), "-a", "127.0.0.1",
                              "-p", str(port)])  # fmt: skip
    server.wait_for(NatsServer.READY, 30)
    try:
        yield f"nats://127.0.0.1:{port}"
    finally:
        server.stop()


def adapter_config(tmp_path: Path, url: str, proto: str, channels: list[str]) -> Path:
    config = tmp_path / f"{proto}.yaml"
    lines = ["id: t", "nats:", f"  url: '{url}'", "channels:"]
    config.write_text("\n".join([*lines, *(f"  - {c}" for c in channels)]) + "\n")
    return config


JETSTREAM_OFF = "JetStream is off on nats://127.0.0.1:"


@pytest.mark.parametrize(
    ("proto", "channel", "extra"),
    [("epics", "ca://X:Y", []), ("pva", "pva://X:Y", []),
     ("tango", "tango://127.0.0.1:1/a/b/c/d#dbase=no", ["--workers", "2"])],
)  # fmt: skip
def test_an_adapter_without_jetstream_says_so_and_exits(
    tmp_path: Path, nats_without_jetstream: str, proto: str, channel: str,
    extra: list[str],
) -> None:  # fmt: skip
    config = adapter_config(tmp_path, nats_without_jetstream, proto, [channel])
    adapter = Process(
        "adapter", [*SYNOPTIC, "adapter", proto, "--config", str(config), *extra]
    )
    code = adapter.popen.wait(90)
    output = adapter.output()
    adapter.stop()
    assert code == 2, output
    [line] = [ln for ln in output.splitlines() if JETSTREAM_OFF in ln]
    assert "cannot start" in line and "start nats-server with -js" in line
    assert "Traceback" not in output, output


def test_a_gateway_without_jetstream_says_so_and_exits(
    nats_without_jetstream: str,
) -> None:
    gateway = Process("gateway", [*SYNOPTIC, "gateway", "--port", str(free_port()),
                                  "--nats", nats_without_jetstream])  # fmt: skip
    code = gateway.popen.wait(90)
    output = gateway.output()
    gateway.stop()
    assert code == 2, output
    [line] = [ln for ln in output.splitlines() if JETSTREAM_OFF in ln]
    assert "cannot serve" in line and "start nats-server with -js" in line
    assert "Traceback" not in output, output


ACCOUNTS = """
accounts {
  A {
    jetstream: enabled
    users: [
      {user: adapter, password: a, permissions: {
        publish: {allow: ["cs.>", "$JS.API.STREAM.INFO.CS_LAST"]},
        subscribe: {allow: ["cs.>", "_INBOX.>"]}}}
      {user: admin, password: b}
    ]
  }
}
"""


async def test_a_missing_stream_is_named_with_what_to_do_until_it_exists(
    tmp_path: Path,
) -> None:
    """An adapter whose NATS user may not create the last-value stream, and a
    gateway, each say the stream is missing and to run ``synoptic bus init``;
    both go on once it exists."""
    port = free_port()
    conf = tmp_path / "nats.conf"
    conf.write_text(ACCOUNTS)
    server = Process("nats", [nats_server_executable(), "-js", "-a", "127.0.0.1",
                              "-p", str(port), "-sd", str(tmp_path / "js"),
                              "-c", str(conf)])  # fmt: skip
    procs = [server]
    try:
        server.wait_for(NatsServer.READY, 30)
        adapter_url = f"nats://adapter:a@127.0.0.1:{port}"
        admin_url = f"nats://admin:b@127.0.0.1:{port}"
        config = adapter_config(tmp_path, adapter_url, "epics", ["ca://X:Y"])
        adapter = Process("adapter", [*SYNOPTIC, "adapter", "epics",
                                      "--config", str(config)])  # fmt: skip
        gateway = Process("gateway", [*SYNOPTIC, "gateway", "--port", str(free_port()),
                                      "--nats", admin_url, "--no-seed-screens"])  # fmt: skip
        procs += [adapter, gateway]
        wanted = (
            r"the last-value stream CS_LAST does not exist: run `synoptic bus init`"
        )
        await asyncio.to_thread(adapter.wait_for, wanted, 90)
        await asyncio.to_thread(gateway.wait_for, wanted, 90)
        assert "password" not in adapter.output() and ":a@" not in adapter.output()
        init = Process("init", [*SYNOPTIC, "bus", "init", "--nats", admin_url])
        procs.append(init)
        assert await asyncio.to_thread(init.popen.wait, 60) == 0, init.output()
        await asyncio.to_thread(adapter.wait_for, r"adapter t ready", 60)
        await asyncio.to_thread(
            gateway.wait_for, r"last-value stream CS_LAST found", 60
        )
        for process in (adapter, gateway):
            assert "Traceback" not in process.output(), process.output()
    finally:
        for process in reversed(procs):
            process.stop()


async def test_a_value_over_the_bus_limit_says_so_in_its_status(
    tmp_path: Path,
) -> None:
    """A nats-server with a 64 KiB max_payload and an 800 kB waveform: the
    channel is published without a value, invalid, its status saying what to
    raise; the adapter logs it once; smaller channels flow."""
    nats = NatsServer(max_payload=64 * 1024).start()
    ioc = SimIoc(records=1, fill_rate=2)  # WF100K filled twice a second
    ioc.start()
    adapter = None
    try:
        config = adapter_config(
            tmp_path, nats.url, "epics", [ioc.uri("WF100K"), ioc.uri("CNT:00000")]
        )
        nc = await connect(nats.url, name="test")
        sub = await nc.subscribe(f"cs.val.ca.{ioc.pv('WF100K')}")
        counter = await nc.subscribe(f"cs.val.ca.{ioc.pv('CNT:00000')}")
        adapter = Process("adapter", [*SYNOPTIC, "adapter", "epics",
                                      "--config", str(config)], env=ioc.env)  # fmt: skip
        msg = await sub.next_msg(timeout=90)
        while decode_value(msg.data)["v"] is not None:  # empty before the fill
            msg = await sub.next_msg(timeout=30)
        value = decode_value(msg.data)
        assert value["sev"] == 3 and value["c"] is True
        assert "exceeds the bus's max_payload of 65536 bytes" in value["st"]
        assert "raise max_payload" in value["st"]
        for _ in range(3):  # smaller channels flow
            assert decode_value((await counter.next_msg(timeout=30)).data)["v"] >= 0
        errors = [ln for ln in adapter.output().splitlines() if "max_payload" in ln]
        assert len(errors) == 1 and "ERROR" in errors[0], adapter.output()
        await nc.close()
    finally:
        if adapter is not None:
            adapter.stop()
        ioc.stop()
        nats.close()


def test_an_unreachable_archive_is_named_by_the_archiver_and_the_gateway(
    nats_server: NatsServer,
) -> None:
    dsn = f"host=127.0.0.1 port={free_port()} user=postgres dbname=hdb password=s3"
    archiver = Process("archiver", [*SYNOPTIC, "archiver", "--dsn", dsn,
                                    "--nats", nats_server.url])  # fmt: skip
    code = archiver.popen.wait(60)
    output = archiver.output()
    archiver.stop()
    assert code == 2 and "Traceback" not in output, output
    assert output.startswith("synoptic archiver: cannot reach the database")
    assert "check --dsn" in output and "s3" not in output
    gateway = Process("gateway", [*SYNOPTIC, "gateway", "--port", str(free_port()),
                                  "--nats", nats_server.url, "--archive-dsn", dsn])  # fmt: skip
    try:
        line = gateway.wait_for(r"the HDB\+\+ archive .* is unreachable", 90).string
        assert "password=***" in line and "s3" not in line
        assert "history beyond the bus answers 'unavailable'" in line
        assert gateway.alive()
    finally:
        gateway.stop()
