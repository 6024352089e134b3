"""What the README and docs/ tell a reader to type exists: every repository path
they name (a file, a folder, a glob with at least one match), every `make`
target, and every `synoptic` command with its options (checked against the real
argument parser). The commands that change state are run by the other tests of
this folder (the getting-started tutorial, the user guide's examples, the
troubleshooting page) and by the packages' own tests; the deployment commands by
`make validate-deploy`. Decision records are left out: they describe the code of
their day."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import tomllib
from functools import cache
from pathlib import Path

import pytest

from synoptic_bus.cli import build_parser

ROOT = Path(__file__).parents[2]
PAGES = [
    ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if "decisions" not in p.parts),
]  # fmt: skip
TOP = sorted(p.name for p in ROOT.iterdir() if not p.name.startswith("."))
#: Paths made by running things, not kept in the repository.
MADE = ("ui/dist", "var/", "loadtest/bin", "loadtest/results/", ".venv", ".tools",
        "ui/node_modules")  # fmt: skip
PATH = re.compile(
    r"(?<![\w./:-])((?:" + "|".join(re.escape(t) for t in TOP) + r")(?:/[\w.*@+-]+)*/?)"
)
CODE = re.compile(r"```[a-z]*\n(.*?)```|`([^`\n]+)`", re.S)


def code(page: Path) -> list[str]:
    """The code spans and the lines of code blocks of a page."""
    out = []
    for block, span in CODE.findall(page.read_text(encoding="utf-8")):
        out.extend(block.splitlines() if block else [span])
    return out


def ids(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=ids)
def test_every_path_named_exists(page: Path) -> None:
    missing = []
    for text in code(page):
        if "://" in text and not text.startswith(("synoptic", ".venv")):
            text = re.sub(r"\S+://\S+", "", text)
        for path in PATH.findall(text):
            path = path.rstrip(".")
            if path.startswith(MADE) or path in TOP:
                continue
            here = ROOT / "ui" if text.lstrip().startswith("cd ui") else ROOT
            if not (list(ROOT.glob(path)) or list(here.glob(path))):
                missing.append(path)
    assert sorted(set(missing)) == []


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([a-z][\w.-]*):", text, re.M))


@pytest.mark.parametrize("page", PAGES, ids=ids)
def test_every_make_target_exists(page: Path) -> None:
    unknown = []
    for text in code(page):
        for match in re.finditer(r"(?:^|[\s;&(])make ((?:[a-z][\w-]*\s*)+)", text):
            for target in match.group(1).split():
                if target.endswith("-"):  # `make bench-*`: a family of targets
                    continue
                if target not in make_targets() and "=" not in target:
                    unknown.append(target)
    assert sorted(set(unknown)) == []


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def check_synoptic(argv: list[str]) -> list[str]:
    """What of ``synoptic ARGV…`` the real parser does not know: commands, then
    options of the command reached (values and placeholders are not checked)."""
    parser = build_parser()
    path = ["synoptic"]
    words = list(argv)
    while words and not words[0].startswith("-"):
        sub = _sub(parser, words[0])
        if sub is None:
            break
        path.append(words.pop(0))
        parser = sub
    commands = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
    if commands and words and not words[0].startswith("-"):
        return [f"{' '.join(path)} has no command {words[0]}"]
    known = {o for a in parser._actions for o in a.option_strings}
    known |= {"--verbose", "-v"}
    bad = []
    for word in words:
        if word.startswith("--") and word.split("=")[0] not in known:
            bad.append(f"{' '.join(path)}: no option {word}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=ids)
def test_every_synoptic_command_parses(page: Path) -> None:
    problems = []
    for text in code(page):
        for line in text.replace("\\|", "|").split(" && "):
            match = re.match(
                r"\s*(?:\w+=\S+\s+)*(?:\S*/)?synoptic ([a-z][^#|>]*)", line
            )
            if not match:
                continue
            try:
                argv = shlex.split(match.group(1))
            except ValueError:
                argv = match.group(1).split()
            argv = [w for w in argv if w not in ("…", "...")]
            if any(w.endswith(":") for w in argv[:3]):
                continue  # a message a command prints (`synoptic gateway: port …`)
            problems += check_synoptic(argv)
    assert problems == []


def test_every_top_level_folder_is_a_room_of_the_readme() -> None:
    """README's "What is where" names every folder of the repository's root."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## What is where\n", 1)[1].split("\n## ", 1)[0]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    folders = {f.split("/", 1)[0] for f in tracked if "/" in f}
    folders = {f for f in folders if not f.startswith(".")}
    assert "gateway" in folders
    assert sorted(f for f in folders if f"`{f}/`" not in table) == []


def test_every_workspace_member_is_a_part_of_the_architecture() -> None:
    """docs/architecture.md's table of parts has a row for every package."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    members = pyproject["tool"]["uv"]["workspace"]["members"]
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| ")]
    assert [m for m in members if not any(f"`{m}/" in row for row in rows)] == []
