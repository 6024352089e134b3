"""Every Phoebus and BOY widget type has a counterpart (or says why not): PV
names with options, PV-less text, navigation and action buttons, BOY's menu
button both ways, symbols, arrays, templates, grid layouts, clocks."""

from __future__ import annotations

from typing import Any

import pytest

from synoptic_importer import import_screen
from synoptic_importer.kinds import NOT_IN_A_BROWSER, OPI_TYPES
from synoptic_importer.pvname import split_options
from synoptic_importer.widgets import MAKERS
from synoptic_schemas.screens import validate_screen

OPI = "org.csstudio.opibuilder.widgets."


def bob(body: str, macros: str = "", name: str = "t.bob", **kw: Any) -> dict[str, Any]:
    data = (f'<display version="2.0.0"><name>Top</name><width>400</width>'
            f"<macros>{macros}</macros>{body}</display>").encode()  # fmt: skip
    imported = import_screen(data, name, **kw)
    validate_screen(imported.screen)
    return {"screen": imported.screen, "report": imported.report}


def opi(body: str, **kw: Any) -> dict[str, Any]:
    data = (f'<display typeId="org.csstudio.opibuilder.Display" version="1.0.0">'
            f"<width>400</width>{body}</display>").encode()  # fmt: skip
    imported = import_screen(data, "t.opi", **kw)
    validate_screen(imported.screen)
    return {"screen": imported.screen, "report": imported.report}


def w(kind: str, inner: str = "") -> str:
    return (f'<widget type="{kind}" version="2.0.0"><name>{kind}</name><x>1</x><y>2</y>'
            f"<width>30</width><height>20</height>{inner}</widget>")  # fmt: skip


def ow(kind: str, inner: str = "") -> str:
    return (f'<widget typeId="{OPI}{kind}" version="1.0.0"><name>{kind}</name><x>1</x>'
            f"<y>2</y><width>30</width><height>20</height>{inner}</widget>")  # fmt: skip


def test_pv_names_with_options_import_and_long_strings_show_as_text() -> None:
    assert split_options('$(P)FilePath {"longString":true}') == (
        "$(P)FilePath", {"longString": True})  # fmt: skip
    assert split_options("X {not json}") == ("X {not json}", {})
    out = opi(ow("TextUpdate", '<pv_name>$(P)FilePath {"longString":true}</pv_name>')
              + ow("TextInput", '<pv_name>F:SP {"longString":true}</pv_name>')
              + ow("TextUpdate", "<pv_name>WF</pv_name><format_type>4</format_type>"))  # fmt: skip
    label, entry, fmt = out["screen"]["widgets"]
    assert label["channels"] == ["ca://$(P)FilePath"]
    assert label["options"]["long_string"] is True
    assert entry["options"] == {"kind": "text", "confirm": False, "long_string": True}
    assert fmt["options"]["long_string"] is True  # BOY's string format on a waveform


def test_text_widgets_without_a_pv_show_their_text() -> None:
    out = opi(ow("TextUpdate", "<text>$(TITLE)</text>") + ow("TextInput", "<text>x</text>"),
              macros={"TITLE": "Vacuum"})  # fmt: skip
    a, b = out["screen"]["widgets"]
    assert a == {**a, "type": "text", "options": {"text": "Vacuum"}}
    assert b["options"] == {"text": "x"}
    assert out["report"].placeholders == {}


def test_boy_menu_button_writes_an_enum_or_opens_related_displays() -> None:
    enum = ow("MenuButton", "<pv_name>M:MODE</pv_name><label>Mode</label>")
    related = ow("MenuButton", "<actions_from_pv>false</actions_from_pv><label>More</label>"
                 '<actions hook="false"><action type="OPEN_DISPLAY"><path>a.opi</path>'
                 "<macros><include_parent_macros>true</include_parent_macros><M>m1</M>"
                 "</macros><replace>0</replace><description>Motor 1</description></action>"
                 '<action type="OPEN_DISPLAY"><path>b.opi</path><mode>7</mode></action>'
                 '<action type="WRITE_PV"><pv_name>M:STOP</pv_name><value>1</value>'
                 "<confirm_message>Sure?</confirm_message></action></actions>")  # fmt: skip
    out = opi(enum + related)
    menu, actions = out["screen"]["widgets"]
    assert menu["type"] == "menu" and menu["channels"] == ["ca://M:MODE"]
    assert actions["type"] == "actions"
    assert actions["options"] == {"label": "More", "menu": True}
    assert actions["actions"] == [
        {"type": "open", "screen": "a", "label": "Motor 1", "macros": {"M": "m1"},
         "target": "tab"},
        {"type": "open", "screen": "b", "label": "Open b.opi", "target": "window"},
        {"type": "write", "channel": "ca://M:STOP", "value": 1, "label": "Write M:STOP=1",
         "confirm": "Sure?"},
    ]  # fmt: skip
    assert [k.path for k in out["report"].links] == ["a.opi", "b.opi"]
    assert out["report"].mapped == {"MenuButton → menu": 1, "MenuButton → actions": 1}


