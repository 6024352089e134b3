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

CORPUS = Path(__file__).resolve().parents[3] / "importer" / "tests" / "corpus"
SCREEN = {"title": "CLI", "widgets": [{"type": "label", "channels": ["ca://A"]}]}


async def fresh_bucket(nats_server: NatsServer, empty: Path) -> list[str]:
    """A new bucket made by ``bus init`` (seeded from an empty folder); the
    ``--bucket`` arguments that name it."""
    bucket = f"t{secrets.token_hex(4)}"
    await run_cli(nats_server, "bus", "init", "--screens", str(empty),
                  "--screens-bucket", bucket)  # fmt: skip
    return ["--bucket", bucket]


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
    b = await fresh_bucket(nats_server, tmp_path)
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


async def test_import_converts_bob_opi_wj_and_writes_nothing_on_bad_input(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    b = await fresh_bucket(nats_server, tmp_path)
    corpus = CORPUS
    names = ("vacuum.bob", "rf.opi", "tangotest.wj", "panel-canvas.bob")
    files = [str(corpus / n) for n in names]
    done = await run_cli(nats_server, "screens", "import", *files, "--macro", "S=SR09",
                         "--tango-host", "tcs:10000", "--report", "json", *b)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reports = [
        json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")
    ]
    assert [r["file"] for r in reports] == [
        "vacuum.bob",
        "rf.opi",
        "tangotest.wj",
        "panel-canvas.bob",
    ]
    assert reports[0]["placeholders"]["embedded"] == 1
    got = await run_cli(nats_server, "screens", "get", "vacuum", *b)
    screen = json.loads(got.stdout)
    assert screen["title"] == "SR09 vacuum"
    assert {
        "type": "text",
        "options": {"text": "Sector SR09 vacuum"},
    }.items() <= screen["widgets"][0].items()
    panel = json.loads(
        (await run_cli(nats_server, "screens", "get", "panel-canvas", *b)).stdout
    )  # rf.opi imported with it: embedded, not inlined
    embed = panel["widgets"][-1]
    assert (embed["type"], embed["options"]["screen"]) == ("embed", "rf")
    assert embed["options"]["resize"] == "fit"
    # the embed's own macro, with those in force where it sits (as Phoebus passes them)
    assert embed["options"]["macros"]["CAV"] == "2"
    assert embed["options"]["macros"]["S"] == "SR09"
    wj = json.loads(
        (await run_cli(nats_server, "screens", "get", "tangotest", *b)).stdout
    )
    assert (
        "tango://tcs:10000/sys/tg_test/1/double_scalar" in wj["widgets"][2]["channels"]
    )

    bomb = tmp_path / "bomb.bob"
    bomb.write_bytes(b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
                     b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><display>&b;</display>')  # fmt: skip
    refused = await run_cli(nats_server, "screens", "import", str(bomb), *b)
    assert refused.returncode == 1 and "bomb.bob: refused" in refused.stderr
    assert "Traceback" not in refused.stderr
    absent = await run_cli(nats_server, "screens", "get", "bomb", *b)
    assert absent.returncode == 1  # nothing written
    huge = tmp_path / "huge.opi"
    with huge.open("wb") as f:  # 50 MiB, sparse: refused before it is read
        f.truncate(50 * 1024 * 1024)
    too_big = await run_cli(nats_server, "screens", "import", str(huge), *b)
    assert (
        too_big.returncode == 1 and "huge.opi: 52428800 bytes exceed" in too_big.stderr
    )
