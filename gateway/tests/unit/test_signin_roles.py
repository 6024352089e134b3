"""The role mapping: parsing (with clear refusals), matching groups, roles, users
and clients, the union of rules with the reason for each grant, and reloads."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from synoptic_gateway.roles import Grants, RoleFile, RoleMap, RoleMapError

DEMO = Path(__file__).resolve().parents[3] / "docker" / "config" / "roles.toml"

MAPPING = """
[claims]
groups = ["groups"]
roles = ["realm_access.roles"]

[[rule]]
name = "signed in"
signed_in = true
read = ["*"]

[[rule]]
name = "operators"
groups = ["operators", "engineers"]
write = ["ca://DEMO:*"]
command = ["tango://*/sim/test/1/*"]
ack = ["*"]

[[rule]]
name = "screen editors"
roles = ["synoptic-engineer"]
screens = ["*"]

[[rule]]
name = "the archiver service"
clients = ["archiver-*"]
read = ["ca://*"]
"""


def keycloak_claims(groups: list[str], roles: list[str], **more) -> dict:
    return {"sub": "u-1", "preferred_username": "enya", "groups": groups,
            "realm_access": {"roles": roles}, "azp": "synoptic-ui", **more}  # fmt: skip


def test_a_person_gets_the_union_of_the_rules_that_match_and_why() -> None:
    mapping = RoleMap.parse(MAPPING, "roles.toml")
    who = mapping.identity(
        "enya", keycloak_claims(["engineers"], ["synoptic-engineer"])
    )
    grants, because = mapping.grants(who)
    assert grants == Grants(read=("*",), write=("ca://DEMO:*",),
                            command=("tango://*/sim/test/1/*",), screens=("*",),
                            ack=("*",))  # fmt: skip
    reasons = {(b.kind, b.pattern): (b.rule, b.matched) for b in because}
    assert reasons[("write", "ca://DEMO:*")] == ("operators", "group engineers")
    assert reasons[("screens", "*")] == ("screen editors", "role synoptic-engineer")
    assert reasons[("read", "*")] == ("signed in", "signed in")


def test_a_viewer_reads_only_and_full_group_paths_match_by_name() -> None:
    mapping = RoleMap.parse(MAPPING)
    viewer = mapping.identity("vera", keycloak_claims(["/viewers"], []))
    assert mapping.grants(viewer)[0] == Grants(read=("*",))
    operator = mapping.identity("otto", keycloak_claims(["/site/operators"], []))
    assert mapping.grants(operator)[0].write == ("ca://DEMO:*",)


def test_a_service_matches_by_its_client() -> None:
    mapping = RoleMap.parse(MAPPING)
    service = mapping.identity("svc", {"sub": "s", "azp": "archiver-1"})
    grants, because = mapping.grants(service)
    assert grants.read == ("*", "ca://*") and not grants.write
    assert {b.matched for b in because} == {"signed in", "client archiver-1"}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[[rule]]\nname = 'x'\nread = ['*']", "matches nobody"),
        ("[[rule]]\nname = 'x'\ngroups = ['a']", "grants nothing"),
        ("[[rule]]\nname = 'x'\ngroups = ['a']\nwrtie = ['*']", "unknown key(s) ['wrtie']"),
        ("[[rule]]\ngroups = 'a'\nread = [1]", "'read' must be a string or a list"),
        ("[rules]\nx = 1", "unknown table(s) ['rules']"),
        ("[[rule]]\ngroups = [", "roles.toml: "),
        ("[[rule]]\nname='a'\nsigned_in=true\nread='*'\n[[rule]]\nname='a'\n"
         "signed_in=true\nread='*'", "two rules share a name"),
        ("[claims]\ngroup = 'g'", "[claims] may hold 'groups' and 'roles'"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(RoleMapError) as info:
        RoleMap.parse(text, "roles.toml")
    assert reason in str(info.value)


def test_the_demo_mapping_gives_each_demo_user_their_part() -> None:
    mapping = RoleMap.load(DEMO)

    def grants(group: str) -> Grants:
        return mapping.grants(mapping.identity(group, {"groups": [group]}))[0]

    viewer, operator, engineer = (
        grants("viewers"),
        grants("operators"),
        grants("engineers"),
    )
    assert viewer.read == ("*",) and not (
        viewer.write or viewer.command or viewer.screens
    )
    assert (
        "ca://DEMO:SP" in operator.write and operator.command and not operator.screens
    )
    assert engineer.screens == ("*",) and set(operator.write) <= set(engineer.write)


async def test_the_file_is_reloaded_when_it_changes_and_a_bad_one_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "roles.toml"
    path.write_text("[[rule]]\nname='r'\nsigned_in=true\nread=['ca://A*']\n")
    changed = asyncio.Event()
    roles = RoleFile(path, on_change=lambda _m: changed.set())
    roles.start()
    try:
        async with asyncio.timeout(20):
            while not changed.is_set():  # written again until the watcher has seen it
                path.write_text(
                    "[[rule]]\nname='r'\nsigned_in=true\nread=['ca://B*']\n"
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await changed.wait()
        assert roles.current.rules[0].grants.read == ("ca://B*",)
        assert roles.generation == 2
        path.write_text("[[rule]]\nname='r'\n")  # matches nobody: refused
        assert roles.reload() is False
        assert "matches nobody" in (roles.error or "")
        assert roles.current.rules[0].grants.read == ("ca://B*",)  # kept
    finally:
        await roles.close()
