"""The importer (.bob, .opi, .wj → screen + coverage report): golden screens of
the corpus, macros, canvas boxes, styles, rules, links, browser-side channels,
and bad input refused with the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synoptic_importer import (
    ScreenImportError,
    folder_resolver,
    import_screen,
    parse_macro_args,
    screen_name,
)
from synoptic_importer.common import box, canvas_layout, convert_channel, expand
from synoptic_importer.rules import UnsupportedError, entries_of, parse
from synoptic_schemas.screens import validate_screen

HERE = Path(__file__).resolve().parents[1]
CORPUS = sorted(
    p for p in (HERE / "corpus").iterdir() if p.suffix in (".bob", ".opi", ".wj")
)
#: The corpus is imported as one batch: a display embedding another embeds it.
SIBLINGS = frozenset(screen_name(p.name) for p in CORPUS)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_matches_its_golden_screen_and_report(path: Path) -> None:
    imported = import_screen(path.read_bytes(), path.name, tango_host="tango-cs:10000",
                             siblings=SIBLINGS)  # fmt: skip
    golden = json.loads((HERE / "golden" / f"{path.name}.json").read_text())
    assert imported.screen == golden["screen"]
    assert imported.report.as_dict() == golden["report"]
    validate_screen(imported.screen)
    placeholders = [w for w in imported.screen["widgets"] if w["type"] == "placeholder"]
    assert len(placeholders) == sum(golden["report"]["placeholders"].values())
    for widget in placeholders:  # never dropped: type and size kept
        assert widget["options"]["original"] and widget["options"]["width_px"] > 0


def test_bob_macros_rules_scripts_and_groups() -> None:
    data = (HERE / "corpus" / "vacuum.bob").read_bytes()
    imported = import_screen(data, "vacuum.bob", macros={"S": "SR02"})
    channels = [c for w in imported.screen["widgets"] for c in w.get("channels", [])]
    assert "ca://SR02:VA:PRESSURE" in channels  # the command line's macro wins
    assert imported.screen["title"] == "SR02 vacuum"
    report = imported.report
    assert not any("rule 'alarm colour'" in s for s in report.skipped)  # mapped
    assert any("(not run)" in s for s in report.skipped)
    assert report.reasons["embedded"].startswith("embedded display neither found")
    group = next(w for w in imported.screen["widgets"] if w["type"] == "section")
    child = next(w for w in imported.screen["widgets"]
                 if w.get("channels") == ["ca://SR02:VA:G1"])  # fmt: skip
    assert group["box"]["x"] + 5 == child["box"]["x"]  # absolute: group offset added
    assert group["box"]["y"] + 5 == child["box"]["y"]
    assert child["rules"] == [{"channel": "ca://SR02:VA:G1", "op": ">", "value": 1e-6,
                               "set": {"bg": "#ff0000"}}]  # fmt: skip
    assert imported.screen["macros"] == {"S": "SR02", "P": "SR02:VA:"}


def test_a_display_s_own_macros_win_and_names_it_lacks_stay_for_the_opener() -> None:
    data = (HERE / "corpus" / "vacuum.bob").read_bytes()
    imported = import_screen(data, "vacuum.bob")
    # Phoebus: a display adds or replaces macros, over what its opener passes
    assert "macros" not in imported.screen
    assert imported.screen["title"] == "SR01 vacuum"
    channels = [c for w in imported.screen["widgets"] for c in w.get("channels", [])]
    assert "ca://SR01:VA:PRESSURE" in channels and "loc://gauge_mode(1)" in channels
    link = next(w for w in imported.screen["widgets"] if w["type"] == "link")
    # the opened display gets the source widget's macros (Phoebus passes them all)
    assert link["options"] == {"screen": "details", "target": "tab",
                               "macros": {"S": "SR01", "P": "SR01:VA:"}}  # fmt: skip
    opened = import_screen(_bob('<widget type="textupdate"><pv_name>$(P)X</pv_name>'
                                "</widget>", "<Q>$(P)Y</Q>"), "opened.bob")  # fmt: skip
    assert opened.screen["widgets"][0]["channels"] == ["ca://$(P)X"]  # the opener's P


def test_phoebus_macro_specs_expand_in_order_like_phoebus() -> None:
    """Phoebus's macros/swap.bob: a group swaps A and B through X."""
    swap = _bob(
        '<widget type="label"><text>Top A=$(A) B=$(B)</text></widget>'
        '<widget type="group"><macros><X>$(A)</X><A>$(B)</A><B>$(X)</B></macros>'
        '<widget type="label"><text>In A=$(A) B=$(B) X=$(X)</text></widget></widget>',
        "<A>a</A><B>b</B>",
    )
    texts = [w["options"]["text"] for w in import_screen(swap, "swap.bob").screen["widgets"]
             if w["type"] == "text"]  # fmt: skip
    assert texts == ["Top A=a B=b", "In A=b B=a X=a"]
    # the same without values: references to the opener's A and B, swapped
    bare = _bob(swap.decode().split("<widget", 1)[1].join(["<widget", ""]))
    group = import_screen(
        _bob('<widget type="group"><macros><X>$(A)</X><A>$(B)</A><B>$(X)</B></macros>'
             '<widget type="label"><text>$(A)|$(B)|$(X)</text></widget></widget>'),
        "s.bob",
    ).screen["widgets"][1]  # fmt: skip
    assert bare and group["options"]["text"] == "$(B)|$(A)|$(A)"
    # a macro naming itself, or two naming each other: no loop, the opener's value
    loop = import_screen(_bob("<widget type=\"label\"><text>$(A)</text></widget>",
                              "<A>$(B)</A><B>$(A)</B>"), "l.bob")  # fmt: skip
    assert loop.screen["widgets"][0]["options"]["text"] == "$(B)"
    # a property named by a reference no macro defines (Phoebus's $(pv_name))
    prop = import_screen(_bob('<widget type="textupdate"><name>N</name><pv_name>X:Y'
                              "</pv_name><tooltip>$(pv_name)</tooltip><text>$(name)</text>"
                              "</widget><widget type=\"label\"><text>$(DNAME)</text>"
                              "</widget>").replace(b"<width>", b"<name>Top</name><width>"),
                         "p.bob")  # fmt: skip
    assert prop.screen["widgets"][1]["options"]["text"] == "Top"


