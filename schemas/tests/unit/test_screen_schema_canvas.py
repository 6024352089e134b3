"""Issue 14's optional screen-schema additions: canvas layout, style, macros, rules,
links, browser-side channels. Existing screens stay valid (no migration)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from synoptic_schemas.screens import first_error

REPO = Path(__file__).resolve().parents[3]

CANVAS: dict[str, Any] = {
    "title": "Vacuum sector 1",
    "macros": {"P": "SR01:", "N": "3"},
    "layout": {
        "type": "canvas",
        "width": 800,
        "height": 600,
        "scale": "fit-width",
        "background": "Background",
    },
    "widgets": [
        {
            "type": "section",
            "title": "Pumps",
            "box": {"x": 0, "y": 0, "w": 400, "h": 300},
            "style": {"bg": "#d0d0d0", "border": {"width": 1, "color": "Grid"}},
        },
        {
            "type": "label",
            "channels": ["ca://$(P)PRESSURE"],
            "box": {"x": 10, "y": 20, "w": 120, "h": 24},
            "style": {
                "fg": "#00ff0080",
                "bg": "Read_Background",
                "font": "Header 2",
                "align": "right",
            },
            "rules": [
                {
                    "channel": "ca://$(P)PRESSURE",
                    "on": "severity",
                    "op": ">=",
                    "value": "major",
                    "set": {"bg": "MAJOR"},
                },
                {
                    "channel": "=`ca://$(P)A` > 5 && `loc://mode` == 1",
                    "set": {"visible": False},
                },
            ],
        },
        {
            "type": "text",
            "box": {"x": 10, "y": 50, "w": 200, "h": 20},
            "visible": False,
            "options": {"text": "Sector $(N=1)"},
            "style": {
                "font": {
                    "family": "Liberation Sans",
                    "size": 14,
                    "style": "bold-italic",
                }
            },
        },
        {
            "type": "input",
            "channels": ['loc://setpoint<VEnum>(0, "Off", "On")'],
            "box": {"x": 10, "y": 80, "w": 80, "h": 24},
        },
        {
            "type": "led",
            "channels": ["sim://flipflop(0.5)"],
            "box": {"x": 100, "y": 80, "w": 20, "h": 20},
        },
        {
            "type": "trend",
            "channels": ["sim://sine(0, 10, 0.1)", "sim://noise", "eq://3+4"],
            "box": {"x": 0, "y": 320, "w": 800, "h": 280},
        },
        {
            "type": "link",
            "title": "Sector 2",
            "box": {"x": 500, "y": 10, "w": 100, "h": 30},
            "options": {
                "screen": "vacuum-sector",
                "macros": {"P": "SR02:"},
                "target": "tab",
            },
        },
        {
            "type": "embed",
            "box": {"x": 420, "y": 50, "w": 380, "h": 250},
            "options": {
                "screen": "pump-$(N)",
                "macros": {"PUMP": "IP1"},
                "resize": "fit",
            },
        },
        {
            "type": "tabs",
            "box": {"x": 420, "y": 0, "w": 380, "h": 40},
            "options": {
                "tabs": [
                    {"title": "A", "screen": "a"},
                    {"title": "B", "screen": "b", "macros": {"X": "1"}},
                ]
            },
        },
        {
            "type": "placeholder",
            "box": {"x": 0, "y": 300, "w": 50, "h": 20},
            "options": {"original": "polyline", "source": "bob"},
        },
    ],
}


def test_a_full_canvas_screen_is_valid() -> None:
    assert first_error(CANVAS) is None


@pytest.mark.parametrize(
    "path", sorted((REPO / "screens").glob("*.json")), ids=lambda p: p.name
)
def test_existing_screens_stay_valid(path: Path) -> None:
    assert first_error(json.loads(path.read_text())) is None


def test_grid_screens_may_use_the_additions_without_box() -> None:
    screen = {
        "title": "g",
        "macros": {"P": "X:"},
        "widgets": [
            {
                "type": "label",
                "channels": ["ca://$(P)A"],
                "x": 1,
                "y": 1,
                "style": {"fg": "OK"},
            },
            {"type": "link", "options": {"screen": "other"}},
        ],
    }
    assert first_error(screen) is None


def _broken(path: list[Any], value: Any) -> dict[str, Any]:
    screen = copy.deepcopy(CANVAS)
    node: Any = screen
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return screen


@pytest.mark.parametrize(
    ("path", "value", "pointer"),
    [
        (["widgets", 1, "box"], KeyError, "/widgets/1"),  # canvas widgets need a box
        (["widgets", 1, "box", "w"], -1, "/widgets/1/box/w"),
        (["widgets", 1, "box", "x"], 1.5, "/widgets/1/box/x"),
        (["layout", "width"], KeyError, "/layout"),
        (["layout", "scale"], "stretch", "/layout"),
        (["layout", "background"], "pink", "/layout"),
        (["widgets", 1, "style", "fg"], "#12345", "/widgets/1/style/fg"),
        (["widgets", 1, "style", "fg"], "Purple", "/widgets/1/style/fg"),
        (["widgets", 1, "style", "font"], "Comic", "/widgets/1/style/font"),
        (["widgets", 1, "style", "font"], {"size": 1000}, "/widgets/1/style/font"),
        (["widgets", 1, "style", "shadow"], True, "/widgets/1/style"),
        (["macros", "1BAD"], "x", "/macros"),
        (["macros", "P"], 3, "/macros/P"),
        (["widgets", 1, "rules", 0, "op"], "~=", "/widgets/1/rules/0/op"),
        (["widgets", 1, "rules", 0, "set"], {}, "/widgets/1/rules/0/set"),
        (["widgets", 1, "rules", 0, "set", "blink"], True, "/widgets/1/rules/0/set"),
        (["widgets", 6, "options", "screen"], KeyError, "/widgets/6/options"),
        (["widgets", 6, "options", "target"], "popup", "/widgets/6/options/target"),
        (["widgets", 6, "channels"], ["ca://A"], "/widgets/6/channels"),
        (["widgets", 8, "options", "tabs"], [], "/widgets/8/options/tabs"),
        (["widgets", 4, "channels"], ["sim://sine(0, 1"], "/widgets/4/channels/0"),
        (["widgets", 4, "channels"], ["loc://a b"], "/widgets/4/channels/0"),
        (["widgets", 4, "channels"], ["="], "/widgets/4/channels/0"),
    ],
)
def test_bad_additions_name_the_place(
    path: list[Any], value: Any, pointer: str
) -> None:
    found = first_error(_broken(path, value))
    assert found is not None
    assert found[0].startswith(pointer), found


def test_a_grid_layout_cannot_claim_canvas_fields() -> None:
    screen = {"title": "g", "layout": {"type": "grid", "width": 10}, "widgets": []}
    assert first_error(screen) is not None
