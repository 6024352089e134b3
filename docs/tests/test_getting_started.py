"""docs/getting-started.md, step by step, as written: the demo (`synoptic demo`,
which `make demo` runs, on ports of the test's own), a soft IOC from the page's
database, the demo reaching it through `EPICS_CA_ADDR_LIST`, `synoptic get` of
the demo's and the IOC's PVs, the page's screen imported with `synoptic screens
import`, served by the gateway and showing the IOC's values live."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_adapters.sim.epics_ioc import ca_environment
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_gateway.client import GatewayClient, Subscription
from synoptic_schemas.jsonschemas import validator

pytestmark = pytest.mark.system

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
BIN = Path(sys.executable).parent


def step(heading: str) -> list[tuple[str, str]]:
    """The code blocks (language, text) of one ``## N. …`` section, in order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


async def fetch(url: str) -> bytes:
    """GET ``url`` (off the event loop)."""

    def get() -> bytes:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read()

    return await asyncio.to_thread(get)


def blocks(heading: str, lang: str) -> list[str]:
    return [body for kind, body in step(heading) if kind == lang]


def run(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """A shell line of the page: ``.venv/bin/X`` is this environment's X."""
    argv = shlex.split(line.split("#")[0])
    argv[0] = str(BIN / Path(argv[0]).name) if argv[0].startswith(".venv/") else argv[0]
    return subprocess.run(
        argv, env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """A folder the demo's PostgreSQL (run as ``postgres``) can reach."""
    path = Path(tempfile.mkdtemp(prefix="synoptic-start-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_make_demo_is_synoptic_demo() -> None:
    """Step 1's `make demo` installs, builds the UI, then runs `synoptic demo`
    (what the test below runs, with ports of its own)."""
    (first,) = blocks("1. Start the demo", "sh")[:1]
    assert first.strip() == "make demo"
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "$(VENV)/bin/synoptic demo" in recipe


@pytest.mark.timeout(1200)
async def test_from_the_demo_to_your_ioc_on_your_screen(var_dir: Path) -> None:
    work = var_dir / "reader"
    work.mkdir()
    # step 2: the page's database, run as the page runs it (on a free CA port:
    # the page's IOC serves the standard 5064)
    (db,) = blocks("2. Your IOC", "text")
    (work / "my-ioc.db").write_text(db)
    (ioc_line,) = blocks("2. Your IOC", "sh")
    ioc_port = free_udp_tcp_port()
    ioc_argv = shlex.split(ioc_line)
    assert ioc_argv[:3] == [".venv/bin/python", "-m", "epicscorelibs.ioc"]
    ioc = Process(
        "my-ioc", [sys.executable, *ioc_argv[1:]], cwd=work,
        env=ca_environment(ioc_port), keep_stdin_open=True,
    )  # fmt: skip
    # step 3: the demo, with the IOC in EPICS_CA_ADDR_LIST
    restart, get_mine = blocks("3. Let the demo reach your IOC", "sh")
    assignment, make = restart.strip().split(" ", 1)
    assert make == "make demo"
    name, address = assignment.split("=")
    assert (name, address) == ("EPICS_CA_ADDR_LIST", "127.0.0.1")
    nats_port, http = free_port(), free_port()
    demo = Process(
        "demo",
        [sys.executable, "-m", "synoptic_bus.cli", "demo", "--var", str(var_dir / "var"),
         "--nats-port", str(nats_port), "--http-port", str(http),
         "--tango-port", str(free_udp_tcp_port())],
        env={name: f"{address}:{ioc_port}"},
    )  # fmt: skip
    env = {"SYNOPTIC_NATS_URL": f"nats://127.0.0.1:{nats_port}"}
    try:
        await asyncio.to_thread(ioc.wait_for, r"All initialization complete", 60)
        await asyncio.to_thread(demo.wait_for, r"demo running", 540)

        # step 1: the UI, the screen list, a value from a shell
        base = f"http://127.0.0.1:{http}"
        assert b"<html" in (await fetch(f"{base}/")).lower()
        titles = {
            s["name"]: s["title"]
            for s in json.loads(await fetch(f"{base}/api/screens"))
        }
        assert titles.get("counters") == "Counters"
        got = run(blocks("1. Start the demo", "sh")[1], env, work)
        assert got.returncode == 0, got.stdout + got.stderr
        assert "ca://DEMO:SINE = " in got.stdout and "  meta {" in got.stdout

        # step 3: the reader's PV from a shell (asked for on demand)
        got = run(get_mine, env, work)
        assert got.returncode == 0, got.stdout + got.stderr
        assert re.search(r"ca://MY:COUNTER = \d+(\.0)? counts sev=0", got.stdout)

        # step 4: the page's screen, imported, served, live
        screen_text, *_ = blocks("4. Your screen", "json")
        screen = json.loads(screen_text)
        validator("screen").validate(screen)
        (work / "my-screen.json").write_text(screen_text)
        (line,) = blocks("4. Your screen", "sh")
        (shown,) = blocks("4. Your screen", "text")
        got = run(line, env, work)
        assert got.returncode == 0, got.stdout + got.stderr
        assert re.sub(r"\d+$", "N", got.stdout.strip()) == re.sub(
            r"\d+$", "N", shown.strip()
        )
        mine = json.loads(await fetch(f"{base}/api/screens/my-screen"))
        assert mine["title"] == "My IOC"
        uris = sorted({u for w in screen["widgets"] for u in w.get("channels", [])})
        async with GatewayClient(f"ws://127.0.0.1:{http}/ws") as client:
            sub = await client.subscribe(uris)
            first = await counted(sub, 0)
            await counted(sub, first + 2)  # counting, once a second
            setpoint = sub.value("ca://MY:SETPOINT")
            assert (setpoint["v"], setpoint["sev"], setpoint["c"]) == (2.5, 0, True)
            assert sub.meta("ca://MY:SETPOINT")["unit"] == "V"
            assert sub.meta("ca://MY:COUNTER")["unit"] == "counts"
            assert sub.stale_channels == []
    finally:
        demo.stop(30)
        ioc.stop()


async def counted(sub: Subscription, at_least: int) -> int:
    """Wait until the IOC's counter is live and at least ``at_least``."""

    def count() -> int:
        value = sub.value("ca://MY:COUNTER")
        return (
            int(value["v"]) if value and value["c"] and value["v"] is not None else -1
        )

    await sub.wait_for(lambda _: count() >= at_least, 60)
    return count()