def test_canvas_styles_rules_links_tabs_and_embeds() -> None:
    data = (HERE / "corpus" / "panel-canvas.bob").read_bytes()
    alone = import_screen(data, "panel-canvas.bob")
    assert alone.screen["layout"] == {"type": "canvas", "width": 640, "height": 360,
                                      "background": "Read_Background"}  # fmt: skip
    assert alone.report.placeholders == {"embedded": 1}  # rf.opi not imported with it
    together = import_screen(data, "panel-canvas.bob", siblings=frozenset({"rf"}))
    by_type = {w["type"]: w for w in together.screen["widgets"]}
    assert by_type["embed"]["options"] == {"screen": "rf", "resize": "fit",
                                           "macros": {"D": "LI01", "CAV": "2"}}  # fmt: skip
    assert [t["screen"] for t in by_type["tabs"]["options"]["tabs"]] == ["vacuum", "rf"]
    title = together.screen["widgets"][0]
    assert title["style"]["font"] == "Header 1" and title["style"]["align"] == "center"
    formula = next(w for w in together.screen["widgets"]
                   if w.get("channels", [""])[0].startswith("="))  # fmt: skip
    assert formula["visible"] is False
    assert formula["rules"][0]["set"] == {"visible": True}
    # a rule over two PVs becomes a formula channel the browser evaluates
    assert formula["rules"][-1] == {
        "channel": "=(`ca://LI01:A` > 1) && (`ca://LI01:B` < 2)",
        "set": {"visible": True}}  # fmt: skip
    assert not together.report.skipped
    assert together.report.placeholders == {}


