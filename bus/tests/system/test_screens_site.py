"""``synoptic screens import FOLDER`` (and a zip) against a real nats-server: a
display set becomes linked screens with its report; importing it again writes
only what changed; a screen edited in the browser since is kept unless told to
overwrite; a dry run writes nothing; a refused file does not stop the others."""

from __future__ import annotations

import json
import secrets
import shutil
import zipfile
from pathlib import Path

import pytest
from test_cli import run_cli
from test_screens_cli import fresh_bucket

from synoptic_bus import screens as screens_module
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.screens import ScreenBucket, ScreensConfig
from synoptic_bus.sitestore import counts, store_site, unchanged_set
from synoptic_importer.site import import_site, plan_set
from synoptic_schemas.screens import ScreenInvalidError

pytestmark = pytest.mark.system


def display(body: str, macros: str = "", name: str = "D") -> str:
    return (f'<display version="2.0.0"><name>{name}</name><macros>{macros}</macros>'
            f"<width>300</width><height>200</height>{body}</display>")  # fmt: skip


def button(path: str, macros: str = "") -> str:
    return (f'<widget type="action_button"><text>{path}</text><actions><action '
            f'type="open_display"><file>{path}</file><macros>{macros}</macros>'
            "</action></actions></widget>")  # fmt: skip


def value(pv: str) -> str:
    return f'<widget type="textupdate"><pv_name>{pv}</pv_name></widget>'


def write_set(root: Path) -> Path:
    (root / "sect").mkdir(parents=True)
    (root / "main.bob").write_text(display(button("sect/sector.bob", "<S>01</S>"),
                                           "<P>SR:</P>", "Ring"))  # fmt: skip
    (root / "sect" / "sector.bob").write_text(display(value("$(P)$(S):I")
                                                      + button("../dev.opi", "<D>q1</D>")))  # fmt: skip
    (root / "dev.opi").write_text(
        '<display typeId="org.csstudio.opibuilder.Display" version="1.0.0"><width>90'
        '</width><widget typeId="org.csstudio.opibuilder.widgets.TextUpdate" '
        'version="1.0.0"><pv_name>$(P)$(D) {"longString":true}</pv_name></widget>'
        "</display>"
    )
    (root / "notes.txt").write_text("not a display")
    return root


