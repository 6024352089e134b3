"""Dockerfiles: hadolint-clean, multi-stage, pinned bases, non-root runtime,
and each image's ``uv sync`` line installs exactly its part of the lock (tried
for real into a scratch environment, offline, from the uv cache)."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest
from deploy_helpers import DOCKERFILES, REPO, final_stage, parse_dockerfile, run_tool

# image → (Dockerfile, build targets, distributions it must and must not hold)
IMAGES = {
    "epics": ("epics.Dockerfile", ["adapter", "sim"], {"aioca", "epicscorelibs"}),
    "tango": ("tango.Dockerfile", ["adapter", "sim"], {"pytango"}),
    "gateway": ("gateway.Dockerfile", [None], {"fastapi", "uvicorn"}),
    "alarms": ("alarms.Dockerfile", [None], {"defusedxml", "nats-py"}),
}
FOREIGN = {"aioca", "epicscorelibs", "pytango", "fastapi", "uvicorn"}


def test_every_dockerfile_is_known() -> None:
    assert sorted(p.name for p in DOCKERFILES) == sorted(
        f for f, _, _ in IMAGES.values()
    )


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_is_clean(hadolint: Path, dockerfile: Path) -> None:
    result = run_tool(hadolint, "--failure-threshold", "style", dockerfile)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_catches_a_bad_dockerfile(hadolint: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get install -y curl\n")
    result = run_tool(hadolint, "--failure-threshold", "style", bad)
    assert result.returncode == 1
    assert "DL3007" in result.stdout  # latest tag
    assert "DL3008" in result.stdout  # unpinned apt package


@pytest.mark.parametrize("image", IMAGES)
def test_multi_stage_pinned_non_root(image: str) -> None:
    filename, targets, _ = IMAGES[image]
    stages = parse_dockerfile(REPO / "docker" / filename)
    names = {s.name for s in stages}
    assert len(stages) >= 3, "multi-stage: uv, build and runtime at least"
    for stage in stages:
        if stage.base in names:
            continue
        tag = stage.base.partition(":")[2]
        assert re.fullmatch(r"\d+\.\d+\.\d+[\w.-]*", tag), f"{stage.base}: pin x.y.z"
    for target in targets:
        chain = final_stage(stages, target)
        user = next((s.last("USER") for s in chain if s.last("USER")), None)
        assert user is not None, f"{filename}:{target}: no USER"
        uid = user.split(":")[0]
        assert uid.isdigit() and int(uid) >= 1000, f"{filename}: USER {user}"
        assert any(s.last("CMD") for s in chain), f"{filename}:{target}: no CMD"
        runtime_copies = [a for s in chain for kw, a in s.instructions if kw == "COPY"]
        assert not any(a.split()[-1] in {".", "/src/"} for a in runtime_copies), (
            "the runtime stage copies the venv, not the source tree"
        )


def _uv_sync_args(filename: str) -> list[str]:
    """Arguments of the Dockerfile's final ``uv sync`` (the one that installs code)."""
    stages = parse_dockerfile(REPO / "docker" / filename)
    runs = [a for s in stages for kw, a in s.instructions if kw == "RUN"]
    syncs = [r for r in runs if "uv sync" in r]
    assert len(syncs) == 2, "a dependency layer, then the code layer"
    assert "--no-install-workspace" in syncs[0]
    words = shlex.split(syncs[-1].split("uv sync", 1)[1])
    for flag in ("--frozen", "--no-dev", "--no-editable", "--package"):
        assert flag in words, f"{filename}: uv sync without {flag}"
    return words


@pytest.mark.parametrize("image", IMAGES)
def test_uv_sync_installs_only_what_the_image_needs(image: str, tmp_path: Path) -> None:
    filename, _, needed = IMAGES[image]
    env = {
        **os.environ,
        "UV_PROJECT_ENVIRONMENT": str(tmp_path / "venv"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    uv = REPO / ".tools/bin/uv"
    argv = [
        uv,
        "sync",
        *_uv_sync_args(filename),
        "--offline",
        "--python",
        sys.executable,
    ]
    result = run_tool(*argv, env=env, timeout=240)
    assert result.returncode == 0, result.stderr
    python = tmp_path / "venv/bin/python"
    listing = run_tool(
        python,
        "-c",
        "import importlib.metadata as m; print('\\n'.join(sorted("
        "d.metadata['Name'].lower() for d in m.distributions())))",
    )
    installed = set(listing.stdout.split())
    assert needed <= installed
    assert not (FOREIGN - needed) & installed, (FOREIGN - needed) & installed
    assert (tmp_path / "venv/bin/synoptic").exists()


def test_dockerignore_keeps_the_context_small() -> None:
    ignored = set((REPO / ".dockerignore").read_text().split())
    for entry in (".git", ".venv", ".tools", "**/node_modules", "ui/dist", "var"):
        assert entry in ignored, entry