def test_a_500_widget_bob_imports_whole() -> None:
    widgets = "".join(
        f'<widget type="{("textupdate", "led", "web_browser")[i % 3]}" version="2.0.0">'
        f"<name>W{i}</name><pv_name>$(P)PV{i}</pv_name><x>{i % 20 * 50}</x>"
        f"<y>{i // 20 * 25}</y><width>48</width><height>22</height></widget>"
        for i in range(500)
    )
    data = f'<display version="2.0.0"><width>1000</width>{widgets}</display>'.encode()
    imported = import_screen(data, "big.bob", macros={"P": "BIG:"})
    assert len(imported.screen["widgets"]) == 500
    assert imported.report.placeholders == {"web_browser": 166}
    assert imported.screen["layout"] == {"type": "canvas", "width": 1000, "height": 600}
    assert imported.screen["widgets"][-1]["box"] == {
        "x": 950,
        "y": 600,
        "w": 48,
        "h": 22,
    }


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (
            b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
            b"<display>&b;</display>",
            "refused",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b"<display>&x;</display>",
            "refused",
        ),
        (
            b'<display version="2.0.0">\n<widget type="led">\n<x>1</x>\n</display>',
            r"big\.bob:4: malformed XML",
        ),
        (b'<display version="9.0.0"></display>', "unknown bob version 9.0.0"),
        (b"<screen/>", "not a display"),
        (
            b'<?xml version="1.0"?>\n<!-- <!DOCTYPE in a comment -->\n'
            b'<display version="2.0.0">\n<widget>\n</display>',
            r"big\.bob:5: malformed XML",
        ),
    ],
    ids=[
        "billion-laughs",
        "external-entity",
        "malformed",
        "version",
        "root",
        "malformed-slow-path",
    ],
)
def test_bad_xml_is_refused_naming_the_file(data: bytes, match: str) -> None:
    with pytest.raises(ScreenImportError, match=match) as info:
        import_screen(data, "big.bob")
    assert str(info.value).startswith("big.bob")


def test_bad_files_of_other_kinds() -> None:
    with pytest.raises(ScreenImportError, match=r"d\.wj:2: malformed JSON"):
        import_screen(b'{\n"widget": [,]}', "d.wj")
    with pytest.raises(ScreenImportError, match="no 'widget' list"):
        import_screen(b'{"name": "x"}', "d.wj")
    with pytest.raises(ScreenImportError, match="not UTF-8"):
        import_screen(b'{"name": "\xff"}', "d.wj")
    with pytest.raises(ScreenImportError, match=r"unknown format '\.edl'"):
        import_screen(b"", "old.edl")
    with pytest.raises(ScreenImportError, match="exceed the import limit"):
        import_screen(b" " * (10 * 1024 * 1024 + 1), "huge.bob")
    widgets = [{"type": "ATTRIBUTE_DISPLAY", "x": "a", "y": None, "inputs": "nope"},
               {"type": "ATTRIBUTE_DISPLAY", "inputs": {"attribute": {"device": "a/b",
                "attribute": "c"}}}, 7]  # fmt: skip
    odd = import_screen(json.dumps({"widget": widgets}).encode(), "odd.wj")
    assert odd.report.placeholders == {"ATTRIBUTE_DISPLAY": 2}


def test_parts() -> None:
    assert parse_macro_args(["P=SR01:", "Q="]) == {"P": "SR01:", "Q": ""}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_macro_args(["P"])
    assert expand("$(P)X${Q}$(R=d)$(M)", {"P": "a:", "Q": "$(P)"}, "f") == (
        "a:Xa:d$(M)",
        ["M"],
    )
    assert convert_channel("SR:X") == ("ca://SR:X", "")
    assert convert_channel("pva://SR:Y")[0] == "pva://SR:Y"
    assert convert_channel("sim://sine")[0] == "sim://sine"
    assert convert_channel("sim://sine(0, 10, 0.5)")[0] == "sim://sine(0, 10, 0.5)"
    assert convert_channel("loc://x(1)") == ("loc://x(1)", "")
    assert (
        convert_channel('loc://m<VEnum>(0, "a", "b")')[0]
        == 'loc://m<VEnum>(0, "a", "b")'
    )
    assert convert_channel("=`a`+1") == ("=`a`+1", "")
    assert convert_channel("eq://`a`*2")[0] == "eq://`a`*2"
    assert convert_channel("loc://bad name")[0] is None
    assert convert_channel("$(P)X") == ("ca://$(P)X", "")
    assert convert_channel("tango://$(H)/a/b/c/d")[1].startswith("unresolved macro")
    assert expand("$(P=d)$(Q=e)", {}, "f", frozenset({"P"})) == ("$(P=d)e", ["P"])
    assert canvas_layout(0, 30000) == {"type": "canvas", "width": 1, "height": 20000}
    assert box(-1e9, 1.6, 2.4, 1e9) == {"x": -20000, "y": 2, "w": 2, "h": 100000}
    assert screen_name("SR01 main.bob") == "SR01_main"
    assert screen_name("Ünïcode.opi") == "n_code"
    assert screen_name("...bob") == "imported"