@pytest.mark.timeout(600)  # a dozen command runs, each a Python start
async def test_a_folder_imports_as_linked_screens_and_again_only_what_changed(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    b = await fresh_bucket(nats_server, tmp_path / "empty")
    ring = write_set(tmp_path / "ring")
    first = await run_cli(
        nats_server, "screens", "import", str(ring), "--by", "bob", *b
    )
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "set ring: 3 screens, 0 files refused; home ring--main" in out
    assert "links: 2 resolved inside the set" in out
    assert "created ring--main revision" in out and "(3 created)" in out
    got = json.loads(
        (await run_cli(nats_server, "screens", "get", "ring--main", *b)).stdout
    )
    assert got["widgets"][0]["options"] == {"screen": "ring--sect--sector",
                                            "macros": {"P": "SR:", "S": "01"}}  # fmt: skip
    dev = json.loads(
        (await run_cli(nats_server, "screens", "get", "ring--dev", *b)).stdout
    )
    assert dev["widgets"][0]["options"]["long_string"] is True

    again = await run_cli(nats_server, "screens", "import", str(ring), "--report",
                          "json", *b)  # fmt: skip
    same = json.loads(again.stdout)
    assert same["counts"] == {"unchanged": 3} and same["converted"] is False, same
    text = await run_cli(nats_server, "screens", "import", str(ring), *b)
    assert "3 screens unchanged since their import" in text.stdout, text.stdout

    sector = ring / "sect" / "sector.bob"
    sector.write_text(sector.read_text().replace("$(S):I", "$(S):CURRENT"))
    changed = await run_cli(nats_server, "screens", "import", str(ring), "--report",
                            "json", *b)  # fmt: skip
    result = json.loads(changed.stdout)
    assert result["converted"] is True
    assert result["counts"] == {"updated": 1, "unchanged": 2}
    (updated,) = [s for s in result["screens"] if s["action"] == "updated"]
    assert (
        updated["name"] == "ring--sect--sector" and updated["file"] == "sect/sector.bob"
    )
    history = await run_cli(nats_server, "screens", "history", "ring--sect--sector",
                            "--json", *b)  # fmt: skip
    assert len(json.loads(history.stdout)) == 2  # one revision for the change

    # edited in the browser since: kept, unless told to overwrite
    nc = await connect(nats_server.url, name="test-site-edit")
    try:
        bucket = await ScreenBucket.open(nc, ScreensConfig(b[1]))
        current = await bucket.get("ring--main")
        assert current.screen is not None
        edited = {**current.screen, "title": "Ring (edited)"}
        await bucket.put("ring--main", edited, current.revision, "alice", "retitle")
    finally:
        await nc.close()
    (ring / "main.bob").write_text(display(button("sect/sector.bob", "<S>02</S>"),
                                           "<P>SR:</P>", "Ring"))  # fmt: skip
    kept = await run_cli(nats_server, "screens", "import", str(ring), *b)
    assert (
        "kept ring--main" in kept.stdout
        and "edited since its import by alice" in kept.stdout
    )
    title = json.loads(
        (await run_cli(nats_server, "screens", "get", "ring--main", *b)).stdout
    )
    assert title["title"] == "Ring (edited)"
    dry = await run_cli(nats_server, "screens", "import", str(ring), "--overwrite",
                        "--dry-run", *b)  # fmt: skip
    assert (
        "would be updated ring--main" in dry.stdout and "nothing written" in dry.stdout
    )
    forced = await run_cli(
        nats_server, "screens", "import", str(ring), "--overwrite", *b
    )
    assert "updated ring--main" in forced.stdout, forced.stdout
    title = json.loads(
        (await run_cli(nats_server, "screens", "get", "ring--main", *b)).stdout
    )
    assert title["title"] == "Ring"


@pytest.mark.timeout(300)
async def test_a_zip_imports_as_a_set_and_a_refused_file_does_not_stop_the_others(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    b = await fresh_bucket(nats_server, tmp_path / "empty")
    ring = write_set(tmp_path / "linac")
    (ring / "broken.bob").write_text("<display><widget></display>")
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(ring.rglob("*")):
            z.write(path, Path("linac") / path.relative_to(ring))
    shutil.rmtree(ring)
    run = await run_cli(nats_server, "screens", "import", str(archive), *b)
    assert run.returncode == 1  # a file refused
    assert "refused     broken.bob:1: malformed XML" in run.stdout
    assert "(3 created)" in run.stdout
    listed = await run_cli(nats_server, "screens", "list", "--json", *b)
    assert sorted(e["name"] for e in json.loads(listed.stdout)) == [
        "linac--dev", "linac--main", "linac--sect--sector"]  # fmt: skip
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../escape.bob", "<display/>")
    refused = await run_cli(nats_server, "screens", "import", str(evil), *b)
    assert refused.returncode == 1 and "leaves the set" in refused.stderr


async def test_an_imported_set_is_validated_once_and_an_unchanged_one_not_converted(
    nc: NatsClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store writes the screens the importer validated without validating
    them again (any other write still is); a set stored as converting it again
    would make it is told without converting it, and not once one of its
    screens is edited."""
    bucket = await ScreenBucket.ensure(nc, ScreensConfig(f"t{secrets.token_hex(4)}"))
    files = {p.relative_to(tmp_path / "ring").as_posix(): p.read_bytes()
             for p in write_set(tmp_path / "ring").rglob("*") if p.is_file()}  # fmt: skip
    site = import_site(files, "ring")
    calls: list[object] = []
    real = screens_module.validate_screen

    def counted(screen: object) -> object:
        calls.append(screen)
        return real(screen)

    monkeypatch.setattr(screens_module, "validate_screen", counted)
    plan = plan_set(files, "ring")
    assert await unchanged_set(bucket, plan) is None  # nothing stored yet
    assert counts(await store_site(bucket, site, "bob")) == {"created": 3}
    assert calls == []
    with pytest.raises(ScreenInvalidError):
        await bucket.put("hand-made", {"widgets": "no"}, 0, "bob")
    assert len(calls) == 1

    same = await unchanged_set(bucket, plan)
    assert same is not None and counts(same) == {"unchanged": 3}
    stored = await bucket.get("ring--main")
    assert stored.screen == next(s.screen for s in site.screens
                                 if s.name == "ring--main")  # fmt: skip
    assert stored.screen is not None
    edited = {**stored.screen, "title": "Ring (edited)"}
    await bucket.put("ring--main", edited, stored.revision, "alice")
    assert await unchanged_set(bucket, plan) is None
