"""Sign-in against the demo's provider (Keycloak with the demo realm, started here on
loopback, as the tests start it) and a gateway that signs people in with it,
measured three ways:

- **round trip in Chromium** (``ui/bench/signin-page.mjs``): the click on *Sign in*
  until the user's name is shown on the page (the provider's form filled by the
  script in between, not counted), each run in a fresh browser context; the first
  run (a JVM that has not served the page yet) is reported apart. The moments are
  the pages' own (the click and submit events, the form's first paint, the frame
  that shows the name); the driver's view (Playwright's click with its checks, its
  polling for the name) is kept as ``driver_total_ms``. Goal ≤ 1 s.
- **token check per connection**: the gateway's own path for a connection's bearer
  token (``Authenticator.principal``: signature against the cached JWKS key, issuer,
  audience, expiry, then the role file's grants), in process, with a real access
  token of the realm. Goal ≤ 0.2 ms.
- **a rotated key**: a new signing key added and the old one removed through
  Keycloak's admin API; then connections with a token signed by the new key until
  one is accepted, on a gateway with its default JWKS settings: how many it took
  (goal 1) and how long that one took.

JSON on stdout; ``--save`` keeps it in ``benchmarks/results/auth.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import jwt
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.auth import Authenticator
from synoptic_gateway.settings import Settings
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_identity.admin import RealmKeys, password_token
from synoptic_identity.keycloak import KeycloakServer

ROOT = Path(__file__).resolve().parents[3]
UI = ROOT / "ui"
ROLES = ROOT / "docker" / "config" / "roles.toml"
SIGNIN_GOAL_MS = 1000.0
CHECK_GOAL_MS = 0.2
ROTATION_GOAL = 1


def _ms(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    return {
        "median": round(statistics.median(s), 1),
        "min": round(s[0], 1),
        "max": round(s[-1], 1),
    }


def signin_round_trip(gateway: GatewayProc, user: str, runs: int) -> dict[str, Any]:
    """``runs`` + 1 sign-ins in Chromium, each in a new browser (the first reported
    apart), then ``runs`` more by a returning person (one browser, its cache kept,
    signed out in between)."""
    out = subprocess.run(
        ["node", "bench/signin-page.mjs", gateway.http_url, user, str(runs + 1)],
        cwd=UI, check=True, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    said = json.loads(out.stdout.strip().splitlines()[-1])
    first, rest, again = said["runs"][0], said["runs"][1:], said["returning"]

    def times(done: list[dict[str, float]]) -> dict[str, Any]:
        return {
            "runs": len(done),
            "total_ms": _ms([r["total_ms"] for r in done]),
            "to_provider_ms": _ms([r["to_provider_ms"] for r in done]),
            "back_ms": _ms([r["back_ms"] for r in done]),
            "driver_total_ms": _ms([r["driver_total_ms"] for r in done]),
        }

    return {
        "user": user,
        "measured": "in the page: click and submit events, the form's first "
        "contentful paint, the frame after the name enters the DOM",
        "first_ms": first["total_ms"],
        **times(rest),
        "returning": times(again),
        "goal_ms": SIGNIN_GOAL_MS,
    }


async def token_check(issuer: str, user: str, n: int) -> dict[str, Any]:
    """The gateway's verification and grants of one real token, ``n`` times."""
    settings = Settings(nats_url="", oidc_issuer=issuer, roles_file=ROLES)
    auth = Authenticator(settings)
    await auth.start()
    try:
        token = str(password_token(issuer, user)["access_token"])
        who = await auth.principal(token)  # reads the keys once
        assert who.name == user and who.write, who
        claims, _ = await auth.verify(token)
        rounds: dict[str, list[float]] = {"principal": [], "verify": [], "grants": []}
        for _ in range(5):  # alternated, in rounds
            t0 = time.perf_counter()
            for _ in range(n // 5):
                await auth.principal(token)
            t1 = time.perf_counter()
            for _ in range(n // 5):
                await auth.verify(token)
            t2 = time.perf_counter()
            for _ in range(n // 5):
                auth.from_claims(claims, oidc=True)
            t3 = time.perf_counter()
            per = 1000.0 / (n // 5)
            rounds["principal"].append((t1 - t0) * per)
            rounds["verify"].append((t2 - t1) * per)
            rounds["grants"].append((t3 - t2) * per)
        # the rules matched for an identity the role map has not seen (a fresh copy of
        # the map each time: it keeps the grants of each identity it has worked out)
        mapping = auth.role_map
        assert mapping is not None
        who = mapping.identity(user, claims)
        t0 = time.perf_counter()
        for _ in range(n // 5):
            replace(mapping).grants(who)
        first_grants_ms = (time.perf_counter() - t0) * 1000.0 / (n // 5)
        header = jwt.get_unverified_header(token)
        return {
            "user": user,
            "alg": header.get("alg"),
            "checks": n,
            "per_connection_ms": round(statistics.median(rounds["principal"]), 4),
            "verify_ms": round(statistics.median(rounds["verify"]), 4),
            "grants_ms": round(statistics.median(rounds["grants"]), 4),
            "grants_new_identity_ms": round(first_grants_ms, 4),
            "rounds_ms": [round(x, 4) for x in rounds["principal"]],
            "token_bytes": len(token),
            "goal_ms": CHECK_GOAL_MS,
        }
    finally:
        await auth.close()


async def _connect_as(gateway: GatewayProc, token: str) -> tuple[bool, str]:
    """One WebSocket connection with the token: accepted (the gateway's hello names
    the user), or refused with its reason."""
    try:
        async with connect(
            gateway.ws_url + "?format=json",
            additional_headers={"Authorization": f"Bearer {token}"},
            open_timeout=30,
        ) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
    except (ConnectionClosed, InvalidStatus) as exc:
        return False, str(exc)
    if first.get("op") == "hello":
        return True, str(first.get("user"))
    return False, str(first.get("msg") or first)


async def rotation(keycloak: KeycloakServer, gateway: GatewayProc, user: str) -> dict:
    """Rotate the realm's signing key; connect with a token of the new key until
    accepted (10 tries at most)."""
    keys = RealmKeys(keycloak.url)
    new, old = keys.rotate(f"bench-{uuid.uuid4().hex[:6]}")
    token = str(password_token(keycloak.issuer, user)["access_token"])
    kid = jwt.get_unverified_header(token)["kid"]
    assert kid == new["kid"] and kid != old["kid"]
    tries: list[dict[str, Any]] = []
    for _ in range(10):
        t0 = time.perf_counter()
        ok, said = await _connect_as(gateway, token)
        tries.append({"accepted": ok, "ms": round((time.perf_counter() - t0) * 1000, 1),
                      "said": said[:200]})  # fmt: skip
        if ok:
            break
    return {
        "connections_until_accepted": len(tries) if tries[-1]["accepted"] else None,
        "accepted_connection_ms": tries[-1]["ms"] if tries[-1]["accepted"] else None,
        "tries": tries,
        "gateway_jwks": "defaults (a read on an unknown kid, at most one per 5 s)",
        "goal": ROTATION_GOAL,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"benchmark": "auth", "machine": machine()}
    nats = NatsServer().start()
    keycloak = KeycloakServer()
    gateway: GatewayProc | None = None
    try:
        t0 = time.monotonic()
        keycloak.start()
        report["provider"] = {"keycloak_start_s": round(time.monotonic() - t0, 1)}
        gateway = start_gateway(
            nats.url, "--allow-anonymous", "--oidc-issuer", keycloak.issuer,
            "--roles", str(ROLES), "--ui", str(UI / "dist"),
        )  # fmt: skip
        report["signin"] = await asyncio.to_thread(
            signin_round_trip, gateway, args.user, args.runs
        )
        report["check"] = await token_check(keycloak.issuer, args.user, args.checks)
        report["rotation"] = await rotation(keycloak, gateway, args.user)
    finally:
        if gateway is not None:
            gateway.stop()
        keycloak.close()
        nats.close()
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="operator", help="the demo user signing in")
    parser.add_argument("--runs", type=int, default=5, help="sign-ins measured")
    parser.add_argument("--checks", type=int, default=5000, help="token checks timed")
    add_save_option(parser)
    args = parser.parse_args(argv)
    emit("auth", asyncio.run(run(args)), save=args.save)


if __name__ == "__main__":
    main()