def _bob(body: str, macros: str = "") -> bytes:
    return (f'<display version="2.0.0"><width>400</width><macros>{macros}</macros>'
            f"{body}</display>").encode()  # fmt: skip


def test_embedded_displays_are_inlined_with_their_macros(tmp_path: Path) -> None:
    embed = ('<widget type="embedded" version="2.0.0"><name>Panel</name>'
             "<file>{file}</file><macros><N>2</N></macros><x>100</x><y>120</y>"
             "<width>200</width><height>100</height></widget>")  # fmt: skip
    panel = ('<widget type="textupdate" version="2.0.0"><pv_name>$(P)PUMP$(N)</pv_name>'
             "<x>10</x><y>12</y><width>50</width><height>20</height></widget>")  # fmt: skip
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "panel.bob").write_bytes(_bob(panel, "<N>9</N>"))
    (tmp_path / "loop.bob").write_bytes(_bob(embed.format(file="loop.bob")))
    resolve = folder_resolver(tmp_path)
    main = _bob(embed.format(file="sub/panel.bob"), "<P>VAC:</P>")
    imported = import_screen(main, "main.bob", resolve=resolve)
    section, label = imported.screen["widgets"]
    # Phoebus: the embedded display's own N=9 replaces the embedding widget's N=2
    assert section["type"] == "section" and label["channels"] == ["ca://VAC:PUMP9"]
    assert "macros" not in imported.screen
    assert label["box"] == {
        "x": 110,
        "y": 132,
        "w": 50,
        "h": 20,
    }  # inside the embedding widget
    given = import_screen(main, "main.bob", resolve=resolve, macros={"N": "7"})
    assert given.screen["widgets"][1]["channels"] == ["ca://VAC:PUMP7"]  # the CLI wins
    assert imported.report.mapped == {"embedded → section": 1, "textupdate → label": 1}
    missing = import_screen(
        _bob(embed.format(file="gone.bob")), "m.bob", resolve=resolve
    )
    assert missing.screen["widgets"][0]["type"] == "placeholder"
    assert missing.report.warnings == ["embedded display 'gone.bob' not found"]
    escape = import_screen(
        _bob(embed.format(file="../x.bob")), "m.bob", resolve=resolve
    )
    assert escape.report.warnings == ["embedded display '../x.bob' not found"]
    with pytest.raises(
        ScreenImportError, match=r"embedded display loop: loop\.bob → loop\.bob"
    ):
        import_screen((tmp_path / "loop.bob").read_bytes(), "loop.bob", resolve=resolve)
    no_files = import_screen(main, "main.bob")  # no resolver (an upload): a placeholder
    assert no_files.screen["widgets"][0]["type"] == "placeholder"


