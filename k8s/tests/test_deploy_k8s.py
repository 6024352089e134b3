"""k8s/: every overlay renders with the pinned kustomize, every rendered object
passes ``kubernetes-validate --strict`` (oldest and newest Kubernetes we
support), and the manifests hold to the deployment's rules: hardened pods,
probes and graceful drain on the gateway, a 3-node NATS cluster whose routes
match its StatefulSet, NetworkPolicies that let every NATS client through."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_helpers import REPO, run_tool

OVERLAYS = ["dev", "production"]
K8S_VERSIONS = ["1.30.0", "1.37.0"]
KUBERNETES_VALIDATE = REPO / ".venv/bin/kubernetes-validate"
WORKLOADS = {"Deployment", "StatefulSet", "Job"}


def render(kustomize: Path, overlay: str) -> str:
    result = run_tool(kustomize, "build", REPO / "k8s/overlays" / overlay)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest, kustomize: Path) -> tuple[str, str]:
    """(overlay, rendered YAML)."""
    return request.param, render(kustomize, request.param)


@pytest.fixture(scope="module")
def objects(rendered: tuple[str, str]) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(rendered[1]) if doc]


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [
        o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name
    ]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def pod_specs(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for obj in objects:
        if obj["kind"] in WORKLOADS:
            yield f"{obj['kind']}/{obj['metadata']['name']}", obj["spec"]["template"]


def all_containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    spec = template["spec"]
    return spec.get("initContainers", []) + spec["containers"]


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_rendered_manifests_validate_strictly(
    rendered: tuple[str, str], version: str, tmp_path: Path
) -> None:
    overlay, text = rendered
    manifest = tmp_path / f"{overlay}.yaml"
    manifest.write_text(text)
    result = run_tool(
        KUBERNETES_VALIDATE, "--strict", "--quiet", "-k", version, manifest
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ERROR" not in result.stdout + result.stderr


def test_strict_validation_rejects_a_misspelled_field(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"
        "spec: {ports: [{port: 80}], selectr: {a: b}}\n"
    )
    result = run_tool(KUBERNETES_VALIDATE, "--strict", "--quiet", manifest)
    assert result.returncode != 0
    assert "selectr" in result.stdout + result.stderr


def test_overlays_differ_where_they_should(kustomize: Path) -> None:
    dev = list(yaml.safe_load_all(render(kustomize, "dev")))
    prod = list(yaml.safe_load_all(render(kustomize, "production")))
    assert {
        o["metadata"].get("namespace") for o in dev if o["kind"] != "Namespace"
    } == {"synoptic-dev"}
    assert {o["kind"] for o in prod} >= {"Ingress"}
    assert not [o for o in prod if o["kind"] == "Secret"], "no secrets in production"

    def containers(objects: list[dict[str, Any]]) -> set[str]:
        return {
            c["name"] for _, t in pod_specs(objects) for c in t["spec"]["containers"]
        }

    assert {"sim-ioc", "sim-tango"} <= containers(dev)
    assert not {"sim-ioc", "sim-tango"} & containers(prod)


def test_every_pod_is_hardened(objects: list[dict[str, Any]]) -> None:
    for name, template in pod_specs(objects):
        spec = template["spec"]
        assert spec.get("automountServiceAccountToken") is False, name
        pod_sc = spec["securityContext"]
        assert pod_sc["runAsNonRoot"] is True, name
        assert pod_sc["runAsUser"] >= 1000, name
        assert pod_sc["seccompProfile"]["type"] == "RuntimeDefault", name
        for container in all_containers(template):
            sc = container["securityContext"]
            where = f"{name}/{container['name']}"
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["capabilities"]["drop"] == ["ALL"], where
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), where
            assert "memory" in resources["limits"], where
            image = container["image"]
            tag = image.rsplit(":", 1)[-1] if ":" in image.split("/")[-1] else ""
            assert tag and tag != "latest", f"{where}: image {image} not pinned"


def test_env_references_are_defined_before_use(objects: list[dict[str, Any]]) -> None:
    """Kubernetes expands $(VAR) only from variables defined earlier."""
    for name, template in pod_specs(objects):
        for container in all_containers(template):
            defined: set[str] = set()
            for var in container.get("env", []):
                for ref in re.findall(r"\$\((\w+)\)", var.get("value", "")):
                    assert ref in defined, f"{name}: {var['name']} uses $({ref})"
                defined.add(var["name"])


def test_gateway_probes_drain_and_autoscaling(
    rendered: tuple[str, str], objects: list[dict[str, Any]]
) -> None:
    overlay = rendered[0]
    deployment = find(objects, "Deployment", "gateway")
    assert "replicas" not in deployment["spec"], "the HPA owns the replica count"
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    assert pod["terminationGracePeriodSeconds"] >= int(pre_stop[1]) + 20
    hpa = find(objects, "HorizontalPodAutoscaler", "gateway")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "gateway",
    }
    assert hpa["spec"]["minReplicas"] >= (3 if overlay == "production" else 1)
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    down = hpa["spec"]["behavior"]["scaleDown"]
    assert down["stabilizationWindowSeconds"] >= 300
    pdb = find(objects, "PodDisruptionBudget", "gateway")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = find(objects, "Service", "gateway")
    assert service["spec"]["selector"].items() <= labels.items()


def test_nats_is_a_three_node_jetstream_cluster(objects: list[dict[str, Any]]) -> None:
    sts = find(objects, "StatefulSet", "nats")
    replicas = sts["spec"]["replicas"]
    assert replicas == 3
    headless = find(objects, "Service", sts["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True
    config = find(objects, "ConfigMap", sts_configmap(sts))["data"]
    routes = re.findall(r"nats://(\S+):6222", config["nats.conf"])
    assert routes == [
        f"{sts['metadata']['name']}-{i}.{headless['metadata']['name']}"
        for i in range(replicas)
    ]
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    (container,) = sts["spec"]["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    store_dir = re.search(r'store_dir:\s*"([^"]+)"', config["nats.conf"])
    assert store_dir and store_dir[1].startswith(mounts[claim["metadata"]["name"]])
    assert "lame_duck_duration" in config["nats.conf"]
    assert "-sl=ldm" in " ".join(container["lifecycle"]["preStop"]["exec"]["command"])
    pdb = find(objects, "PodDisruptionBudget", "nats")
    assert pdb["spec"]["maxUnavailable"] == 1
    job = find(objects, "Job", "bus-init")
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--replicas") + 1] == str(replicas)
    assert command[command.index("--storage") + 1] == "file"


def sts_configmap(sts: dict[str, Any]) -> str:
    volumes = sts["spec"]["template"]["spec"]["volumes"]
    return next(v["configMap"]["name"] for v in volumes if "configMap" in v)


def test_network_policies_admit_every_nats_client(
    objects: list[dict[str, Any]],
) -> None:
    policies = {
        o["metadata"]["name"]: o for o in objects if o["kind"] == "NetworkPolicy"
    }
    deny = policies["default-deny-ingress"]["spec"]
    assert deny["podSelector"] == {} and deny["policyTypes"] == ["Ingress"]
    (client_rule, *_) = policies["nats"]["spec"]["ingress"]
    client_label = client_rule["from"][0]["podSelector"]["matchLabels"]
    for name, template in pod_specs(objects):
        env = [
            v["name"] for c in template["spec"]["containers"] for v in c.get("env", [])
        ]
        if "SYNOPTIC_NATS_URL" in env:
            labels = template["metadata"]["labels"]
            assert client_label.items() <= labels.items(), f"{name} is cut off NATS"


def test_adapter_ids_agree(objects: list[dict[str, Any]]) -> None:
    """The heartbeat probe watches the id the adapter's config gives itself."""
    for proto in ("epics", "pva", "tango"):
        deployment = find(objects, "Deployment", f"adapter-{proto}")
        pod = deployment["spec"]["template"]["spec"]
        assert deployment["spec"]["replicas"] == 1
        assert deployment["spec"]["strategy"]["type"] == "Recreate"
        env = {v["name"]: v.get("value") for v in pod["containers"][0]["env"]}
        config_map = next(
            v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v
        )
        config = yaml.safe_load(
            find(objects, "ConfigMap", config_map)["data"]["adapter.yaml"]
        )
        assert config["id"] == env["SYNOPTIC_ADAPTER_ID"]


