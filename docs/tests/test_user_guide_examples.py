"""The user guide's examples work: the Python write script against a real
nats-server, simulated IOC and EPICS adapter; the screen file against the screen
schema; the adapter configurations against the adapters' configuration loader."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_adapters.config import parse_config
from synoptic_adapters.testing import EpicsAdapter, SimIoc, ca_client
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
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
    ],
)
def test_the_adapter_configurations_load(heading: str, proto: str) -> None:
    config = parse_config(block(heading, "yaml"), proto, source="user-guide.md")
    assert config.id and config.channels
    assert all(channel.proto == proto for channel in config.channels)


@pytest.fixture(scope="module")
def ioc() -> Iterator[SimIoc]:
    sim = SimIoc(records=1).start()
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture(scope="module")
def adapter(nats_server: NatsServer, ioc: SimIoc) -> Iterator[EpicsAdapter]:
    running = EpicsAdapter(nats_server.url, ioc, []).start()  # on demand only
    try:
        yield running
    finally:
        running.close()


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
