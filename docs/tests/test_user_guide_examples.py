"""The user guide's examples work: the Python write script against a real
nats-server, simulated IOC and EPICS adapter; the screen file against the screen
schema; the adapter configurations against the adapters' configuration loader."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_adapters.config import parse_config
from synoptic_adapters.testing import EpicsAdapter, SimIoc, ca_client
from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, parse_channel
from synoptic_schemas.codec import encode_value
from synoptic_schemas.jsonschemas import validator

GUIDE = Path(__file__).parents[1] / "user-guide.md"


def block(heading: str, lang: str) -> str:
    """The first ``lang`` code block after ``heading`` in the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def test_the_screen_example_is_a_valid_screen() -> None:
    screen = json.loads(block("### Write or change a screen", "json"))
    validator("screen").validate(screen)
    assert {w["type"] for w in screen["widgets"]} >= {"label", "trend", "input"}


@pytest.mark.parametrize(
    ("heading", "proto"),
    [
        ("### Connect IOCs: the EPICS adapter", "ca"),
        ("### Connect Tango devices: the Tango adapter", "tango"),
        ("### Connect EPICS 7 servers: the PV Access adapter", "pva"),
    ],
)
def test_the_adapter_configurations_load(heading: str, proto: str) -> None:
    config = parse_config(block(heading, "yaml"), proto, source="user-guide.md")
    assert config.id and config.channels
    assert all(channel.proto == proto for channel in config.channels)


@pytest.fixture(scope="module")
def ioc() -> Iterator[SimIoc]:
    with SimIoc(records=1).start() as sim:
        yield sim


@pytest.fixture(scope="module")
def adapter(nats_server: NatsServer, ioc: SimIoc) -> Iterator[EpicsAdapter]:
    with EpicsAdapter(nats_server.url, ioc, []).start() as running:  # on demand only
        yield running


def run_script(nats_server: NatsServer, tmp_path: Path, *args: str) -> Process:
    script = tmp_path / "setpoint.py"
    script.write_text(
        block("#### From Python: write a value and wait for its readback", "python"),
        encoding="utf-8",
    )
    return Process(
        "setpoint", [sys.executable, str(script), *args],
        env={"SYNOPTIC_NATS_URL": nats_server.url},
    )  # fmt: skip


def test_the_python_example_writes_and_sees_the_readback(
    nats_server: NatsServer, ioc: SimIoc, adapter: EpicsAdapter, tmp_path: Path
) -> None:
    script = run_script(nats_server, tmp_path, ioc.uri("SP"), "12.5")
    try:
        script.wait_for(rf"^{re.escape(ioc.uri('SP'))} is now 12\.5 sev 0$", 60)
        assert script.popen.wait(30) == 0
    finally:
        script.stop()
    assert ca_client(ioc, "get", ioc.pv("SP")) == 12.5  # the IOC really has it


def test_the_python_example_says_when_nobody_owns_the_channel(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    script = run_script(nats_server, tmp_path, "tango://nowhere:10000/a/b/c/d", "1")
    try:
        script.wait_for(r"tango://nowhere:10000/a/b/c/d: no adapter owns this", 60)
        assert script.popen.wait(30) == 1
    finally:
        script.stop()


async def test_the_history_example_prints_the_recent_values(
    nats_server: NatsServer, nc: NatsClient, tmp_path: Path
) -> None:
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    channel = parse_channel("ca://DOC:HISTORY")
    t_end = time.time_ns()
    for i in range(50):  # one value per second, the last one now
        t = t_end - (49 - i) * 1_000_000_000
        await nc.publish(
            Subjects().val(channel),
            encode_value(i * 0.5, t, 2 if i == 49 else 0, "", i + 1, 7, True),
        )
    js = nc.jetstream()
    async with asyncio.timeout(30):
        while (await js.stream_info("CS_HIST")).state.messages < 50:  # noqa: ASYNC110 - no event for a stream count
            await asyncio.sleep(0.05)
    gateway = start_gateway(nats_server.url)
    script = tmp_path / "history.py"
    script.write_text(
        block("#### From Python: the recent history of a channel", "python"),
        encoding="utf-8",
    )
    run = Process(
        "history", [sys.executable, str(script), gateway.ws_url, channel.uri, "10"]
    )
    try:
        run.wait_for(r"24\.5 sev 2$", 60)
        assert run.popen.wait(30) == 0
        lines = run.output().splitlines()
        assert len(lines) == 50  # fewer than 2 points per pixel: every value
        assert lines[0].endswith(" 0.0 sev 0")
        assert all(re.fullmatch(r"\d\d:\d\d:\d\d \S+ sev \d", line) for line in lines)
    finally:
        run.stop()
        gateway.stop()


def test_the_import_example_prints_the_report_shown(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    heading = "### Import Phoebus, CS-Studio and Taranta screens"
    command = shlex.split(block(heading, "sh").strip())
    shown = [
        line for line in block(heading, "text").splitlines() if line.strip() != "…"
    ]
    assert command[:3] == ["synoptic", "screens", "import"]
    corpus = Path(__file__).parents[2] / "importer" / "tests" / "corpus"
    env = {**os.environ, "SYNOPTIC_NATS_URL": nats_server.url}
    exe = Path(sys.executable).parent / "synoptic"
    init = [str(exe), "bus", "init", "--screens", str(tmp_path)]
    subprocess.run(init, env=env, check=True, capture_output=True, timeout=60)
    run = subprocess.run(
        [str(exe), *command[1:]],
        env=env, cwd=corpus, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = re.sub(r"revision \d+", "revision N", run.stdout).splitlines()
    shown = [re.sub(r"revision \d+", "revision N", line) for line in shown]
    assert [line for line in shown if line not in lines] == [], run.stdout