def test_opi_fonts_colours_actions_and_rules() -> None:
    opi = (
        '<display typeId="org.csstudio.opibuilder.Display" version="1.0.0">'
        "<width>300</width><height>200</height>"
        '<widget typeId="org.csstudio.opibuilder.widgets.TextUpdate" version="1.0.0">'
        "<pv_name>LI:X</pv_name><x>5</x><y>6</y><width>70</width><height>20</height>"
        '<font><fontdata fontName="Sans" height="10" style="1" /></font>'
        '<foreground_color><color red="0" green="0" blue="255" /></foreground_color>'
        '<rules><rule name="hide" prop_id="visible" out_exp="false">'
        '<exp bool_exp="pv0==0"><value>false</value></exp>'
        '<pv trig="true">LI:ON</pv></rule>'
        '<rule name="sev" prop_id="foreground_color" out_exp="false">'
        '<exp bool_exp="pvSev0==1"><value><color red="255" green="0" blue="0" />'
        '</value></exp><pv trig="true">LI:X</pv></rule></rules></widget>'
        '<widget typeId="org.csstudio.opibuilder.widgets.ActionButton" version="1.0.0">'
        "<text>More</text><x>80</x><y>6</y><width>60</width><height>20</height>"
        '<actions><action type="OPEN_DISPLAY"><path>sub/more.opi</path>'
        "<macros><include_parent_macros>true</include_parent_macros><N>2</N></macros>"
        "<mode>8</mode></action></actions></widget></display>"
    )
    imported = import_screen(opi.encode(), "x.opi")
    label, link = imported.screen["widgets"]
    assert label["style"] == {"fg": "#0000ff",
                              "font": {"size": 10.0, "family": "Sans", "style": "bold"}}  # fmt: skip
    assert label["rules"] == [{"channel": "ca://LI:ON", "op": "==", "value": 0,
                               "set": {"visible": False}},
                              {"channel": "ca://LI:X", "op": "==", "on": "severity",
                               "value": "major", "set": {"fg": "#ff0000"}}]  # fmt: skip
    assert link == {"type": "link", "title": "More",
                    "box": {"x": 80, "y": 6, "w": 60, "h": 20},
                    "options": {"screen": "more", "macros": {"N": "2"},
                                "target": "window"}}  # fmt: skip


@pytest.mark.parametrize(
    ("expression", "entries"),
    [
        ("!(pv0==0)", [{"channel": "ca://A", "op": "!=", "value": 0}]),
        ("pv0 > 5", [{"channel": "ca://A", "op": ">", "value": 5}]),
        ("5 > pv1", [{"channel": "ca://B", "op": "<", "value": 5}]),
        ("pv0", [{"channel": "ca://A", "op": "!=", "value": 0}]),
        ('pvStr0 == "ON"', [{"channel": "ca://A", "op": "==", "value": "ON"}]),
        ("pvSev0 == 2", [{"channel": "ca://A", "on": "severity", "op": "==",
                          "value": "major"}]),
        ("pvSev0 >= 3", [{"channel": "ca://A", "on": "severity", "op": "==",
                          "value": v} for v in ("invalid", "disconnected")]),
        ("pvSev0 == 7", []),  # no such severity: never holds
        ("pv0 > 5 && pv1 == 0", [{"channel": "=(`ca://A` > 5) && (`ca://B` == 0)"}]),
        ("!(pv0!==0||pv1==7)", [{"channel": "=!((`ca://A` != 0) || (`ca://B` == 7))"}]),
        ("pv0 + pv1 >= 2.5", [{"channel": "=(`ca://A` + `ca://B`) >= 2.5"}]),
        ("pvSev0 > 0 or not pv1", [{"channel":
                                    "=(highestSeverity(`ca://A`) > 0) || !(`ca://B`)"}]),
    ],
)  # fmt: skip
def test_rule_expressions_become_rules_or_formula_channels(
    expression: str, entries: list[dict[str, object]]
) -> None:
    got = entries_of(parse(expression), ["ca://A", "ca://B"], "bob", "visible", False)
    assert got == [{**e, "set": {"visible": False}} for e in entries]


def test_boy_severity_ranges_count_boy_s_way() -> None:
    # BOY: 0 OK, 1 major, 2 minor, -1 invalid; "> 0" is major or minor
    got = entries_of(parse("pvSev0 > 0"), ["ca://A"], "opi", "text", "Alarm!")
    assert [e["value"] for e in got] == ["major", "minor"]


@pytest.mark.parametrize("expression", ["pv0 >", "pvLegacySev0 == 1", "foo(pv0)",
                                        "(pv0 > 1", "pv0 = 1"])  # fmt: skip
def test_rule_expressions_it_cannot_convert_are_refused(expression: str) -> None:
    with pytest.raises(UnsupportedError):
        parse(expression)


