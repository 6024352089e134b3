"""docs/benchmarks.md's tables are what the committed results make of them, and
the generator touches only the marked blocks."""

from __future__ import annotations

import re

import pytest

from synoptic_benchmarks.tables import PAGE, TABLES, TablesError, load_results, render

STORE = {
    "benchmark": "last-value store",
    "machine": {"date": "2026-01-02T03:04:05Z", "cpus": 2, "load_avg_1m": 0.5},
    "channels": 5000,
    "results": [
        {"storage": "memory", "published_per_s": 150000, "nats_server_cpu_percent": 40.0,
         "nats_server_rss_mib": 30.0, "read_1000_ms": 12.5, "read_5000_ms": 30.0},
    ],
}  # fmt: skip


def test_the_committed_page_matches_the_committed_results() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert render(text, load_results()) == text, (
        "docs/benchmarks.md differs from benchmarks/results/*.json: "
        "run `make bench-tables` and commit the page"
    )


def test_every_table_of_the_registry_is_on_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in TABLES:
        assert f"<!-- bench:{name} -->" in text and f"<!-- /bench:{name} -->" in text


def test_every_table_on_the_page_is_generated() -> None:
    text = PAGE.read_text(encoding="utf-8")
    outside = re.sub(
        r"<!-- bench:([a-z0-9-]+) -->.*?<!-- /bench:\1 -->", "", text, flags=re.S
    )
    hand_made = [line for line in outside.splitlines() if line.startswith("|")]
    assert hand_made == [], "a table outside the <!-- bench:NAME --> blocks"


def test_only_the_marked_block_is_rewritten() -> None:
    page = "intro\n<!-- bench:store -->\nold table\n<!-- /bench:store -->\noutro\n"
    out = render(page, {"store": STORE})
    assert out.startswith(
        "intro\n<!-- bench:store -->\n*Measured 2026-01-02 03:04:05 UTC"
    )
    assert "| memory | 150 000 | 40.0 % | 30.0 | 12.5 | 30.0 |" in out
    assert "old table" not in out
    assert out.endswith("<!-- /bench:store -->\noutro\n")
    assert render(out, {"store": STORE}) == out  # idempotent


def test_a_transcribed_run_says_so() -> None:
    report = {
        **STORE,
        "machine": {**STORE["machine"], "transcribed_from": "a quiet run"},
    }
    page = "<!-- bench:store -->\n<!-- /bench:store -->\n"
    assert "*Transcribed from a quiet run; 2 cores (shared).*" in render(
        page, {"store": report}
    )


@pytest.mark.parametrize(
    ("page", "results", "problem"),
    [
        ("<!-- bench:nope -->\n<!-- /bench:nope -->", {}, "names no table"),
        ("<!-- bench:store -->\n<!-- /bench:store -->", {}, "no results/store.json"),
        (
            "<!-- bench:store -->\n<!-- /bench:store -->",
            {"store": {"results": 1}},
            "store.json",
        ),
    ],
)
def test_bad_blocks_and_results_are_named(
    page: str, results: dict, problem: str
) -> None:
    with pytest.raises(TablesError, match=problem):
        render(page, results)
