"""Every adapter configuration the deployment ships (docker/config, and the
ConfigMaps of every rendered overlay) is accepted by the adapters' own loader,
including the Tango section's schema, with the id its probes expect."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from deploy_helpers import REPO, run_tool

from synoptic_adapters.config import parse_config
from synoptic_adapters.tango.settings import TangoSettings

COMPOSE_CONFIGS = {"epics": "epics-0", "pva": "pva-0", "tango": "tango-0"}


def check(text: str, proto: str, source: str) -> str:
    """Parse as the adapter does; return the configured id."""
    config = parse_config(text, proto, source=source)
    if proto == "tango":
        TangoSettings.from_section(config.section("tango"))
    assert config.id, f"{source}: no id (heartbeat probes need it)"
    return config.id


@pytest.mark.parametrize("proto", COMPOSE_CONFIGS)
def test_compose_configs_load(proto: str) -> None:
    path = REPO / "docker/config" / f"{proto}.yaml"
    assert check(path.read_text(), proto, str(path)) == COMPOSE_CONFIGS[proto]


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_rendered_configmaps_load(kustomize: Path, overlay: str) -> None:
    result = run_tool(kustomize, "build", REPO / "k8s/overlays" / overlay)
    assert result.returncode == 0, result.stderr
    checked = set()
    for obj in yaml.safe_load_all(result.stdout):
        name = obj["metadata"]["name"]
        if obj["kind"] == "ConfigMap" and name.startswith("adapter-"):
            proto = name.split("-")[1]
            check(obj["data"]["adapter.yaml"], proto, f"{overlay}:{name}")
            checked.add(proto)
    assert checked == {"epics", "pva", "tango"}


def test_a_broken_config_is_caught() -> None:
    with pytest.raises(ValueError, match="chanels"):
        check("id: x\nchanels: []\n", "epics", "bad.yaml")
