"""A set of displays imported as one linked site: Phoebus's path rules, screen
names, links carrying macros, embedded displays inlined, the home screen, the
site report, and the digest that tells an edited screen."""

from __future__ import annotations

import gc
import hashlib
import json
import weakref
from pathlib import Path
from xml.etree.ElementTree import Element

import pytest

from synoptic_importer import display as display_module
from synoptic_importer import import_screen
from synoptic_importer.collect import DEFERRED, full_collections_deferred
from synoptic_importer.display import DisplayImporter
from synoptic_importer.paths import SetContext, combine
from synoptic_importer.site import (
    digest,
    edited_since_import,
    import_site,
    name_for,
    plan_set,
    screen_names,
    set_name,
    stored_source,
    unchanged,
)
from synoptic_importer.xmlutil import parse_xml
from synoptic_schemas.screens import (
    decode_stored,
    encode_valid,
    make_rev,
    validate_screen,
)

REALWORLD = Path(__file__).resolve().parents[1] / "realworld/sets"


def display(body: str, macros: str = "", name: str = "D") -> bytes:
    return (f'<display version="2.0.0"><name>{name}</name><macros>{macros}</macros>'
            f"<width>300</width><height>200</height>{body}</display>").encode()  # fmt: skip


def button(path: str, macros: str = "", target: str = "") -> str:
    return (f'<widget type="action_button"><text>to {path}</text><actions>'
            f'<action type="open_display"><file>{path}</file><macros>{macros}</macros>'
            f"{target}</action></actions></widget>")  # fmt: skip


def value(pv: str) -> str:
    return f'<widget type="textupdate"><pv_name>{pv}</pv_name></widget>'


def test_paths_resolve_like_phoebus() -> None:
    assert combine("a/b/main.bob", "../c/x.bob") == "a/c/x.bob"
    assert combine("a/main.bob", "sub\\x.opi") == "a/sub/x.opi"
    assert combine("a/main.bob", "/abs/x.bob") == "/abs/x.bob"
    files = {"top.bob": b"", "a/x.bob": b"", "a/x.opi": b"", "a/y.opi": b"",
             "b/Z.opi": b"", "b/deep/w.bob": b""}  # fmt: skip
    ctx = SetContext(files, {})
    assert ctx.find("a/main.opi", "x.opi") == "a/x.bob"  # an updated .bob wins
    assert ctx.find("a/main.opi", "y.opi") == "a/y.opi"
    assert ctx.find("b/k.opi", "../a/y.opi") == "a/y.opi"
    assert ctx.find("top.bob", "/CSS/opi/b/deep/w.bob") == "b/deep/w.bob"  # by its tail
    assert ctx.find("b/k.opi", "z.opi") == "b/Z.opi"  # written on Windows
    assert ctx.find("top.bob", "../../etc/passwd") is None
    assert ctx.find("top.bob", "https://x/y.bob") is None


def test_screen_names_are_unique_and_valid() -> None:
    names = screen_names(["a/x.bob", "a/x.opi", "b c/ü.opi", "top.bob"], "My set")
    assert names == {"a/x.bob": "My_set--a--x", "a/x.opi": "My_set--a--x-opi",
                     "b c/ü.opi": "My_set--b_c--_", "top.bob": "My_set--top"}  # fmt: skip
    assert set_name(" ../odd name ") == "odd_name"
    long = screen_names(["d/" + "n" * 200 + ".bob"], "s")["d/" + "n" * 200 + ".bob"]
    assert len(long) == 128


def test_a_set_becomes_linked_screens_passing_macros() -> None:
    files = {
        "main.bob": display(button("sect/sector.bob", "<S>01</S>") + value("$(P)TOP"),
                            "<P>SR:</P>", "Main"),
        "sect/sector.bob": display(button("../dev/device.opi", "<D>$(S)-q1</D>",
                                          "<target>tab</target>") + value("$(P)$(S):I")),
        "dev/device.bob": display(value("$(P)$(D):X") + button("$(KIND).bob")),
        "dev/device.opi": display(""),
        "notes.txt": b"not a display",
        "broken.bob": b"<display><widget></display>",
    }  # fmt: skip
    site = import_site(files, "ring")
    by_file = {site.files[s.name]: s for s in site.screens}
    assert set(by_file) == {
        "main.bob",
        "sect/sector.bob",
        "dev/device.bob",
        "dev/device.opi",
    }
    assert [(r.file, r.line) for r in site.refused] == [("broken.bob", 1)]
    assert site.home == "ring--main"
    main = by_file["main.bob"].screen
    link = main["widgets"][0]
    assert link["options"] == {
        "screen": "ring--sect--sector",
        "macros": {"P": "SR:", "S": "01"},
    }
    assert main["source"] == {"set": "ring", "file": "main.bob", "home": True,
                              "digest": digest(main),
                              "inputs": main["source"]["inputs"]}  # fmt: skip
    sector = by_file["sect/sector.bob"].screen
    assert sector["widgets"][1]["channels"] == ["ca://$(P)$(S):I"]  # from the opener
    device_link = sector["widgets"][0]["options"]
    assert device_link == {"screen": "ring--dev--device", "target": "tab",
                           "macros": {"D": "$(S)-q1"}}  # fmt: skip
    device = by_file["dev/device.bob"].screen
    # a link whose file its opener names: the set's name with the macro kept
    assert device["widgets"][1]["options"]["screen"] == "ring--dev--$(KIND)"
    report = site.report().as_dict()
    assert report["links"]["resolved"] == 2 and report["links"]["at_open"] == 1
    assert report["refused"] == [{"file": "broken.bob", "line": 1,
                                  "reason": report["refused"][0]["reason"]}]  # fmt: skip
    assert report["channels"] == {"ca": 3}
    assert report["macros"] == {"P": 2, "S": 1, "D": 1, "KIND": 1}
    text = site.report().text()
    assert "refused     broken.bob:1: malformed XML" in text
    assert "links: 2 resolved inside the set, 1 named by the opener's macros" in text