def test_action_buttons_become_links_buttons_or_menus_and_say_what_they_cannot_run() -> (
    None
):
    open_ = w(
        "action_button",
        '<text>Go</text><actions><action type="open_display">'
        "<file>sub/x.bob</file><target>window</target></action></actions>",
    )
    web = w(
        "action_button",
        '<actions><action type="open_webpage"><url>https://a.org/x'
        "</url><description>Docs</description></action></actions>",
    )
    script = w(
        "action_button",
        '<actions><action type="execute"><script file="x.py"/>'
        "<description>Run</description></action></actions>",
    )
    command = w(
        "action_button",
        '<actions><action type="command"><command>ls</command></action></actions>',
    )
    nothing = w("action_button", "<text>Dummy</text>")
    out = bob(open_ + web + script + command + nothing)
    link, url, ph1, ph2, dummy = out["screen"]["widgets"]
    assert link["type"] == "link" and link["options"] == {
        "screen": "x",
        "target": "window",
    }
    assert url["type"] == "actions"
    assert url["actions"] == [
        {"type": "url", "url": "https://a.org/x", "label": "Docs"}
    ]
    assert ph1["options"]["reason"] == "'Run': runs a script (scripts are never run)"
    assert "runs a program on the operator's computer" in ph2["options"]["reason"]
    assert dummy == {
        **dummy,
        "type": "actions",
        "actions": [],
        "options": {"label": "Dummy"},
    }


def test_actions_of_groups_and_embedded_displays_are_kept_and_clickable() -> None:
    group = w(
        "group",
        '<actions><action type="open_display"><file>d.bob</file>'
        "<macros><N>2</N></macros></action></actions>" + w("label", "<text>t</text>"),
    )
    out = bob(group, "<P>SR:</P>")
    section, text = out["screen"]["widgets"]
    assert section["click"] is True
    assert section["actions"] == [{"type": "open", "screen": "d", "label": "Open d.bob",
                                   "macros": {"P": "SR:", "N": "2"}}]  # fmt: skip
    assert "actions" not in text


@pytest.mark.parametrize(
    ("kind", "inner", "expect"),
    [
        ("slide_button", "<pv_name>B</pv_name>", "toggle"),
        (
            "text-symbol",
            "<pv_name>S</pv_name><symbols><symbol>☺</symbol><symbol>☻</symbol>"
            "</symbols>",
            "label",
        ),
        (
            "symbol",
            "<pv_name>S</pv_name><symbols><symbol>a.png</symbol></symbols>",
            "symbol",
        ),
        ("array", "<pv_name>WF</pv_name>" + w("textupdate"), "table"),
        ("fileselector", "<pv_name>F</pv_name>", "input"),
        ("clock", "", "clock"),
        ("digital_clock", "", "clock"),
        ("scaledslider", "<pv_name>X</pv_name><increment>0.5</increment>", "input"),
        ("knob", "<pv_name>X</pv_name>", "input"),
        ("thumbwheel", "<pv_name>X</pv_name>", "input"),
        ("linearmeter", "<pv_name>X</pv_name>", "bar"),
        ("textupdate", "<pv_name>sys://time</pv_name>", "clock"),
        ("checkbox", "<label>Enable</label>", "text"),
    ],
)
def test_phoebus_types_map(kind: str, inner: str, expect: str) -> None:
    widgets = bob(w(kind, inner))["screen"]["widgets"]
    assert widgets[0]["type"] == expect


def test_symbols_texts_and_pictures_of_the_set_are_carried() -> None:
    out = bob(w("text-symbol", "<pv_name>S</pv_name><symbols><symbol>☺</symbol>"
                "<symbol>☻</symbol></symbols>")
              + w("symbol", "<pv_name>S</pv_name><symbols><symbol>a.png</symbol>"
                  "<symbol>b.png</symbol></symbols><array_index>2</array_index>"),
              resolve=lambda name: b"\x89PNG" if name == "a.png" else None)  # fmt: skip
    text, pic = out["screen"]["widgets"]
    assert text["options"]["symbols"] == ["☺", "☻"]
    assert pic["options"]["images"][0]["src"].startswith("data:image/png;base64,")
    assert pic["options"]["images"][1] == {"file": "b.png"}
    assert pic["options"]["index"] == 2


def test_only_what_a_browser_cannot_show_stays_a_placeholder_with_why() -> None:
    out = bob(w("3dviewer") + w("webbrowser") + w("no_such_widget"))
    reasons = [x["options"]["reason"] for x in out["screen"]["widgets"]]
    assert reasons[0] == NOT_IN_A_BROWSER["3dviewer"]
    assert reasons[1] == NOT_IN_A_BROWSER["webbrowser"]
    assert reasons[2] == "unknown widget type 'no_such_widget'"


