"""Every Markdown table of the README and docs/ renders as a table: a header, its
delimiter row, and rows of as many cells, with nothing but rows until a blank
line (a paragraph line inside a table ends it; rows after it show as text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
         *sorted((ROOT / "docs").rglob("*.md"))]  # fmt: skip
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
DELIMITER = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def cells(row: str) -> int:
    """Cells of a table row: pipes that are not escaped, less the outer two."""
    return len(re.findall(r"(?<!\\)\|", row.strip())) - 1


def problems(text: str) -> list[str]:
    lines = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text).splitlines()
    found = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line.startswith("|"):
            i += 1
            continue
        if i + 1 >= len(lines) or not DELIMITER.match(lines[i + 1].strip()):
            found.append(f"line {i + 1}: a table row without a header and delimiter")
        width = cells(line)
        while i < len(lines) and lines[i].strip().startswith("|"):
            if cells(lines[i]) != width:
                found.append(f"line {i + 1}: {cells(lines[i])} cells, header {width}")
            i += 1
        after = lines[i].strip() if i < len(lines) else ""
        if after and not after.startswith("<!--"):  # an HTML block ends a table
            found.append(f"line {i + 1}: text right after a table (no blank line)")
    return found


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.exists()], ids=lambda p: str(p.relative_to(ROOT))
)
def test_tables_render(page: Path) -> None:
    assert problems(page.read_text(encoding="utf-8")) == []