def test_decorations_become_shapes_with_points_in_their_box() -> None:
    bob = (b'<display version="2.0.0"><widget type="polygon" version="2.0.0">'
           b"<x>100</x><y>50</y><width>40</width><height>30</height>"
           b'<line_color><color red="0" green="0" blue="255"/></line_color>'
           b'<points><point x="0" y="30"/><point x="20" y="0"/></points></widget>'
           b'<widget type="arc"><total_angle>180</total_angle></widget>'
           b"<widget type=\"picture\"><file>$(D)/logo.png</file></widget>"
           b"<macros><D>pic</D></macros></display>")  # fmt: skip
    polygon, arc, picture = import_screen(bob, "d.bob").screen["widgets"]
    assert polygon["options"] == {"kind": "polygon", "points": [[0, 30], [20, 0]]}
    assert polygon["style"]["fg"] == "#0000ff"  # the line colour strokes the shape
    assert arc["options"] == {"kind": "arc", "start_angle": 0, "total_angle": 180}
    assert picture["options"] == {"kind": "picture", "file": "pic/logo.png"}
    opi = (b'<display typeId="org.csstudio.opibuilder.Display" version="1.0.0">'
           b'<widget typeId="org.csstudio.opibuilder.widgets.polyline" version="1.0.0">'
           b"<x>100</x><y>50</y><width>40</width><height>30</height>"
           b'<points><point x="100" y="80"/><point x="140" y="50"/></points></widget>'
           b"</display>")  # fmt: skip
    (line,) = import_screen(opi, "d.opi").screen["widgets"]
    assert line["options"]["points"] == [[0, 30], [40, 0]]  # BOY points: parent's


def test_tabbed_containers_keep_each_tab_s_widgets() -> None:
    bob = (b'<display version="2.0.0"><widget type="tabs" version="2.0.0">'
           b"<x>10</x><y>20</y><width>300</width><height>200</height>"
           b"<tab_height>40</tab_height><tabs>"
           b'<tab><name>One</name><children><widget type="textupdate">'
           b"<pv_name>A</pv_name><x>5</x><y>6</y></widget></children></tab>"
           b"<tab><name>Two</name><children/></tab></tabs></widget></display>")  # fmt: skip
    imported = import_screen(bob, "t.bob")
    (tabs,) = imported.screen["widgets"]
    assert tabs["type"] == "tabs" and tabs["box"] == box(10, 20, 300, 200)
    one, two = tabs["options"]["tabs"]
    assert (one["title"], one["width"], one["height"]) == ("One", 300, 160)
    assert one["widgets"] == [{"type": "label", "channels": ["ca://A"],
                               "options": {"compact": True},
                               "box": box(5, 6, 100, 20)}]  # fmt: skip
    assert two == {"title": "Two", "widgets": [], "width": 300, "height": 160}
    assert imported.report.widgets == 2  # the container and its text update
    opi = (b'<display typeId="org.csstudio.opibuilder.Display" version="1.0.0">'
           b'<widget typeId="org.csstudio.opibuilder.widgets.tab" version="1.0.0">'
           b"<width>200</width><height>100</height><tab_count>2</tab_count>"
           b"<tab_0_title>Motor</tab_0_title><tab_1_title>Setup</tab_1_title>"
           b'<widget typeId="org.csstudio.opibuilder.widgets.groupingContainer">'
           b'<widget typeId="org.csstudio.opibuilder.widgets.LED"><pv_name>M:ON'
           b"</pv_name></widget></widget>"
           b'<widget typeId="org.csstudio.opibuilder.widgets.groupingContainer"/>'
           b"</widget></display>")  # fmt: skip
    (boy,) = import_screen(opi, "t.opi").screen["widgets"]
    motor, setup = boy["options"]["tabs"]
    assert (motor["title"], setup["title"]) == ("Motor", "Setup")
    assert [w["type"] for w in motor["widgets"]] == ["led"]  # the page is the tab


