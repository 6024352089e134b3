"""``synoptic bus init`` seeding and ``synoptic screens …`` as real processes
against a real nats-server."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from test_cli import run_cli

from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port

pytestmark = pytest.mark.system

SCREEN = {"title": "CLI", "widgets": [{"type": "label", "channels": ["ca://A"]}]}


async def test_init_seeds_and_screens_round_trip(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    bucket = f"cli{secrets.token_hex(3)}"
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "panel.json").write_text(json.dumps(SCREEN))
    init = ["bus", "init", "--screens", str(seed), "--screens-bucket", bucket]
    first = await run_cli(nats_server, *init)
    assert first.returncode == 0, first.stderr
    assert "seeded 1 screen(s)" in first.stdout
    again = await run_cli(nats_server, *init)
    assert "seeded 0 screen(s)" in again.stdout and "1 already present" in again.stdout

    b = ["--bucket", bucket]
    listed = await run_cli(nats_server, "screens", "list", "--json", *b)
    assert [(e["name"], e["by"], e["title"]) for e in json.loads(listed.stdout)] == [
        ("panel", "seed", "CLI")
    ]
    got = await run_cli(nats_server, "screens", "get", "panel", *b)
    assert json.loads(got.stdout) == SCREEN

    edited = tmp_path / "panel.json"
    edited.write_text(json.dumps({**SCREEN, "title": "Edited"}))
    put = await run_cli(nats_server, "screens", "put", "panel", str(edited),
                        "--by", "alice", "-m", "retitle", *b)  # fmt: skip
    assert put.returncode == 0 and "saved panel revision" in put.stdout, put.stderr
    stale = await run_cli(nats_server, "screens", "put", "panel", str(edited),
                          "--base", "1", *b)  # fmt: skip
    assert stale.returncode == 1 and "by alice" in stale.stderr

    history = await run_cli(nats_server, "screens", "history", "panel", "--json", *b)
    revs = json.loads(history.stdout)
    assert [(r["by"], r["summary"]) for r in revs] == [
        ("alice", "retitle"), ("seed", "seeded from panel.json")
    ]  # fmt: skip
    first_rev = str(revs[-1]["revision"])
    reverted = await run_cli(nats_server, "screens", "revert", "panel", first_rev, *b)
    assert reverted.returncode == 0, reverted.stderr
    out = tmp_path / "out"
    exported = await run_cli(nats_server, "screens", "export", "--dir", str(out), *b)
    assert exported.returncode == 0
    assert json.loads((out / "panel.json").read_text()) == SCREEN

    (out / "panel.json").write_text(json.dumps({**SCREEN, "title": "From git"}))
    (out / "second.json").write_text(json.dumps(SCREEN))
    files = [str(out / "panel.json"), str(out / "second.json")]
    imported = await run_cli(nats_server, "screens", "import", *files, *b)
    assert imported.stdout.count("imported") == 2, imported.stderr
    unchanged = await run_cli(nats_server, "screens", "import", *files, *b)
    assert unchanged.stdout.count("unchanged") == 2

    deleted = await run_cli(nats_server, "screens", "delete", "second", *b)
    assert deleted.returncode == 0
    missing = await run_cli(nats_server, "screens", "get", "second", *b)
    assert missing.returncode == 1 and "no screen 'second'" in missing.stderr


async def test_bad_input_is_refused_clearly(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    bucket = f"bad{secrets.token_hex(3)}"
    await run_cli(nats_server, "bus", "init", "--screens", str(tmp_path),
                  "--screens-bucket", bucket)  # fmt: skip
    b = ["--bucket", bucket]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"title": "x", "widgets": [{"type": "dial"}]}))
    invalid = await run_cli(nats_server, "screens", "put", "x", str(bad), *b)
    assert invalid.returncode == 1
    assert "/widgets/0/type" in invalid.stderr
    bad.write_bytes(b"\xff\xfe")
    utf = await run_cli(nats_server, "screens", "put", "x", str(bad), *b)
    assert utf.returncode == 1 and "not UTF-8" in utf.stderr
    name = await run_cli(nats_server, "screens", "get", "a.b", *b)
    assert name.returncode == 1 and "invalid screen name" in name.stderr
    absent = await run_cli(nats_server, "screens", "list", "--bucket", "absent")
    assert absent.returncode == 3 and "does not exist" in absent.stderr
    down = NatsServer(port=free_port())
    result = await run_cli(down, "screens", "list")
    assert result.returncode == 3 and "not reachable" in result.stderr
    assert "Traceback" not in invalid.stderr + utf.stderr + name.stderr + result.stderr