def test_namespaces_enforce_restricted_pod_security(
    objects: list[dict[str, Any]],
) -> None:
    (namespace,) = [o for o in objects if o["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_production_talks_to_nats_over_tls_only(kustomize: Path) -> None:
    objects = list(yaml.safe_load_all(render(kustomize, "production")))
    urls = {
        f"{name}/{c['name']}": v["value"]
        for name, template in pod_specs(objects)
        for c in all_containers(template)
        for v in c.get("env", [])
        if v["name"] == "SYNOPTIC_NATS_URL"
    }
    assert len(urls) >= 6  # gateway, 2 adapters + their init containers, bus-init
    for where, url in urls.items():
        assert url.startswith("tls://"), f"{where}: {url}"
    config = next(
        o
        for o in objects
        if o["kind"] == "ConfigMap" and "tls.conf" in o.get("data", {})
    )["data"]
    assert "cert_file" in config["tls.conf"]
    assert "verify: true" in config["cluster-tls.conf"]


def test_the_archive_is_reached_by_its_clients_only(
    objects: list[dict[str, Any]],
) -> None:
    """Every pod given the HDB++ DSN (archiver, its init Job, gateways) carries
    the label the archive database admits, takes the DSN from the Secret
    `hdbpp`, and gateways may leave for it (their egress is otherwise closed)."""
    policies = {
        o["metadata"]["name"]: o for o in objects if o["kind"] == "NetworkPolicy"
    }
    (rule,) = policies["archive-db"]["spec"]["ingress"]
    client_label = rule["from"][0]["podSelector"]["matchLabels"]
    assert rule["ports"] == [{"port": 5432, "protocol": "TCP"}]
    clients = set()
    for name, template in pod_specs(objects):
        for container in all_containers(template):
            for var in container.get("env", []):
                if var["name"] != "SYNOPTIC_ARCHIVE_DSN":
                    continue
                assert var["valueFrom"]["secretKeyRef"]["name"] == "hdbpp", name
                labels = template["metadata"]["labels"]
                assert client_label.items() <= labels.items(), f"{name} cut off"
                clients.add(name)
    assert clients == {
        "Deployment/archiver", "Job/archive-init", "Deployment/gateway",
    }  # fmt: skip
    egress = policies["gateway"]["spec"]["egress"]
    assert any(
        to.get("podSelector", {}).get("matchLabels")
        == {"app.kubernetes.io/name": "archive-db"}
        and {"port": 5432, "protocol": "TCP"} in e["ports"]
        for e in egress
        for to in e["to"]
    ), "gateways cannot reach the archive"


def test_archive_database_init_job_and_one_archiver(
    objects: list[dict[str, Any]],
) -> None:
    db = find(objects, "StatefulSet", "archive-db")
    assert db["spec"]["replicas"] == 1
    (container,) = db["spec"]["template"]["spec"]["containers"]
    assert container["image"].split(":")[0] == "postgres"
    env = {v["name"]: v for v in container["env"]}
    assert env["PGDATA"]["value"].startswith(container["volumeMounts"][0]["mountPath"])
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "hdbpp"
    (claim,) = db["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == container["volumeMounts"][0]["name"]
    service = find(objects, "Service", "archive-db")
    assert service["spec"]["ports"][0]["port"] == 5432
    job = find(objects, "Job", "archive-init")
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command == ["synoptic", "archiver", "--schema-only"]
    archiver = find(objects, "Deployment", "archiver")
    assert archiver["spec"]["replicas"] == 1
    assert archiver["spec"]["strategy"]["type"] == "Recreate"
    pod = archiver["spec"]["template"]["spec"]
    (wait,) = pod["initContainers"]
    assert wait["command"][-1] == "archive"
    (main,) = pod["containers"]
    assert main["command"] == ["synoptic", "archiver"]
    url = next(v["value"] for v in main["env"] if v["name"] == "SYNOPTIC_NATS_URL")
    assert "//reader:" in url, "the archiver reads the bus as the read-only user"


def test_production_gateways_sign_people_in_with_the_facility_provider(
    kustomize: Path,
) -> None:
    """The issuer and the role file reach every gateway (envFrom gateway-signin,
    the gateway-roles ConfigMap mounted where SYNOPTIC_ROLES points, its name
    fixed so an edit reloads in place), the role file parses, a token is needed
    to read, and the gateways may reach the provider over HTTPS."""
    from synoptic_gateway.roles import RoleMap

    objects = list(yaml.safe_load_all(render(kustomize, "production")))
    (signin_map,) = [o for o in objects if o["kind"] == "ConfigMap"
                     and o["metadata"]["name"].startswith("gateway-signin")]  # fmt: skip
    signin = signin_map["data"]
    assert signin["SYNOPTIC_OIDC_ISSUER"].startswith("https://")
    roles = find(objects, "ConfigMap", "gateway-roles")["data"]["roles.toml"]
    assert RoleMap.parse(roles).rules
    gateway = find(objects, "Deployment", "gateway")["spec"]["template"]
    (container,) = gateway["spec"]["containers"]
    refs = [e["configMapRef"]["name"] for e in container["envFrom"]]
    assert signin_map["metadata"]["name"] in refs  # hashed: a change rolls out
    mount = next(m for m in container["volumeMounts"] if m["name"] == "roles")
    assert signin["SYNOPTIC_ROLES"] == mount["mountPath"] + "/roles.toml"
    volume = next(v for v in gateway["spec"]["volumes"] if v["name"] == "roles")
    assert volume["configMap"]["name"] == "gateway-roles"
    assert "--no-allow-anonymous" in container["command"]
    assert not [v for v in container.get("env", []) if "JWT" in v["name"]]
    policy = find(objects, "NetworkPolicy", "gateway-signin")["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "gateway"}
    assert policy["egress"][0]["ports"] == [{"port": 443, "protocol": "TCP"}]
