"""The configuration reference (docs/reference/*.md) is what its generator writes
from the code today: a new option, key, setting or environment variable, a
changed default or help text makes this fail until `make docs-reference` runs."""

from __future__ import annotations

import os
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
