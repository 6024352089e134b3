"""Writes from the command line through a gateway, signed in.

``synoptic put --gateway URL``, ``synoptic command --gateway URL`` and ``synoptic
screens put|delete --gateway URL`` go to a gateway instead of straight to the bus:
its role file decides, its audit records who did it. The token comes from (first
that applies):

- ``$SYNOPTIC_TOKEN``: a token as it is (never renewed);
- ``$SYNOPTIC_CLIENT_ID`` with ``$SYNOPTIC_CLIENT_SECRET``: a service signs in as
  itself (client credentials);
- the sign-in kept by ``synoptic auth login`` (device code; a person at a terminal
  is asked to sign in when none is kept).

The provider is the one the gateway names (``GET /api/auth``) unless
``$SYNOPTIC_OIDC_ISSUER`` says otherwise; a gateway with no provider is used
without a token. ``synoptic_bus`` finds these functions through the
``synoptic.gateway`` entry point group, so it imports nothing of the gateway.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.tokens import (
    ClientCredentials,
    DeviceCode,
    SignInError,
    StaticToken,
    TokenSource,
)

#: The CLI's public client at the provider (the device-code sign-in).
DEVICE_CLIENT = "synoptic-cli"


class RemoteError(ConnectionError):
    """The gateway or the provider could not be reached, or refused the sign-in
    (``synoptic_bus`` catches :class:`ConnectionError`)."""


def base_url(gateway: str) -> str:
    """``http(s)://host:port`` of a gateway given as an http(s) or ws(s) URL."""
    parts = urlsplit(gateway if "://" in gateway else f"http://{gateway}")
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    if scheme not in ("http", "https") or not parts.netloc:
        raise RemoteError(f"--gateway {gateway!r}: give http(s)://HOST:PORT")
    return urlunsplit((scheme, parts.netloc, "", "", ""))


def ws_url(gateway: str) -> str:
    """The gateway's WebSocket endpoint."""
    base = base_url(gateway)
    return ("wss" + base[5:] if base.startswith("https") else "ws" + base[4:]) + "/ws"


async def issuer_of(gateway: str, http: httpx.AsyncClient) -> str | None:
    """The provider the gateway signs people in with (None: it names none)."""
    if issuer := os.environ.get("SYNOPTIC_OIDC_ISSUER"):
        return issuer
    try:
        answer = await http.get(f"{base_url(gateway)}/api/auth")
    except httpx.HTTPError as exc:
        raise RemoteError(
            f"gateway {base_url(gateway)} cannot be reached: {exc}"
        ) from None
    if answer.status_code == 404:
        return None  # a gateway that takes no provider's tokens
    if answer.status_code != 200:
        raise RemoteError(
            f"gateway {base_url(gateway)}: /api/auth {answer.status_code}"
        )
    return answer.json().get("issuer") or None


def prompt(url: str, code: str) -> None:
    """What a person at a terminal is told to do to sign in."""
    print(
        f"Sign in: open {url}\n  and enter the code {code}", file=sys.stderr, flush=True
    )


async def token_source(gateway: str) -> TokenSource | None:
    """Where this command's token comes from (None: no token)."""
    if static := os.environ.get("SYNOPTIC_TOKEN"):
        return StaticToken(static)
    async with httpx.AsyncClient(timeout=10.0) as http:
        issuer = await issuer_of(gateway, http)
    if issuer is None:
        return None
    client, secret = (
        os.environ.get("SYNOPTIC_CLIENT_ID"),
        os.environ.get("SYNOPTIC_CLIENT_SECRET"),
    )
    if client and secret:
        return ClientCredentials(issuer, client, secret=secret)
    return DeviceCode(issuer, client or DEVICE_CLIENT, prompt=prompt)


async def _signed(gateway: str) -> TokenSource | None:
    source = await token_source(gateway)
    if source is not None:
        try:
            await source.token()  # sign in now: a refusal is said before connecting
        except SignInError as exc:
            raise RemoteError(f"sign-in refused or impossible: {exc}") from exc
    return source


async def request(
    gateway: str, kind: str, uri: str, value: Any, timeout: float
) -> dict[str, Any]:
    """A put (``kind`` "put") or a command ("cmd", ``value`` None: no argument)
    through the gateway; the gateway's reply (``ok``, ``err``, ``msg``, ``v``)."""
    source = await _signed(gateway)
    client = GatewayClient(ws_url(gateway), token=source, shuffle=False)
    try:
        await client.connect(timeout=timeout + 10)
        if kind == "put":
            return await client.put(uri, value, timeout=timeout + 1)
        return await client.command(uri, value, timeout=timeout + 1)
    except GatewayError as exc:
        return {"ok": False, "err": exc.code, "msg": str(exc)}
    except (TimeoutError, OSError) as exc:
        raise RemoteError(
            f"gateway {base_url(gateway)} did not answer ({type(exc).__name__})"
        ) from exc
    finally:
        await client.close()


async def screen(
    gateway: str,
    method: str,
    name: str,
    body: dict[str, Any] | None,
    base_revision: int | None = None,
) -> tuple[int, dict[str, Any]]:
    """A screen API call (``GET``/``PUT``/``DELETE /api/screens/NAME``) with the
    sign-in's token; the status and the JSON answer."""
    source = await _signed(gateway)
    headers = {} if source is None else {
        "Authorization": f"Bearer {await source.token()}"}  # fmt: skip
    url = f"{base_url(gateway)}/api/screens/{quote(name, safe='')}"
    params = {} if base_revision is None else {"base_revision": str(base_revision)}
    try:
        async with httpx.AsyncClient(timeout=30.0) as http:
            answer = await http.request(method, url, json=body, headers=headers,
                                        params=params)  # fmt: skip
    except httpx.HTTPError as exc:
        raise RemoteError(
            f"gateway {base_url(gateway)} cannot be reached: {exc}"
        ) from None
    if method == "GET" and answer.status_code == 200:  # the body is the screen
        return 200, {"revision": int(answer.headers["x-synoptic-revision"])}
    try:
        data = answer.json()
    except ValueError:
        data = {"error": "failed", "reason": answer.text[:200]}
    return answer.status_code, data if isinstance(data, dict) else {"answer": data}
