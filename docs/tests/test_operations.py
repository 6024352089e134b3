"""docs/operations.md lists what the deployment has: every image target of
docker/*.Dockerfile in the images table (and a build command for each adapter
image), every manifest of k8s/base in the Kubernetes listing, every compose
service in the compose section."""

from __future__ import annotations

import re
from pathlib import Path

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