def test_embedded_displays_of_the_set_are_inlined_and_their_actions_link() -> None:
    row = display(value("$(P)$(N):V") + button("detail.bob", "<N>$(N)</N>"))
    files = {
        "rows/row.bob": row,
        "rows/detail.bob": display(value("$(P)$(N):D")),
        "panel.bob": display(
            '<widget type="embedded"><file>rows/row.bob</file><macros><N>7</N></macros>'
            "<x>10</x><y>20</y><width>300</width><height>30</height></widget>",
            "<P>LI:</P>"),
    }  # fmt: skip
    site = import_site(files, "linac")
    panel = next(s for s in site.screens if s.name == "linac--panel").screen
    section, label, link = panel["widgets"]
    assert section["type"] == "section" and label["channels"] == ["ca://LI:7:V"]
    # resolved from the embedded file's folder, as Phoebus does
    assert link["options"] == {"screen": "linac--rows--detail",
                               "macros": {"P": "LI:", "N": "7"}}  # fmt: skip


def test_the_home_is_the_screen_that_reaches_the_most_without_a_home_name() -> None:
    files = {"leaf.bob": display(""), "hub.bob": display(button("mid.bob")),
             "mid.bob": display(button("leaf.bob"))}  # fmt: skip
    assert import_site(files, "s").home == "s--hub"
    assert import_site(files, "s", home="mid.bob").home == "s--mid"


def test_an_edit_after_import_is_told_by_the_digest() -> None:
    site = import_site({"a.bob": display(value("X"))}, "s")
    screen = json.loads(json.dumps(site.screens[0].screen))
    assert not edited_since_import(screen)
    screen["widgets"][0]["box"]["x"] += 5
    assert edited_since_import(screen)
    assert not edited_since_import({"title": "hand made", "widgets": []})


def test_phoebus_s_own_swap_example_shows_what_phoebus_shows() -> None:
    """examples/macros/swap.bob, as Phoebus ships it: a group swaps A and B."""
    root = REALWORLD / "phoebus-examples"
    files = {"macros/swap.bob": (root / "macros/swap.bob").read_bytes()}
    (screen,) = [s.screen for s in import_site(files, "examples").screens]
    texts = [w["options"]["text"] for w in screen["widgets"] if w["type"] == "text"]
    assert texts == ["Macro Swap Example", "On top level, A=a and B=b",
                     "Inside group, A=b and B=a\n..  and X=a"]  # fmt: skip


@pytest.mark.parametrize("name", ["adcore-opi", "phoebus-examples"])
def test_a_set_s_shared_parses_and_reads_change_nothing(name: str) -> None:
    """A set shares parsed trees and what is read from them across its
    displays: each display imported alone, with nothing shared, is the same
    screen, byte for byte, with the same report."""
    root = REALWORLD / name
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip
    site = import_site(files, name)
    names = screen_names(list(site.files.values()), name)
    for imported in site.screens:
        path = site.files[imported.name]
        alone = SetContext(files, names, name_rule=lambda p: name_for(p, name))
        one = import_screen(files[path], path, context=alone)
        shared = {k: v for k, v in imported.screen.items() if k != "source"}
        assert json.dumps(one.screen) == json.dumps(shared), path
        assert one.report.as_dict() == imported.report.as_dict(), path


