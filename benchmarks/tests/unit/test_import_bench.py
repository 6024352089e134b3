"""The importer benchmark's display: the widget count it promises, all mapped."""

from synoptic_benchmarks.importer.bench import LINK_TEXT, make_bob, make_menu
from synoptic_importer import import_screen


def test_the_benchmark_display_has_500_widgets_all_mapped() -> None:
    imported = import_screen(make_bob(500), "imported-500.bob")
    assert imported.report.widgets == 500
    assert not imported.report.placeholders and not imported.report.skipped
    assert imported.screen["layout"] == {
        "type": "canvas",
        "width": 1000,
        "height": 1300,
    }
    assert all("box" in w for w in imported.screen["widgets"])


def test_the_menu_s_button_links_to_the_benchmark_display_passing_a_macro() -> None:
    menu = import_screen(make_menu(), "imported-menu.bob")
    (link,) = menu.screen["widgets"]
    assert link["type"] == "link" and link["title"] == LINK_TEXT
    assert link["options"] == {"screen": "imported-500", "macros": {"S": "1"}}
