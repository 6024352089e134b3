"""docker-compose.yml: valid against the Compose Specification (compose-go, the
loader Docker Compose uses, schema + consistency checks) and true to our policy:
every service health-checked (a one-shot init step: its exit status), start order
gated on health, images pinned, hardened containers, build targets that exist,
one HDB++ archive for the archiver and the gateway, the bus initialised (history
streams included) before anything uses it, a NATS payload limit above the
largest demo value. docker/compose.facility.yml over it: no simulator, adapters
on the host's network reaching the servers the environment names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import REPO, final_stage, parse_dockerfile, run_tool

from synoptic_bus.natsserver import nats_server_executable
from synoptic_schemas.codec import MAX_PAYLOAD

COMPOSE = REPO / "docker-compose.yml"
FACILITY = REPO / "docker" / "compose.facility.yml"
NATS_CONF = REPO / "docker" / "config" / "nats.conf"
FACILITY_ENV = {
    "EPICS_CA_ADDR_LIST": "10.0.1.255 10.0.2.17",
    "EPICS_PVA_ADDR_LIST": "10.0.1.255",
    "TANGO_HOST": "tango-db.example.org:10000",
}


@pytest.fixture(scope="module")
def project(composecheck: Path) -> dict[str, Any]:
    result = run_tool(composecheck, COMPOSE)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_compose_has_the_whole_system(project: dict[str, Any]) -> None:
    assert set(project["services"]) == {
        "nats",
        "sim-ioc",
        "sim-pva",
        "sim-tango",
        "adapter-epics",
        "adapter-pva",
        "adapter-tango",
        "archive-db",
        "archive-init",
        "archiver",
        "bus-init",
        "gateway",
        "rollup",
        "alarms",
    }


def one_shot(service: dict[str, Any]) -> bool:
    """An init step that runs once and exits (its dependents wait for success)."""
    return service.get("restart") == "no"


def test_every_service_is_health_checked(project: dict[str, Any]) -> None:
    for name, service in project["services"].items():
        if one_shot(service):  # no image healthcheck while it runs
            assert service["healthcheck"]["disable"] is True, name
            continue
        check = service.get("healthcheck")
        assert check and check.get("test"), f"{name} has no healthcheck"
        assert check["test"][0] == "CMD", f"{name}: exec-form healthcheck expected"
        assert not check.get("disable"), name


def test_start_order_waits_for_health(project: dict[str, Any]) -> None:
    services = project["services"]
    for name, service in services.items():
        for dep, spec in service.get("depends_on", {}).items():
            wanted = (
                "service_completed_successfully"
                if one_shot(services[dep])
                else "service_healthy"
            )
            assert spec["condition"] == wanted, f"{name} → {dep}"
    bus = {"nats", "bus-init"}
    assert set(services["bus-init"]["depends_on"]) == {"nats"}
    assert set(services["adapter-epics"]["depends_on"]) == bus | {"sim-ioc"}
    assert set(services["adapter-pva"]["depends_on"]) == bus | {"sim-pva"}
    assert set(services["adapter-tango"]["depends_on"]) == bus | {"sim-tango"}
    assert set(services["archive-init"]["depends_on"]) == {"archive-db"}
    assert set(services["archiver"]["depends_on"]) == bus | {"archive-init"}
    assert set(services["gateway"]["depends_on"]) == bus
    assert set(services["rollup"]["depends_on"]) == bus
    assert set(services["alarms"]["depends_on"]) == bus


def test_the_bus_is_initialised_with_history(project: dict[str, Any]) -> None:
    """`synoptic bus init` runs once before anything uses the bus: the
    last-value stream, an hour of history (CS_HIST, CS_ROLL) and the screens."""
    init = project["services"]["bus-init"]
    assert init["restart"] == "no"
    command = init["command"]
    assert command[:3] == ["synoptic", "bus", "init"]
    assert "--history-window" not in command  # the default hour, never 0
    assert command[command.index("--storage") + 1] == "file"
    assert command[command.index("--screens") + 1] == "/app/screens"
    assert init["environment"]["SYNOPTIC_NATS_URL"] == "nats://nats:4222"


def test_the_archive_is_official_postgres_with_one_dsn(
    project: dict[str, Any],
) -> None:
    """The official PostgreSQL image, pinned, its volume kept; the archiver, its
    init step and the gateway share one DSN naming that database and user."""
    services = project["services"]
    db = services["archive-db"]
    repo, _, tag = db["image"].partition(":")
    assert repo == "postgres"
    assert tag[:1].isdigit() and tag.count(".") >= 1, f"unpinned tag {tag!r}"
    assert any(v["target"] == "/var/lib/postgresql/data" for v in db["volumes"])
    assert db["environment"]["PGDATA"].startswith("/var/lib/postgresql/data/")
    dsns = {services[n]["environment"]["SYNOPTIC_ARCHIVE_DSN"]
            for n in ("archive-init", "archiver", "gateway")}  # fmt: skip
    assert len(dsns) == 1
    (dsn,) = dsns
    fields = dict(part.split("=", 1) for part in dsn.split())
    env = db["environment"]
    assert fields["host"] == "archive-db"
    assert fields["dbname"] == env["POSTGRES_DB"]
    assert fields["user"] == env["POSTGRES_USER"]
    assert fields["password"] == env["POSTGRES_PASSWORD"]
    assert services["archiver"]["healthcheck"]["test"][-1] == "archive"
    assert services["archive-init"]["command"] == [
        "synoptic", "archiver", "--schema-only",
    ]  # fmt: skip


def test_nats_is_the_official_image_pinned_with_jetstream(
    project: dict[str, Any],
) -> None:
    nats = project["services"]["nats"]
    repo, _, tag = nats["image"].partition(":")
    assert repo == "nats"
    assert tag[:1].isdigit() and tag.count(".") >= 2, f"unpinned tag {tag!r}"
    assert nats["command"] == ["--config", "/etc/nats/nats.conf"]
    (config,) = nats["configs"]
    assert config["target"] == "/etc/nats/nats.conf"
    assert Path(project["configs"][config["source"]]["file"]) == NATS_CONF
    assert any(v["target"] == "/data" for v in nats["volumes"])


def test_nats_config_is_valid_with_jetstream_and_room_for_images() -> None:
    """nats-server accepts it; JetStream stores on the volume; a payload may be
    as large as the demo's (8 MiB: the simulated PV Access image is 2 MiB,
    above NATS's 1 MiB default)."""
    result = run_tool(nats_server_executable(), "-t", "-c", NATS_CONF)
    assert result.returncode == 0, result.stdout + result.stderr
    text = NATS_CONF.read_text()
    assert "store_dir: /data" in text
    assert "http_port: 8222" in text
    (limit,) = [line.split(":")[1].strip() for line in text.splitlines()
                if line.startswith("max_payload:")]  # fmt: skip
    assert limit.endswith("MB")
    assert int(limit[:-2]) * 1024 * 1024 >= MAX_PAYLOAD


