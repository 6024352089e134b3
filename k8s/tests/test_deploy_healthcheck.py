"""docker/healthcheck.py, the containers' health probes, against real servers:
an HTTP endpoint that is ready or not, an adapter heartbeat on a real
nats-server that is present, absent, or from another adapter, the HDB++ tables on
a real PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from deploy_helpers import REPO

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_bus.rollup import start_rollup
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode
from synoptic_schemas.codec import encode_value

PROBE = REPO / "docker" / "healthcheck.py"


async def probe(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the probe as the container does; exit status and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PROBE),
        "--timeout",
        "2",
        *args,
        env={**os.environ, **(env or {})},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/readyz" else 503)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_http_probe(http_server: str) -> None:
    assert (await probe("http", f"{http_server}/readyz"))[0] == 0
    code, err = await probe("http", f"{http_server}/notready")
    assert code == 1
    assert "503" in err
    code, err = await probe("http", "http://127.0.0.1:9/readyz")  # nothing there
    assert code == 1
    assert "unhealthy" in err


@contextlib.asynccontextmanager
async def heartbeats(nc: NatsClient, adapter_id: str) -> AsyncIterator[None]:
    """Publish a valid heartbeat of ``adapter_id`` every 0.1 s meanwhile."""
    subject = Subjects("cs").hb(adapter_id)
    beat = {
        "ver": SCHEMA_VERSION,
        "id": adapter_id,
        "proto": "ca",
        "ep": 1,
        "t": 0,
        "period": 0.1,
        "n": 3,
        "conn": 3,
    }

    async def beat_forever() -> None:
        while True:
            await nc.publish(subject, encode({**beat, "t": time.time_ns()}))
            await asyncio.sleep(0.1)

    task = asyncio.create_task(beat_forever())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_heartbeat_probe(nats_server: NatsServer, nc: NatsClient) -> None:
    env = {"SYNOPTIC_NATS_URL": nats_server.url, "SYNOPTIC_ADAPTER_ID": "epics-0"}
    async with heartbeats(nc, "epics-0"):
        assert (await probe("heartbeat", env=env))[0] == 0
    async with heartbeats(nc, "epics-1"):  # another adapter's beat is no proof
        code, err = await probe("heartbeat", env=env)
    assert code == 1
    assert "Timeout" in err
    code, err = await probe("heartbeat", env={**env, "SYNOPTIC_ADAPTER_ID": ""})
    assert code == 1
    assert "SYNOPTIC_ADAPTER_ID" in err


async def test_alarms_probe_wants_the_alarm_service_s_heartbeat(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    env = {"SYNOPTIC_NATS_URL": nats_server.url}
    code, err = await probe("--timeout", "1", "alarms", env=env)
    assert code == 1 and "Timeout" in err
    beat = {"ver": SCHEMA_VERSION, "id": "alarms", "t": time.time_ns(), "period": 1.0,
            "n": 0, "act": 0, "tree": 0}  # fmt: skip

    async def beating() -> None:
        while True:
            await nc.publish(Subjects().alarm_heartbeat(), encode(beat))
            await asyncio.sleep(0.2)

    task = asyncio.create_task(beating())
    try:
        assert (await probe("alarms", env=env))[0] == 0
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_stream_probe_waits_for_the_store(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """What an adapter's init container does: wait until bus-init made CS_LAST."""
    env = {"SYNOPTIC_NATS_URL": nats_server.url, "SYNOPTIC_SUBJECT_PREFIX": "waitx"}
    code, err = await probe("stream", env=env)
    assert code == 1
    assert "not found" in err.lower()

    waiting = asyncio.create_task(probe("--wait", "20", "stream", env=env))
    await asyncio.sleep(1.5)
    assert not waiting.done()
    await ensure_store(nc, StoreConfig("waitx"))
    code, err = await asyncio.wait_for(waiting, timeout=25)
    assert code == 0, err


