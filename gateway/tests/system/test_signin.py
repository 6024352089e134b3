"""Sign-in against the real provider (Keycloak with the demo realm): the demo
users get their groups' grants through the role file, services sign in with client
credentials, every bad token is refused with its reason and audited on
``cs.audit.auth``, a token renews on a live socket without losing an update, a
renewal with another user's token is refused, an expired socket keeps reading,
rotated keys and a reloaded role file take effect without a restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_gateway.tokens import ClientCredentials, Password
from synoptic_identity.admin import RealmKeys, client_token, password_token
from synoptic_identity.keycloak import KeycloakServer
from synoptic_identity.realm import (
    FUTURE_CLIENT,
    NO_AUDIENCE_CLIENT,
    OTHER_CLIENT,
    OTHER_REALM,
    OTHER_SECRET,
    SCRIPT_CLIENT,
    SCRIPT_SECRET,
    SHORT_CLIENT,
    TESTS_CLIENT,
)
from synoptic_schemas import encode, frames, parse_channel
from synoptic_schemas.subjects import Subjects

pytestmark = [pytest.mark.system, pytest.mark.timeout(900)]

ROLES = Path(__file__).resolve().parents[3] / "docker" / "config" / "roles.toml"
SETPOINT = "ca://DEMO:SP"
COMMAND = "tango://127.0.0.1:10000/sim/test/1/reset"
LEEWAY = 5.0  # the gateway's tolerance of clock differences (auth.LEEWAY)


@pytest.fixture(scope="module")
def roles_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("roles") / "roles.toml"
    shutil.copy(ROLES, path)
    return path


@pytest.fixture(scope="module")
def signed(
    nats_server: NatsServer, keycloak: KeycloakServer, roles_file: Path
) -> Iterator[GatewayProc]:
    """A gateway of the demo's kind: anonymous reading, the provider, the roles."""
    gw = start_gateway(
        nats_server.url, "--oidc-issuer", keycloak.issuer, "--roles", str(roles_file),
        "--allow-anonymous", "--jwks-min-interval", "0", "--jwks-refresh", "2",
    )  # fmt: skip
    yield gw
    gw.stop()


def user_token(keycloak: KeycloakServer, user: str, client: str = TESTS_CLIENT) -> str:
    return str(password_token(keycloak.issuer, user, client=client)["access_token"])


@contextlib.asynccontextmanager
async def adapter(nc: NatsClient):
    """Answers writes of SETPOINT and the COMMAND like the owning adapters."""
    subjects = Subjects()

    async def ok(msg) -> None:
        await msg.respond(encode({"ver": 1, "ok": True}))

    subs = [await nc.subscribe(subjects.put(parse_channel(SETPOINT)), cb=ok),
            await nc.subscribe(subjects.cmd(parse_channel(COMMAND)), cb=ok)]  # fmt: skip
    await nc.flush()
    try:
        yield
    finally:
        for sub in subs:
            await sub.unsubscribe()