def test_our_containers_are_hardened(project: dict[str, Any]) -> None:
    for name, service in project["services"].items():
        if name == "nats":
            continue
        assert service.get("read_only") is True, name
        assert service.get("cap_drop") == ["ALL"], name
        assert "no-new-privileges:true" in service.get("security_opt", []), name


def test_build_targets_exist_and_run_as_non_root(project: dict[str, Any]) -> None:
    built = {n: s for n, s in project["services"].items() if "build" in s}
    # every service but nats and archive-db (bus-init, the rollup, the archiver
    # and its init step run the gateway image; the alarm service its own)
    assert len(built) == 12
    for name, service in built.items():
        build = service["build"]
        dockerfile = Path(build["context"]) / build["dockerfile"]
        stages = parse_dockerfile(dockerfile)
        target = build.get("target")
        if target:
            assert target in {s.name for s in stages}, f"{name}: no stage {target}"
        user = next(
            (s.last("USER") for s in final_stage(stages, target) if s.last("USER")),
            None,
        )
        assert user and user.split(":")[0] not in {"0", "root"}, name


def test_adapter_ids_match_their_heartbeat_probes(project: dict[str, Any]) -> None:
    for name in ("adapter-epics", "adapter-pva", "adapter-tango"):
        service = project["services"][name]
        assert service["healthcheck"]["test"][-1] == "heartbeat"
        assert service["environment"]["SYNOPTIC_ADAPTER_ID"]
        assert service["environment"]["SYNOPTIC_NATS_URL"] == "nats://nats:4222"