def test_taranta_boxes_prefixed_devices_and_commands() -> None:
    dashboard = json.dumps({"widget": [{
        "type": "BOX", "x": 1, "y": 1, "width": 10, "height": 6,
        "inputs": {"title": "Device"},
        "innerWidgets": [
            {"type": "ATTRIBUTE WRITER DROPDOWN", "x": 1, "y": 2, "width": 9, "height": 1,
             "inputs": {"attribute": {"device": "taranta://low/utc/ci",
                                      "attribute": "adminmode"}}},
            {"type": "COMMAND", "x": 1, "y": 4, "width": 9, "height": 1,
             "inputs": {"title": "Rollup", "command": {"device": "taranta://low/utc/ci",
                                                       "command": "ForceRollup"}}}]}]})  # fmt: skip
    imported = import_screen(dashboard.encode(), "d.wj", tango_host="tg:10000")
    section, menu, command = imported.screen["widgets"]
    assert section == {
        "type": "section",
        "title": "Device",
        "box": box(15, 15, 150, 90),
    }
    assert menu["type"] == "menu" and menu["box"] == box(15, 30, 135, 15)
    assert menu["channels"] == ["tango://tg:10000/low/utc/ci/adminmode"]
    assert command == {
        "type": "command", "title": "Rollup", "box": box(15, 60, 135, 15),
        "options": {"command": "tango://tg:10000/low/utc/ci/forcerollup",
                    "label": "ForceRollup", "input": "none", "confirm": True},
    }  # fmt: skip
    assert imported.report.mapped == {"BOX → section": 1, "COMMAND → command": 1,
                                      "ATTRIBUTE_WRITER_DROPDOWN → menu": 1}  # fmt: skip


@pytest.mark.parametrize(
    ("accepted", "field"),
    [("DevVoid", "none"), ("DevDouble", "number"), ("DevULong", "number"),
     ("DevString", "text"), ("DevBoolean", "text"), ("", "none")],
)  # fmt: skip
def test_taranta_command_input_follows_the_declared_argument_type(
    accepted: str, field: str
) -> None:
    command = {"device": "sys/tg_test/1", "command": "Go", "acceptedType": accepted}
    dashboard = json.dumps({"widget": [{"type": "COMMAND", "width": 9, "height": 2,
        "inputs": {"command": command, "requireConfirmation": False}}]})  # fmt: skip
    (widget,) = import_screen(dashboard.encode(), "c.wj", tango_host="h:1").screen[
        "widgets"
    ]
    assert widget["options"]["input"] == field
    assert widget["options"]["confirm"] is False


def test_taranta_commands_without_a_counterpart_stay_placeholders() -> None:
    array = {"device": "sys/tg_test/1", "command": "DevVarLongArray",
             "acceptedType": "DevVarLongArray"}  # fmt: skip
    dashboard = json.dumps({"widget": [
        {"type": "COMMAND", "width": 9, "height": 2, "inputs": {"command": array}},
        {"type": "COMMAND_FILE", "y": 3, "width": 9, "height": 2,
         "inputs": {"command": {"device": "sys/tg_test/1", "command": "Load"}}},
        {"type": "COMMAND_EXECUTOR", "y": 6, "width": 9, "height": 2, "inputs": {}},
    ]})  # fmt: skip
    imported = import_screen(dashboard.encode(), "c.wj", tango_host="h:1")
    assert [w["type"] for w in imported.screen["widgets"]] == ["placeholder"] * 3
    assert imported.report.reasons == {
        "COMMAND": "DevVarLongArray arguments are not supported",
        "COMMAND_FILE": "a command taking a file's content: not mapped",
        "COMMAND_EXECUTOR": "no command",
    }


@pytest.mark.parametrize(
    ("relation", "compare", "channel", "extra"),
    [
        ("=", "0", "tango://tg:10000/a/b/c/health", {"invert": True}),
        ("=", "1", "tango://tg:10000/a/b/c/health", {}),
        (">", "2.5", "=`tango://tg:10000/a/b/c/health` > 2.5", {}),
        ("", "", "tango://tg:10000/a/b/c/health", {}),
    ],
)
def test_taranta_leds_light_by_their_relation_in_their_colours(
    relation: str, compare: str, channel: str, extra: dict[str, object]
) -> None:
    inputs = {"attribute": {"device": "a/b/c", "attribute": "health"},
              "relation": relation, "compare": compare,
              "trueColor": "#3AC73A", "falseColor": "red"}  # fmt: skip
    doc = {"widget": [{"type": "LED_DISPLAY", "inputs": inputs}]}
    (led,) = import_screen(
        json.dumps(doc).encode(), "l.wj", tango_host="tg:10000"
    ).screen["widgets"]
    assert led["channels"] == [channel]
    assert led["options"] == {"compact": True, "on_color": "#3ac73a", **extra}


