"""docs/operations.md lists what the deployment has: every image target of
docker/*.Dockerfile in the images table (and a build command for each adapter
image), every manifest of k8s/base in the Kubernetes listing, every compose
service in the compose section, and the secrets the production overlay reads as
the deployment steps create them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[2]
PAGE = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
#: Build stages that are steps, not images.
STEPS = {"uv", "build", "ui", "runtime"}


def section(heading: str) -> str:
    return PAGE.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_every_image_is_in_the_table() -> None:
    table = section("## Images")
    for dockerfile in sorted((ROOT / "docker").glob("*.Dockerfile")):
        stages = re.findall(r"^FROM \S+ AS (\S+)", dockerfile.read_text(), re.M | re.I)
        targets = [s for s in stages if s not in STEPS]
        name = f"docker/{dockerfile.name}"
        assert name in table, name
        for target in targets:
            assert f"`{name}` (`{target}`)" in table, (name, target)
            if target.startswith("adapter"):
                assert f"-f {name} --target {target} " in table, (name, target)


def test_every_base_manifest_is_listed() -> None:
    listing = section("## Kubernetes").split("```")[1]
    for manifest in sorted((ROOT / "k8s" / "base").glob("*.yaml")):
        if manifest.name == "kustomization.yaml":
            continue
        assert manifest.name in listing, manifest.name


def test_every_compose_service_is_named() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    text = section("## One Docker host: docker-compose")
    assert [s for s in services if f"`{s}`" not in text] == []


def _secret_refs(node: Any, found: set[tuple[str, str]]) -> None:
    """(secret, key) of every env value read from a Secret (key "*": all of it,
    "" a secret mounted or named for TLS), optional ones left out."""
    if isinstance(node, dict):
        ref = node.get("secretKeyRef")
        if ref and not ref.get("optional"):
            found.add((ref["name"], ref["key"]))
        ref = node.get("secretRef")
        if ref and not ref.get("optional"):
            found.add((ref["name"], "*"))
        secret = node.get("secret")
        if isinstance(secret, dict) and not secret.get("optional"):
            found.add((secret["secretName"], ""))
        if isinstance(node.get("secretName"), str):
            found.add((node["secretName"], ""))
        for value in node.values():
            _secret_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _secret_refs(value, found)


def test_the_deployment_steps_create_every_secret_production_reads() -> None:
    """Following "Deployment steps (production)" to the letter gives the overlay
    every Secret and key it reads, and creates none it does not."""
    kustomize = ROOT / ".tools" / "deploy" / "kustomize"
    assert kustomize.exists(), "run `make deploy-tools` (make test does)"
    built = subprocess.run(
        [str(kustomize), "build", str(ROOT / "k8s" / "overlays" / "production")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    objects = [o for o in yaml.safe_load_all(built.stdout) if o]
    assert not [o for o in objects if o["kind"] == "Secret"]
    read: set[tuple[str, str]] = set()
    _secret_refs(objects, read)
    steps = section("### Deployment steps (production)")
    commands = steps.split("```sh", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    created: dict[str, set[str]] = {}
    for line in commands.splitlines():
        match = re.search(r"create secret generic (\S+)", line)
        if match:
            created[match.group(1)] = set(
                re.findall(r"--from-literal=(\w[\w.-]*)=", line)
            )
    missing = [
        f"{name}/{key}" if key not in ("", "*") else name
        for name, key in sorted(read)
        if not (name in created and (key in ("", "*") or key in created[name]))
        and not (key == "" and f"`{name}`" in steps)
    ]
    assert missing == [], "read by the production overlay, created by no step"
    unused = [
        f"{name}/{key}"
        for name, keys in sorted(created.items())
        for key in sorted(keys)
        if (name, key) not in read and (name, "*") not in read
    ]
    assert unused == [], "created by a step, read by nothing"
