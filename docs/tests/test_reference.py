"""The configuration reference (docs/reference/*.md) is what its generator writes
from the code today: a new option, key, setting or environment variable, a
changed default or help text makes this fail until `make docs-reference` runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
GENERATOR = ROOT / "docs" / "reference" / "generate.py"


def test_the_reference_pages_are_current() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNOPTIC_")}
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr + run.stdout


def test_every_page_is_linked_from_the_docs() -> None:
    pages = sorted(p.name for p in (ROOT / "docs" / "reference").glob("*.md"))
    index = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert [p for p in pages if f"reference/{p}" not in index] == []


#: A metric's name as the docs give it (Python modules are `synoptic_gateway.x`).
METRIC = re.compile(r"\bsynoptic_(?:gateway|adapter|alarms)_[a-z0-9_]+\b")


def test_every_metric_the_docs_name_is_one_a_scrape_shows() -> None:
    """A name from the docs, pasted into a Prometheus query, finds a series: the
    counters with their `_total`, as `reference/metrics.md` (generated) lists."""
    reference = (ROOT / "docs" / "reference" / "metrics.md").read_text(encoding="utf-8")
    series = set(re.findall(r"`(synoptic_[a-z0-9_]+)`", reference))
    assert "synoptic_gateway_updates_out_total" in series
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
             *sorted((ROOT / "docs").glob("*.md"))]  # fmt: skip
    unknown = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in pages
        for name in sorted(set(METRIC.findall(page.read_text(encoding="utf-8"))))
        if name not in series
    ]
    assert unknown == []


def test_every_environment_variable_the_docs_name_is_read() -> None:
    """A `SYNOPTIC_*` variable the docs tell a reader to set is one the code reads
    (`reference/environment.md`, generated) or, for test runs, one a test reads."""
    reference = (ROOT / "docs" / "reference" / "environment.md").read_text()
    known = set(re.findall(r"^\| `(SYNOPTIC_\w+)`", reference, re.M))
    assert "SYNOPTIC_NATS_URL" in known
    for test in ROOT.glob("*/tests/**/*.py"):
        known |= set(re.findall(r"[\"'](SYNOPTIC_\w+)[\"']", test.read_text()))
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
             *sorted((ROOT / "docs").glob("*.md"))]  # fmt: skip
    unknown = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in pages
        for name in sorted(set(re.findall(r"\bSYNOPTIC_[A-Z0-9_]+", page.read_text())))
        if name not in known
    ]
    assert unknown == []
