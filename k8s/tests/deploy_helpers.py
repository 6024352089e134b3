"""Paths and a subprocess helper shared by the deployment tests."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY_TOOLS = REPO / ".tools" / "deploy"
DOCKERFILES = sorted((REPO / "docker").glob("*.Dockerfile"))


def run_tool(
    *argv: str | Path,
    cwd: Path = REPO,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a tool, capture its output as text, never raise on exit status."""
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Stage:
    """One ``FROM`` stage of a Dockerfile and the instructions in it."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def last(self, keyword: str) -> str | None:
        """Arguments of the stage's last ``keyword`` instruction, if any."""
        found = [args for kw, args in self.instructions if kw == keyword]
        return found[-1] if found else None


def parse_dockerfile(path: Path) -> list[Stage]:
    """Stages of a Dockerfile: continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    stages: list[Stage] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, args = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.fullmatch(r"(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", args, re.I)
            assert match, f"{path.name}: cannot parse FROM {args}"
            stages.append(Stage(match[1], match[2]))
        else:
            assert stages, f"{path.name}: {keyword} before FROM"
            stages[-1].instructions.append((keyword, " ".join(args.split())))
    return stages


def final_stage(stages: list[Stage], target: str | None) -> list[Stage]:
    """The chain of stages a ``--target`` build ends with (the last if None),
    from the target back through stages it is built FROM."""
    by_name = {s.name: s for s in stages if s.name}
    stage = by_name[target] if target else stages[-1]
    chain = [stage]
    while stage.base in by_name:
        stage = by_name[stage.base]
        chain.append(stage)
    return chain