class Audits(list):
    """Records that arrive, and a way to wait for them."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    async def wait(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self) < count:
                self.arrived.clear()
                await self.arrived.wait()


@contextlib.asynccontextmanager
async def auth_audits(nc: NatsClient):
    """The ``cs.audit.auth`` records published meanwhile (a list that fills)."""
    from synoptic_schemas import decode

    records = Audits()

    async def on(msg) -> None:
        records.append(decode(msg.data))
        records.arrived.set()

    sub = await nc.subscribe("cs.audit.auth", cb=on)
    await nc.flush()
    try:
        yield records
    finally:
        await sub.unsubscribe()


async def test_each_demo_user_gets_the_grants_of_their_group(
    signed: GatewayProc, keycloak: KeycloakServer, nc: NatsClient
) -> None:
    async with adapter(nc):
        for user, may_write, may_edit in [("viewer", False, False),
                                          ("operator", True, False),
                                          ("engineer", True, True)]:  # fmt: skip
            token = user_token(keycloak, user)
            async with GatewayClient(signed.ws_url, token=token) as client:
                assert client.hello["user"] == user
                assert client.hello["write"] is may_write
                assert client.hello["exp"] > time.time()
                put = await client.put(SETPOINT, 1.5)
                assert put["ok"] is may_write, (user, put)
                cmd = await client.command(COMMAND)
                assert cmd["ok"] is may_write, (user, cmd)
            screen = {"title": "t", "widgets": []}
            status, _, _ = signed.api("PUT", f"/api/screens/by-{user}",
                                      {"screen": screen, "base_revision": 0},
                                      token=token)  # fmt: skip
            assert status == (200 if may_edit else 403), user
            whoami = signed.api("GET", "/api/whoami", token=token)[1]
            assert whoami["user"] == user and whoami["name"].endswith(user.title())
        service = ClientCredentials(
            keycloak.issuer, SCRIPT_CLIENT, secret=SCRIPT_SECRET
        )
        async with GatewayClient(signed.ws_url, token=service) as client:
            assert client.hello["user"] == f"service-account-{SCRIPT_CLIENT}"
            assert (await client.put(SETPOINT, 2.0))["ok"] is True


def forged(keycloak: KeycloakServer, *, kid: str | None = None, alg: str = "RS256"):
    """A real token's claims signed with a key of our own (``kid``: the real one
    unless given), or unsigned (``alg`` none)."""
    real = user_token(keycloak, "operator")
    claims = jwt.decode(real, options={"verify_signature": False})
    if alg == "none":
        return jwt.encode(claims, None, "none")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = kid or jwt.get_unverified_header(real)["kid"]
    return jwt.encode(claims, key, "RS256", headers={"kid": kid})


async def test_bad_tokens_are_refused_with_their_reason_and_audited(
    signed: GatewayProc, keycloak: KeycloakServer, nc: NatsClient
) -> None:
    short = user_token(keycloak, "operator", SHORT_CLIENT)
    other = f"{keycloak.url}/realms/{OTHER_REALM}"
    cases = {
        "not valid yet": user_token(keycloak, "operator", FUTURE_CLIENT),
        "not meant for 'synoptic'": user_token(
            keycloak, "operator", NO_AUDIENCE_CLIENT
        ),
        "is not the provider's": client_token(other, OTHER_CLIENT, OTHER_SECRET)[
            "access_token"
        ],  # another issuer: signed by a key this provider does not have
        "unsigned tokens are refused": forged(keycloak, alg="none"),
        "signature does not verify": forged(keycloak),
        f"{'unknown-kid'!r} is not the provider's": forged(keycloak, kid="unknown-kid"),
    }
    exp = jwt.decode(short, options={"verify_signature": False})["exp"]
    async with auth_audits(nc) as audits:
        for reason, token in cases.items():
            with pytest.raises(ConnectionClosed):
                async with connect(signed.ws_url, additional_headers={
                        "Authorization": f"Bearer {token}"}) as ws:  # fmt: skip
                    first = frames.unpack(await ws.recv())
                    assert first["code"] == "unauthorized" and reason in first["msg"]
                    await ws.recv()
            assert signed.api("GET", "/api/whoami", token=token)[0] == 401
        # the short-lived token's own life (4 s) and the gateway's leeway
        await asyncio.sleep(max(0.0, exp + LEEWAY + 0.5 - time.time()))
        status, body, _ = signed.api("GET", "/api/whoami", token=short)
        assert status == 401 and body["reason"] == "the token expired"
        await audits.wait(2 * len(cases) + 1)
    for audit in audits:
        assert audit["op"] == "refused" and audit["by"] == signed.gateway_id()
        assert audit["at"] in ("connect", "http")
        assert "eyJ" not in str(audit)  # never the token itself
    assert {a["who"] for a in audits} >= {"operator"}
    assert "the token expired" in audits[-1]["reason"]


def _read(path: Path) -> str:
    return path.read_text()


def _write(path: Path, text: str) -> None:
    path.write_text(text)


class AuthFrames:
    """Collects the ``auth`` frames a client receives (its ``on_frame``)."""

    def __init__(self) -> None:
        self.frames: list[dict] = []
        self.arrived = asyncio.Event()

    def __call__(self, frame: dict) -> None:
        if frame.get("op") == "auth":
            self.frames.append(frame)
            self.arrived.set()

    async def wait(self, predicate, timeout: float = 30.0) -> dict:
        async with asyncio.timeout(timeout):
            while not (found := [f for f in self.frames if predicate(f)]):
                self.arrived.clear()
                await self.arrived.wait()
        return found[-1]


async def test_a_token_renews_on_the_live_socket_without_losing_an_update(
    signed: GatewayProc, keycloak: KeycloakServer, publisher: Publisher, nc: NatsClient
) -> None:
    """1000 updates/s flow while the client renews its 4-second token before each
    end (an ``auth`` frame each time): every update arrives (no gap in seq), no
    reconnect, never downgraded; another user's token is refused and the socket
    keeps the grants it had."""
    uri = f"ca://RENEW:{uuid.uuid4().hex[:6].upper()}"
    await publisher.value(uri)
    seqs: list[int] = []
    auths = AuthFrames()
    source = Password(
        keycloak.issuer, SHORT_CLIENT, user="operator", password="operator"
    )
    async with adapter(nc), GatewayClient(signed.ws_url, token=source,
                                          on_frame=auths) as client:  # fmt: skip
        first_exp = client.hello["exp"]
        sub = await client.subscribe(
            [uri],
            on_update=lambda _s, _i, values: seqs.extend(v["seq"] for v in values),
        )
        start, sent = time.monotonic(), 0
        while time.monotonic() - start < 10.0:  # 2.5 token lifetimes at 1000/s
            due = int((time.monotonic() - start) * 1000)
            for _ in range(due - sent):
                await publisher.value(uri)
            sent = max(sent, due)
            await asyncio.sleep(0.005)  # the publishing pace
        last = publisher.seq[uri]
        await sub.wait_for(lambda s: s.value(uri)["seq"] >= last, timeout=30)
        renewed = [f for f in auths.frames if f["id"] is not None]
        assert len(renewed) >= 2 and renewed[-1]["exp"] > first_exp + 4
        assert not [f for f in auths.frames if f.get("expired")]
        assert seqs == list(range(seqs[0], last + 1)), "an update was lost"
        assert last - seqs[0] >= 9000 and client.connects == 1
        with pytest.raises(GatewayError) as info:
            await client.renew(user_token(keycloak, "engineer"))
        assert info.value.code == "unauthorized" and "engineer" in str(info.value)
        assert (await client.put(SETPOINT, 3.0))["ok"] is True  # grants kept


async def test_an_expired_socket_keeps_reading_and_loses_its_writes(
    signed: GatewayProc, keycloak: KeycloakServer, publisher: Publisher, nc: NatsClient
) -> None:
    uri = f"ca://EXP:{uuid.uuid4().hex[:6].upper()}"
    await publisher.value(uri)
    for _ in range(3):  # a token's 4 s may run out before its first put, under load
        token = user_token(keycloak, "operator", SHORT_CLIENT)
        exp = jwt.decode(token, options={"verify_signature": False})["exp"]
        auths = AuthFrames()
        async with adapter(nc), GatewayClient(signed.ws_url, token=token,
                                              on_frame=auths) as client:  # fmt: skip
            sub = await client.subscribe([uri])
            written = await client.put(SETPOINT, 1.0)
            if not written["ok"] and time.time() >= exp - 1:
                continue  # denied as it should be: too late to show the write
            assert written["ok"] is True, written
            expired = await auths.wait(lambda f: f.get("expired"))
            assert expired["write"] is False and "reading goes on" in expired["msg"]
            denied = await client.put(SETPOINT, 1.0)
            assert denied["ok"] is False and denied["err"] == "denied"
            seq = await publisher.value(uri)
            await sub.wait_for(lambda s, seq=seq: s.value(uri)["seq"] >= seq)
            return
    raise AssertionError("three tokens ran out before their first put")


async def test_a_rotated_key_works_at_once_and_a_removed_one_stops(
    signed: GatewayProc, keycloak: KeycloakServer
) -> None:
    before = user_token(keycloak, "viewer")
    new, old = RealmKeys(keycloak.url).rotate(f"rotated-{uuid.uuid4().hex[:6]}")
    after = user_token(keycloak, "viewer")
    assert jwt.get_unverified_header(after)["kid"] == new["kid"]
    status, body, _ = signed.api("GET", "/api/whoami", token=after)  # first use
    assert status == 200 and body["user"] == "viewer"
    # the gateway reads the keys every 2 s here: the removed one goes at the next read
    await asyncio.to_thread(signed.proc.wait_for, r"dropped \['" + old["kid"], 30)
    status, body, _ = signed.api("GET", "/api/whoami", token=before)
    assert status == 401 and "is not the provider's" in body["reason"]


async def test_a_changed_role_file_regrants_open_sockets(
    signed: GatewayProc, keycloak: KeycloakServer, roles_file: Path, nc: NatsClient
) -> None:
    original = _read(roles_file)
    auths = AuthFrames()
    async with (
        adapter(nc),
        GatewayClient(
            signed.ws_url, token=user_token(keycloak, "viewer"), on_frame=auths
        ) as client,
    ):
        assert client.hello["write"] is False
        try:
            _write(roles_file, original + '\n[[rule]]\nname = "viewers write SP"\n'
                                  f'groups = ["viewers"]\nwrite = ["{SETPOINT}"]\n')  # fmt: skip
            await auths.wait(lambda f: f["write"])
            assert (await client.put(SETPOINT, 4.0))["ok"] is True
            _write(roles_file, "[[rule]]\nname = 'broken'\n")  # refused: kept
            await asyncio.to_thread(signed.proc.wait_for, "role file not reloaded", 30)
            assert (await client.put(SETPOINT, 5.0))["ok"] is True
        finally:
            _write(roles_file, original)


async def synoptic(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the ``synoptic`` command: its exit code and what it says (both streams,
    without the lines of its log)."""
    import os
    import re
    import sys

    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("SYNOPTIC_CLIENT", "SYNOPTIC_TOKEN", "SYNOPTIC_OIDC"))}  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "synoptic_bus.cli", *argv,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**clean, **(env or {})},
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
    except TimeoutError:
        proc.kill()  # never left running after the test
        await proc.wait()
        raise
    said = [ln for ln in out.decode().splitlines(keepends=True)
            if not re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ", ln)]  # fmt: skip
    return proc.returncode or 0, "".join(said)


SERVICE = {"SYNOPTIC_CLIENT_ID": SCRIPT_CLIENT, "SYNOPTIC_CLIENT_SECRET": SCRIPT_SECRET}


async def test_the_cli_writes_through_the_gateway_signed_in_as_a_service(
    signed: GatewayProc, keycloak: KeycloakServer, nc: NatsClient
) -> None:
    """``synoptic put|command --gateway``: the service signs in with its client
    credentials, the gateway's role file decides and its audit names the service;
    a person's token without the grant is denied; a wrong secret is said so."""
    from synoptic_schemas import decode

    audits: list[dict] = []
    got = asyncio.Event()

    async def on(msg) -> None:
        audits.append(decode(msg.data))
        got.set()

    sub = await nc.subscribe("cs.audit.>", cb=on)
    await nc.flush()
    gw = signed.http_url
    async with adapter(nc):
        rc, out = await synoptic("put", "--gateway", gw, SETPOINT, "2.5", env=SERVICE)
        assert (rc, out.strip()) == (0, f"put {SETPOINT}: ok"), out
        async with asyncio.timeout(10):
            while not any(a.get("ch") == SETPOINT for a in audits):
                got.clear()
                await got.wait()
        put = next(a for a in audits if a.get("ch") == SETPOINT)
        assert put["who"] == f"service-account-{SCRIPT_CLIENT}" and put["v"] == 2.5
        rc, out = await synoptic("command", "--gateway", gw, COMMAND, env=SERVICE)
        assert (rc, out.strip()) == (0, f"command {COMMAND}: ok"), out
        viewer = {"SYNOPTIC_TOKEN": user_token(keycloak, "viewer")}
        rc, out = await synoptic("put", "--gateway", gw, SETPOINT, "3", env=viewer)
        assert rc == 1 and f"put {SETPOINT}: denied" in out, out
        wrong = {**SERVICE, "SYNOPTIC_CLIENT_SECRET": "not-the-secret"}
        rc, out = await synoptic("put", "--gateway", gw, SETPOINT, "3", env=wrong)
        assert rc == 2 and "sign-in refused" in out, out
    await sub.unsubscribe()


async def test_the_cli_edits_screens_through_the_gateway_as_the_signed_in_user(
    signed: GatewayProc, keycloak: KeycloakServer, tmp_path: Path
) -> None:
    """``synoptic screens put|delete --gateway``: the engineer's edit is saved in
    their name; the service (operators) may not edit screens."""
    name = f"cli-{uuid.uuid4().hex[:6]}"
    file = tmp_path / "screen.json"
    file.write_text('{"title": "from the terminal", "widgets": []}')
    gw = signed.http_url
    engineer = {"SYNOPTIC_TOKEN": user_token(keycloak, "engineer")}
    rc, out = await synoptic("screens", "put", "--gateway", gw, name, str(file),
                             "-m", "first", env=engineer)  # fmt: skip
    assert rc == 0 and out.startswith(f"saved {name} revision "), out
    rc, out = await synoptic("screens", "put", "--gateway", gw, name, str(file),
                             "-m", "again", env=engineer)  # fmt: skip
    assert rc == 0, out  # the current revision is the base: an overwrite
    history = signed.api("GET", f"/api/screens/{name}/history",
                         token=engineer["SYNOPTIC_TOKEN"])[1]  # fmt: skip
    assert [(r["by"], r["summary"]) for r in history["revisions"]] == [
        ("engineer", "again"), ("engineer", "first")]  # fmt: skip
    rc, out = await synoptic("screens", "put", "--gateway", gw, name, str(file),
                             env=SERVICE)  # fmt: skip
    assert rc == 1 and "forbidden" in out and "may not edit" in out, out
    rc, out = await synoptic("screens", "delete", "--gateway", gw, name, env=engineer)
    assert rc == 0 and out.startswith(f"deleted {name} revision "), out


async def test_auth_explain_and_token_against_the_provider(
    keycloak: KeycloakServer, roles_file: Path
) -> None:
    """``synoptic auth explain --user`` names each grant and the rule that gave it;
    a forged token is refused; ``auth token`` prints the service's token."""
    issuer = ["--issuer", keycloak.issuer]
    rc, out = await synoptic("auth", "explain", "--user", "operator", "--password",
                             "operator", "--roles", str(roles_file), *issuer)  # fmt: skip
    assert rc == 0, out
    assert out.startswith("operator (Otto Operator), token valid until "), out
    assert "groups: operators" in out
    rule = '"operators write the demo setpoints and run the demo commands"'
    assert any(ln.split()[:2] == ["write", SETPOINT] and rule in ln
               for ln in out.splitlines()), out  # fmt: skip
    assert "screens  (nothing)" in out
    rc, out = await synoptic("auth", "explain", forged(keycloak), *issuer)
    assert rc == 1 and out.startswith("refused:"), out
    rc, out = await synoptic("auth", "token", *issuer, env=SERVICE)
    assert rc == 0, out
    claims = jwt.decode(out.strip(), options={"verify_signature": False})
    assert claims["azp"] == SCRIPT_CLIENT and claims["iss"] == keycloak.issuer
    rc, out = await synoptic("auth", "token", *issuer, env={
        **SERVICE, "SYNOPTIC_CLIENT_SECRET": "not-the-secret"})  # fmt: skip
    assert rc == 1 and out.startswith("synoptic auth token: "), out


def test_the_ui_learns_the_providers_endpoints_from_the_gateway(
    signed: GatewayProc, keycloak: KeycloakServer
) -> None:
    """``GET /api/auth`` names the provider's endpoints as its discovery document
    does: the browser goes to the sign-in page without reading that document."""

    def read(url: str) -> dict:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.load(answer)

    found = read(f"{keycloak.issuer}/.well-known/openid-configuration")
    deadline = time.monotonic() + 60
    # the gateway reads the provider's document, then its keys, in the background
    while not (config := read(f"{signed.http_url}/api/auth"))["provider_ok"]:
        assert time.monotonic() < deadline, "the gateway never read the provider"
        time.sleep(0.2)
    assert config["issuer"] == keycloak.issuer
    assert config["endpoints"] == {
        k: found[k]
        for k in ("authorization_endpoint", "token_endpoint", "end_session_endpoint")
    }
