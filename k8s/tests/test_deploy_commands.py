"""Every ``synoptic …`` command line that the deployment runs (Dockerfile CMDs,
compose commands, container commands of every rendered overlay) is accepted by
the real ``synoptic`` argument parser, so a renamed or removed flag fails here,
not in a cluster."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml
from deploy_helpers import DOCKERFILES, REPO, parse_dockerfile, run_tool

from synoptic_bus.cli import build_parser


def dockerfile_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in DOCKERFILES:
        for stage in parse_dockerfile(path):
            for keyword, args in stage.instructions:
                if keyword == "CMD" and args.startswith("["):
                    found.append((f"{path.name}:{stage.name}", json.loads(args)))
    return found


def compose_commands(composecheck: Path) -> list[tuple[str, list[str]]]:
    result = run_tool(composecheck, REPO / "docker-compose.yml")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    return [
        (f"compose:{n}", s["command"])
        for n, s in services.items()
        if s.get("command")  # (null for an image's own command)
    ]


def k8s_commands(kustomize: Path) -> list[tuple[str, list[str]]]:
    found = []
    for overlay in ("dev", "production"):
        result = run_tool(kustomize, "build", REPO / "k8s/overlays" / overlay)
        assert result.returncode == 0, result.stderr
        for obj in yaml.safe_load_all(result.stdout):
            if obj["kind"] not in {"Deployment", "StatefulSet", "Job"}:
                continue
            for container in obj["spec"]["template"]["spec"]["containers"]:
                if "command" in container:
                    where = f"{overlay}:{obj['metadata']['name']}/{container['name']}"
                    found.append((where, container["command"]))
    return found


def test_every_synoptic_command_parses(composecheck: Path, kustomize: Path) -> None:
    commands = [
        (where, argv)
        for where, argv in dockerfile_commands()
        + compose_commands(composecheck)
        + k8s_commands(kustomize)
        if argv[0] == "synoptic"
    ]
    seen = {tuple(argv[1:3]) for _, argv in commands}
    assert {("adapter", "epics"), ("adapter", "tango"), ("gateway", "--host")} <= seen
    assert {("sim", "ioc"), ("sim", "tango"), ("bus", "init")} <= seen
    parser = build_parser()
    for where, argv in commands:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            try:
                parser.parse_args(argv[1:])
            except SystemExit:
                pytest.fail(f"{where}: {' '.join(argv)}\n{errors.getvalue()}")