def test_every_phoebus_and_boy_type_has_a_maker() -> None:
    phoebus = {"action_button", "arc", "array", "bool_button", "byte_monitor", "checkbox",
               "choice", "clock", "combo", "digital_clock", "ellipse", "embedded",
               "fileselector", "group", "led", "label", "meter", "multi_state_led",
               "navtabs", "picture", "polygon", "polyline", "progressbar", "radio",
               "rectangle", "scaledslider", "scrollbar", "slide_button", "spinner",
               "symbol", "table", "tabs", "tank", "template", "textentry", "text-symbol",
               "textupdate", "thermometer", "3dviewer", "webbrowser", "databrowser",
               "image", "stripchart", "xyplot", "thumbwheel", "linearmeter", "knob"}  # fmt: skip
    handled_elsewhere = {"arc", "ellipse", "picture", "polygon", "polyline", "embedded",
                         "navtabs", "tabs", "template", "grid_layout"}  # fmt: skip
    assert phoebus - handled_elsewhere <= set(MAKERS)
    assert set(OPI_TYPES.values()) - handled_elsewhere <= set(MAKERS) | {
        "multi_state_led"
    }


def test_boy_multi_state_led_grid_layout_and_tabs() -> None:
    states = "".join(f'<state_color_{i}><color red="{i}" green="0" blue="0"/>'
                     f"</state_color_{i}>" for i in range(3))  # fmt: skip
    grid = ow("groupingContainer", ow("gridLayout", "<number_of_columns>2</number_of_columns>"
              "<grid_gap>5</grid_gap>") + ow("Label", "<text>a</text>")
              + ow("Label", "<text>b</text>") + ow("Label", "<text>c</text>"))  # fmt: skip
    out = opi(
        ow("LED", f"<pv_name>S</pv_name><state_count>3</state_count>{states}") + grid
    )
    lamp, _group, a, b, c = out["screen"]["widgets"]
    assert lamp["type"] == "shape" and [r["value"] for r in lamp["rules"]] == [0, 1, 2]
    assert (a["box"]["x"], b["box"]["x"], c["box"]["x"]) == (6, 41, 6)  # 2 columns
    assert (a["box"]["y"], c["box"]["y"]) == (7, 32)  # rows 20 px + the gap
    assert (
        out["report"].mapped["gridLayout → its container's widgets laid out in a grid"]
        == 1
    )


def test_template_instances_repeat_a_display_with_their_macros() -> None:
    inner = (b'<display version="2.0.0"><width>50</width><height>20</height>'
             b'<widget type="textupdate"><pv_name>D$(I)</pv_name><width>50</width>'
             b"<height>20</height></widget></display>")  # fmt: skip
    tpl = w("template", "<file>row.bob</file><instances>" + "".join(
        f"<instance><macros><I>{i}</I></macros></instance>" for i in (1, 2, 3))
        + "</instances><gap>5</gap>")  # fmt: skip
    out = bob(tpl, resolve=lambda name: inner if name == "row.bob" else None)
    _section, *rows = out["screen"]["widgets"]
    assert [r["channels"][0] for r in rows] == ["ca://D1", "ca://D2", "ca://D3"]
    assert [r["box"]["y"] for r in rows] == [2, 27, 52]  # stacked, 5 px apart


def test_embedded_displays_scale_to_fit_and_show_one_group() -> None:
    inner = (b'<display version="2.0.0"><width>100</width><height>50</height>'
             b'<widget type="group"><name>G</name><x>40</x><y>10</y>'
             b'<widget type="label"><text>in G</text><x>5</x><y>5</y><width>10</width>'
             b"<height>10</height></widget></widget></display>")  # fmt: skip
    fit = w("embedded", "<file>p.bob</file><resize>1</resize>").replace(
        "<width>30</width><height>20</height>", "<width>200</width><height>200</height>"
    )
    one = w("embedded", "<file>p.bob</file><group_name>G</group_name>")
    gone = w("embedded", "<file>p.bob</file><group_name>nope</group_name>")
    out = bob(fit + one + gone, resolve=lambda n: inner if n == "p.bob" else None)
    widgets = out["screen"]["widgets"]
    scaled = widgets[2]  # section, group, label (scaled by 2)
    assert scaled["box"] == {"x": 1 + 2 * 45, "y": 2 + 2 * 15, "w": 20, "h": 20}
    label = widgets[4]  # only the group's children, at the widget's place
    assert label["options"]["text"] == "in G" and label["box"]["x"] == 6
    assert (
        widgets[-1]["type"] == "section"
    )  # a missing group: an empty frame, as Phoebus
    assert out["report"].warnings == ["group 'nope' not in 'p.bob'"]


def test_a_data_browser_plots_the_pvs_of_its_plot_file() -> None:
    plt = (b"<databrowser><pvlist><pv><name>$(P)T1</name></pv><pv><name>T2</name></pv>"
           b"</pvlist></databrowser>")  # fmt: skip
    out = bob(w("databrowser", "<file>x.plt</file>"), "<P>A:</P>",
              resolve=lambda n: plt if n == "x.plt" else None)  # fmt: skip
    (trend,) = out["screen"]["widgets"]
    assert trend["type"] == "trend" and trend["channels"] == ["ca://A:T1", "ca://T2"]


def test_multi_line_local_values_are_kept() -> None:
    out = bob(w("textentry", '<pv_name>loc://t("a\nb")</pv_name>'))
    assert out["screen"]["widgets"][0]["channels"] == ['loc://t("a\\nb")']