async def test_blocks_probe_needs_the_rollup_writing(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """The rollup's probe: its stream exists, and blocks keep coming."""
    env = {"SYNOPTIC_NATS_URL": nats_server.url, "SYNOPTIC_SUBJECT_PREFIX": "rollx"}
    code, err = await probe("blocks", env=env)
    assert code == 1 and "not found" in err.lower()
    await ensure_store(nc, StoreConfig("rollx"))
    await ensure_history(nc, HistoryConfig("rollx"))
    rollup = start_rollup(nats_server.url, "--prefix", "rollx")
    try:
        assert (await probe("blocks", env=env))[0] == 0  # created, empty
        await nc.publish(
            "rollx.val.ca.PROBE", encode_value(1.0, time.time_ns(), 0, "", 1, 1, True)
        )
        blocks = nc.jetstream()
        async with asyncio.timeout(20):
            while (await blocks.stream_info("ROLLX_ROLL_OPEN")).state.messages == 0:  # noqa: ASYNC110 - a stream count has no event
                await asyncio.sleep(0.1)
        assert (await probe("blocks", env=env))[0] == 0
    finally:
        rollup.stop()


def _ca_env(port: int) -> dict[str, str]:
    return {
        "EPICS_CA_SERVER_PORT": str(port),
        "EPICS_CA_REPEATER_PORT": str(port + 1),
        "EPICS_CA_ADDR_LIST": "127.0.0.1",
    }


def _pva_env(port: int) -> dict[str, str]:
    return {"EPICS_PVA_SERVER_PORT": str(port)}


@pytest.mark.parametrize(
    ("proto", "sim", "env_of"),
    [("ca", "ioc", _ca_env), ("pva", "pva", _pva_env)],
)
async def test_epics_probe_reads_the_simulator(
    proto: str, sim: str, env_of: Callable[[int], dict[str, str]]
) -> None:
    """The sim-ioc / sim-pva container's probe, against the real simulator."""
    port = free_udp_tcp_port()
    prefix = f"H{proto.upper()}{os.getpid()}:"
    synoptic = str(Path(sys.executable).parent / "synoptic")
    server = Process(f"sim-{sim}", [
        synoptic, "sim", sim, "--records", "1", "--no-extras",
        "--prefix", prefix, "--port", str(port),
    ])  # fmt: skip
    try:
        await asyncio.to_thread(server.wait_for, rf"sim {sim} ready", 30)
        env = env_of(port)
        code, err = await probe(proto, f"{prefix}CNT:00000", env=env)
        assert code == 0, err
        code, err = await probe(proto, f"{prefix}NO:SUCH:PV", env=env)
        assert code == 1
        assert "unhealthy" in err
    finally:
        server.stop()


async def test_tango_probe_pings_the_simulated_device() -> None:
    """The sim-tango probe, against the real device server listening on every
    address and advertising a published host name, as in compose and k8s."""
    port = free_port()
    synoptic = str(Path(sys.executable).parent / "synoptic")
    server = Process(
        "sim-tango",
        [synoptic, "sim", "tango", "--host", "0.0.0.0", "--port", str(port)],
        env={"TANGO_SERVER_PUBLISHED_HOSTNAME": "localhost"},
    )
    try:
        await asyncio.to_thread(server.wait_for, r"Ready to accept request", 60)
        device = f"tango://localhost:{port}/sim/test/1#dbase=no"
        code, err = await probe("tango", device)
        assert code == 0, err
        code, err = await probe("tango", device.replace("sim/test/1", "no/such/dev"))
        assert code == 1
        assert "unhealthy" in err
    finally:
        server.stop()


async def test_archive_probe_wants_the_hdbpp_tables(postgres: PostgresServer) -> None:
    """The archiver's probe, against a real PostgreSQL before and after the init
    step (``synoptic archiver --schema-only``) made the HDB++ tables."""
    env = {"SYNOPTIC_ARCHIVE_DSN": postgres.dsn}
    code, err = await probe("archive", env=env)
    assert code == 1
    assert "att_conf" in err
    synoptic = str(Path(sys.executable).parent / "synoptic")
    init = await asyncio.create_subprocess_exec(
        synoptic, "archiver", "--schema-only", env={**os.environ, **env}
    )
    assert await asyncio.wait_for(init.wait(), timeout=60) == 0
    code, err = await probe("archive", env=env)
    assert code == 0, err
    gone = f"host=127.0.0.1 port={free_port()} user=postgres dbname=hdb"
    code, err = await probe("archive", env={"SYNOPTIC_ARCHIVE_DSN": gone})
    assert code == 1
    assert "unhealthy" in err
    code, err = await probe("archive", env={"SYNOPTIC_ARCHIVE_DSN": ""})
    assert code == 1
    assert "SYNOPTIC_ARCHIVE_DSN" in err
