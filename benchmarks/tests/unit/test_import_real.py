"""Real screens written elsewhere (importer/tests/realworld): ≥ 90 % of the
widgets of mapped types become live widgets, every file imports into a valid
screen, and no source widget is dropped; whole display sets (sets/) import as
linked sites with ≥ 97 % of their widgets mapped, no file refused and every
link to a file of the set resolved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from defusedxml.ElementTree import fromstring

from synoptic_benchmarks.importer.realworld import (
    CORPUS,
    SETS,
    SETS_TARGET_PCT,
    TARGET_PCT,
    channel_resolves,
    is_live,
    measure,
    measure_sets,
)
from synoptic_importer import SUFFIXES, import_screen

FILES = sorted(
    p for p in CORPUS.rglob("*") if p.suffix in SUFFIXES and SETS not in p.parents
)


def test_the_corpus_holds_at_least_15_screens_of_each_format() -> None:
    assert len(FILES) >= 15
    assert {p.suffix for p in FILES} == {".bob", ".opi", ".wj"}


def test_at_least_90_percent_of_the_widgets_of_mapped_types_are_live() -> None:
    report = measure(CORPUS)
    assert report["widgets_of_mapped_types"] >= 200
    assert report["coverage_pct"] >= TARGET_PCT, json.dumps(report["gaps"], indent=1)
    assert report["coverage_pct"] == round(
        100 * report["live"] / report["widgets_of_mapped_types"], 1
    )


def _source_widgets(path: Path) -> int:
    if path.suffix == ".wj":

        def count(widgets: list[dict[str, Any]]) -> int:
            return sum(1 + count(w.get("innerWidgets") or []) for w in widgets)

        return count(json.loads(path.read_text())["widget"])
    return sum(1 for _ in fromstring(path.read_bytes()).iter("widget"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_source_widget_becomes_a_widget_or_a_placeholder(path: Path) -> None:
    imported = import_screen(path.read_bytes(), path.name)
    assert imported.report.widgets == _source_widgets(path)
    # a grid layout lays out its container's widgets: counted, not drawn
    assert (
        len(imported.report.items) == imported.report.widgets - imported.report.absorbed
    )


@pytest.mark.parametrize(
    ("uri", "live"),
    [
        ("ca://$(P)$(M).RBV", True),
        ("loc://mot${M}(0)", True),
        ("=round(rnd(100)) + 'sim://flipflop'", True),
        ("=`ca://A` > 1 && `tango://h:1/a/b/c/d`", True),
        ("=`tango://nohost` > 1", False),
        ("=noSuchFunction(`ca://A`)", False),  # the browser's formulas would fail
        ("=indexOf(highestSeverity('sim://ramp'))", True),
        ("tango://h:1/too/short", False),
    ],
)
def test_a_channel_is_live_once_its_macros_have_values(uri: str, live: bool) -> None:
    assert channel_resolves(uri) is live


def test_a_placeholder_or_a_dead_rule_channel_is_not_live() -> None:
    assert not is_live({"type": "placeholder", "options": {"original": "x"}})
    dead_rule = {"channel": "tango://x", "set": {"visible": False}}
    assert not is_live({"type": "section", "rules": [dead_rule]})
    assert is_live({"type": "label", "channels": ["ca://$(P)X"]})


@pytest.mark.timeout(900)
def test_whole_sets_import_as_linked_sites_mapped_refusing_nothing_resolving_links() -> (
    None
):
    report = measure_sets(SETS)
    names = {s["set"] for s in report["sets"]}
    assert {
        "phoebus-examples",
        "adcore-bob",
        "adcore-opi",
        "motor-bob",
        "ibex",
    } <= names
    assert report["displays"] >= 800
    assert report["refused"] == 0, [s["refused"] for s in report["sets"]]
    assert report["links_unresolved"] == 0, [
        s["links_unresolved"] for s in report["sets"]
    ]
    assert report["mapped_pct"] >= SETS_TARGET_PCT, json.dumps(report, indent=1)
    for one in report["sets"]:
        assert one["mapped_pct"] >= 95.0, one
        assert one["links"]["resolved"] > 0, one
        assert all(reason.split(": ", 1)[1] for reason in one["placeholders"]), one