def test_composecheck_rejects_invalid_files(composecheck: Path, tmp_path: Path) -> None:
    """The validator is strict: unknown keys and dangling dependencies fail."""
    unknown_key = tmp_path / "unknown.yml"
    unknown_key.write_text("services:\n  a:\n    image: x:1\n    bogus: 1\n")
    result = run_tool(composecheck, unknown_key)
    assert result.returncode == 1
    assert "bogus" in result.stderr

    dangling = tmp_path / "dangling.yml"
    dangling.write_text(
        "services:\n  a:\n    image: x:1\n    depends_on:\n"
        "      b:\n        condition: service_healthy\n"
    )
    result = run_tool(composecheck, dangling)
    assert result.returncode == 1
    assert "undefined service" in result.stderr

    no_dockerfile = tmp_path / "nodockerfile.yml"
    no_dockerfile.write_text(
        "services:\n  a:\n    build:\n      context: .\n      dockerfile: x.Dockerfile\n"
    )
    result = run_tool(composecheck, no_dockerfile)
    assert result.returncode == 1
    assert "x.Dockerfile" in result.stderr


def test_the_adapter_configs_leave_server_addresses_to_the_environment() -> None:
    """docker/config/*.yaml set no address key: a key set there would win over
    EPICS_CA_ADDR_LIST and the other variables compose and the facility file set
    (docs/reference/adapters.md#precedence)."""
    import yaml

    for proto, keys in (("epics", ("addr_list", "auto_addr_list", "name_servers")),
                        ("pva", ("addr_list", "auto_addr_list", "name_servers"))):  # fmt: skip
        config = yaml.safe_load((REPO / "docker/config" / f"{proto}.yaml").read_text())
        assert not set(config.get(proto, {})) & set(keys), proto


def facility(composecheck: Path, env: dict[str, str]) -> Any:
    argv: list[str | Path] = [composecheck]
    for name, value in env.items():
        argv += ["-e", f"{name}={value}"]
    return run_tool(*argv, COMPOSE, FACILITY)


def test_the_facility_file_replaces_the_simulators(composecheck: Path) -> None:
    """With docker/compose.facility.yml the simulators do not start, the adapters
    leave the simulators' network namespaces, wait for the bus only, and take
    the servers' addresses from the environment, as docs/operations.md says."""
    result = facility(composecheck, FACILITY_ENV)
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    assert not {"sim-ioc", "sim-pva", "sim-tango"} & set(services)
    for name in ("adapter-epics", "adapter-pva", "adapter-tango"):
        assert "network_mode" not in services[name], name
        assert set(services[name]["depends_on"]) == {"nats", "bus-init"}, name
    epics = services["adapter-epics"]["environment"]
    assert epics["EPICS_CA_ADDR_LIST"] == FACILITY_ENV["EPICS_CA_ADDR_LIST"]
    assert epics["EPICS_CA_AUTO_ADDR_LIST"] == "NO"
    pva = services["adapter-pva"]["environment"]
    assert pva["EPICS_PVA_ADDR_LIST"] == FACILITY_ENV["EPICS_PVA_ADDR_LIST"]
    assert (
        services["adapter-tango"]["environment"]["TANGO_HOST"]
        == (FACILITY_ENV["TANGO_HOST"])
    )
    assert {"nats", "bus-init", "gateway", "rollup"} <= set(services)


def test_the_facility_file_says_what_is_missing(composecheck: Path) -> None:
    result = facility(composecheck, {})
    assert result.returncode == 1
    assert "EPICS_CA_ADDR_LIST" in result.stderr
    assert "TANGO_HOST" in result.stderr


def test_the_gateway_signs_people_in_with_the_provider_it_is_given(
    project: dict[str, Any],
) -> None:
    """The issuer comes from the environment (unset: anonymous reading only); the
    role file is mounted where SYNOPTIC_ROLES points and parses."""
    from synoptic_gateway.roles import RoleMap

    gateway = project["services"]["gateway"]
    env = gateway["environment"]
    assert "SYNOPTIC_OIDC_ISSUER" in env
    mounted = {v["target"]: v["source"] for v in gateway["volumes"]}
    source = mounted[env["SYNOPTIC_ROLES"]]
    assert RoleMap.load(Path(source)).rules
    assert "--allow-anonymous" in gateway["command"]
