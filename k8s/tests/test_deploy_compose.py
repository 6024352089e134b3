"""docker-compose.yml: valid against the Compose Specification (compose-go, the
loader Docker Compose uses, schema + consistency checks) and true to our policy:
every service health-checked (a one-shot init step: its exit status), start order
gated on health, images pinned, hardened containers, build targets that exist,
one HDB++ archive for the archiver and the gateway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import REPO, final_stage, parse_dockerfile, run_tool

COMPOSE = REPO / "docker-compose.yml"


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
    assert set(services["adapter-epics"]["depends_on"]) == {"nats", "sim-ioc"}
    assert set(services["adapter-pva"]["depends_on"]) == {"nats", "sim-pva"}
    assert set(services["adapter-tango"]["depends_on"]) == {"nats", "sim-tango"}
    assert set(services["archive-init"]["depends_on"]) == {"archive-db"}
    assert set(services["archiver"]["depends_on"]) == {"nats", "archive-init"}
    assert set(services["gateway"]["depends_on"]) == {"nats"}
    assert set(services["rollup"]["depends_on"]) == {"nats"}
    assert set(services["alarms"]["depends_on"]) == {"nats"}


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
    assert "--jetstream" in nats["command"]
    assert any(v["target"] == "/data" for v in nats["volumes"])


def test_our_containers_are_hardened(project: dict[str, Any]) -> None:
    for name, service in project["services"].items():
        if name == "nats":
            continue
        assert service.get("read_only") is True, name
        assert service.get("cap_drop") == ["ALL"], name
        assert "no-new-privileges:true" in service.get("security_opt", []), name


def test_build_targets_exist_and_run_as_non_root(project: dict[str, Any]) -> None:
    built = {n: s for n, s in project["services"].items() if "build" in s}
    # every service but nats and archive-db (the rollup, the archiver and its
    # init step run the gateway image; the alarm service its own)
    assert len(built) == 11
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
    for name in ("adapter-epics", "adapter-tango"):
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