def test_a_display_embedded_before_its_own_import_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[str] = []

    def counted(data: bytes, file: str) -> Element:
        parsed.append(file)
        return parse_xml(data, file)

    monkeypatch.setattr(display_module, "parse_xml", counted)
    files = {"a.bob": display('<widget type="embedded"><file>b.bob</file>'
                              "<width>300</width><height>30</height></widget>"),
             "b.bob": display(value("B"))}  # fmt: skip
    site = import_site(files, "s")
    assert parsed == ["a.bob", "b.bob"]  # b.bob's tree used again for its screen
    assert [w["channels"] for w in site.screens[1].screen["widgets"]] == [["ca://B"]]


def test_a_display_s_tree_is_freed_once_converted() -> None:
    """No reference cycle keeps a converted display's elements: a set's
    import does not wait for the collector to free each display's tree."""
    data = display(value("A") + '<widget type="group">' + value("B") + "</widget>")
    files = {"a.bob": data}
    root = parse_xml(data, "a.bob")
    importer = DisplayImporter("a.bob", "bob", {},
                               SetContext(files, screen_names(list(files), "s")))  # fmt: skip
    importer.convert(root)
    elements = [weakref.ref(el) for el in root.iter()]
    gc.disable()
    try:
        del root, importer
        assert [el() for el in elements] == [None] * len(elements)
    finally:
        gc.enable()


def test_full_collections_are_deferred_while_a_set_imports_and_restored() -> None:
    saved = gc.get_threshold()
    with full_collections_deferred():
        assert gc.get_threshold()[2] >= DEFERRED
        with full_collections_deferred():  # another import meanwhile
            assert gc.get_threshold()[2] >= DEFERRED
        assert gc.get_threshold()[2] >= DEFERRED
    assert gc.get_threshold() == saved
    with pytest.raises(ValueError), full_collections_deferred():
        raise ValueError("a failed import")
    assert gc.get_threshold() == saved


def test_the_digest_is_of_the_content_s_canonical_json_as_stored_before() -> None:
    """A screen imported earlier keeps its digest: sha256 of its content (its
    source left out) as sorted, compact JSON, however the import computes it."""
    root = REALWORLD / "phoebus-examples"
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.glob("*.bob"))}  # fmt: skip
    for imported in import_site(files, "examples").screens:
        body = {k: v for k, v in imported.screen.items() if k != "source"}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)  # fmt: skip
        expected = hashlib.sha256(text.encode()).hexdigest()[:32]
        assert imported.screen["source"]["digest"] == expected == digest(body)


def test_each_screen_names_its_inputs_and_is_stored_as_validated_once() -> None:
    """A screen's ``source.inputs`` changes with its file or a file its
    conversion read (an embedded display), the set's file names, the options;
    not with another screen's file. Its stored JSON is the screen itself."""
    files = {
        "panel.bob": display('<widget type="embedded"><file>row.bob</file></widget>'),
        "row.bob": display(value("R")),
        "other.bob": display(value("O")),
    }
    site = import_site(files, "s")
    by_file = {site.files[s.name]: s.screen for s in site.screens}
    assert by_file["panel.bob"]["source"]["reads"] == ["row.bob"]
    assert "reads" not in by_file["other.bob"]["source"]
    for imported in site.screens:
        text = site.encoded[imported.name]
        assert json.loads(text) == imported.screen
        validate_screen(json.loads(text))
        data = encode_valid(text, make_rev("bob", "import"))
        assert decode_stored(data)[0] == imported.screen
        assert stored_source(data) == imported.screen["source"]
        path = site.files[imported.name]
        assert unchanged(plan_set(files, "s"), path, imported.screen["source"])

    def inputs(changed: dict[str, bytes], **options: str) -> dict[str, bool]:
        plan = plan_set({**files, **changed}, "s", **options)  # type: ignore[arg-type]
        return {f: unchanged(plan, f, by_file[f]["source"]) for f in sorted(by_file)}

    assert inputs({"row.bob": display(value("R2"))}) == {
        "other.bob": True,
        "panel.bob": False,
        "row.bob": False,
    }
    assert inputs({"other.bob": display(value("O2"))}) == {
        "other.bob": False,
        "panel.bob": True,
        "row.bob": True,
    }
    assert set(inputs({"new.bob": display("")}).values()) == {False}
    assert set(inputs({}, tango_host="t:1").values()) == {False}
    assert set(inputs({}).values()) == {True}


def test_a_stored_screen_edited_or_written_otherwise_is_not_as_imported() -> None:
    site = import_site({"a.bob": display(value("X"))}, "s")
    (imported,) = site.screens
    rev = make_rev("bob")
    data = encode_valid(site.encoded[imported.name], rev)
    assert stored_source(data) is not None
    edited = data.replace(b'"ca://X"', b'"ca://Y"')
    assert stored_source(edited) is None
    other_order = json.dumps({**imported.screen, "_rev": rev.as_dict()}).encode()
    assert stored_source(other_order) is None
    assert stored_source(b"{}") is None and stored_source(b"not json") is None