def test_bob_leds_keep_their_colours_as_hex() -> None:
    bob = (b'<display version="2.0.0"><widget type="led"><pv_name>X</pv_name>'
           b'<on_color><color name="On" red="0" green="255" blue="0"/></on_color>'
           b'<off_color><color red="60" green="100" blue="60"/></off_color>'
           b"</widget></display>")  # fmt: skip
    (led,) = import_screen(bob, "l.bob").screen["widgets"]
    assert led["options"] == {"compact": True, "on_color": "#00ff00",
                              "off_color": "#3c643c"}  # fmt: skip


def test_pictures_beside_the_display_are_carried_as_data_urls(tmp_path: Path) -> None:
    (tmp_path / "pic").mkdir()
    (tmp_path / "pic" / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / "pic" / "big.png").write_bytes(b"\0" * (512 * 1024 + 1))
    (tmp_path / "pic" / "notes.txt").write_bytes(b"text")
    bob = "".join(f'<widget type="picture"><file>pic/{f}</file></widget>'
                  for f in ("logo.png", "big.png", "notes.txt", "gone.png"))  # fmt: skip
    data = f'<display version="2.0.0">{bob}</display>'.encode()
    widgets = import_screen(data, "p.bob", resolve=folder_resolver(tmp_path)).screen[
        "widgets"
    ]
    assert widgets[0]["options"]["src"] == "data:image/png;base64,iVBORw=="
    assert ["src" in w["options"] for w in widgets] == [True, False, False, False]
    # without a folder (an upload), the picture is a frame naming its file
    alone = import_screen(data, "p.bob").screen["widgets"][0]
    assert alone["options"] == {"kind": "picture", "file": "pic/logo.png"}


def test_a_byte_monitor_is_one_led_per_bit_in_its_box() -> None:
    bob = (b'<display version="2.0.0"><widget type="byte_monitor"><pv_name>S</pv_name>'
           b"<x>10</x><y>5</y><width>80</width><height>20</height>"
           b"<startBit>2</startBit><numBits>4</numBits></widget></display>")  # fmt: skip
    imported = import_screen(bob, "b.bob")
    leds = imported.screen["widgets"]
    assert [w["options"]["bit"] for w in leds] == [5, 4, 3, 2]  # highest bit first
    assert [w["box"]["x"] for w in leds] == [10, 30, 50, 70]
    assert all(w["channels"] == ["ca://S"] and w["box"]["w"] == 20 for w in leds)
    assert imported.report.mapped == {"byte_monitor → led": 1}  # one source widget
    opi = (b'<display typeId="org.csstudio.opibuilder.Display" version="1.0.0">'
           b'<widget typeId="org.csstudio.opibuilder.widgets.bytemonitor">'
           b"<pv_name>S</pv_name><height>30</height><numBits>3</numBits>"
           b"<horizontal>false</horizontal><bitReverse>true</bitReverse></widget>"
           b"</display>")  # fmt: skip
    leds = import_screen(opi, "b.opi").screen["widgets"]
    assert [(w["options"]["bit"], w["box"]["y"]) for w in leds] == [
        (0, 0),
        (1, 10),
        (2, 20),
    ]


def test_a_multi_state_led_is_a_lamp_filled_by_state() -> None:
    bob = (b'<display version="2.0.0"><widget type="multi_state_led"><pv_name>M</pv_name>'
           b"<states><state><value>0</value><color><color red=\"60\" green=\"100\" "
           b'blue="60"/></color></state><state><value>2</value><color><color red="255" '
           b'green="255" blue="0"/></color></state></states><fallback_color><color red="0"'
           b' green="0" blue="0"/></fallback_color></widget></display>')  # fmt: skip
    (lamp,) = import_screen(bob, "m.bob").screen["widgets"]
    assert lamp["type"] == "shape" and lamp["options"] == {"kind": "ellipse"}
    assert lamp["style"] == {"bg": "#000000"}  # the fallback
    assert lamp["rules"] == [
        {"channel": "ca://M", "op": "==", "value": 0, "set": {"bg": "#3c643c"}},
        {"channel": "ca://M", "op": "==", "value": 2, "set": {"bg": "#ffff00"}},
    ]
