"""Tokens and key rotation on a running demo provider, for tests and benchmarks.

Tokens come from the realm's own endpoints (password grant of the tests' client,
client credentials of the script client); keys are managed through Keycloak's
admin REST API with the realm's key-managing service account.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from synoptic_identity.realm import (
    ADMIN_CLIENT,
    ADMIN_SECRET,
    REALM,
    SCRIPT_CLIENT,
    SCRIPT_SECRET,
    TESTS_CLIENT,
)


class ProviderError(RuntimeError):
    """The provider answered with an error (``status`` and its body)."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status = status
        self.body = body


def _request(
    url: str,
    *,
    form: dict[str, str] | None = None,
    body: Any = None,
    token: str | None = None,
    method: str | None = None,
) -> Any:
    headers = {"accept": "application/json"}
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["content-type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["content-type"] = "application/json"
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
            location = response.headers.get("location")
    except urllib.error.HTTPError as exc:
        raise ProviderError(exc.code, exc.read().decode(errors="replace")) from None
    if raw:
        return json.loads(raw)
    return location


def token_endpoint(issuer: str) -> str:
    return f"{issuer}/protocol/openid-connect/token"


def password_token(
    issuer: str, user: str, password: str | None = None, client: str = TESTS_CLIENT
) -> dict[str, Any]:
    """A demo user's tokens (``access_token``, ``refresh_token`` …); a demo user's
    password is its name."""
    return _request(  # type: ignore[no-any-return]
        token_endpoint(issuer),
        form={"grant_type": "password", "client_id": client, "username": user,
              "password": password if password is not None else user,
              "scope": "openid"},
    )  # fmt: skip


def refresh(issuer: str, refresh_token: str, client: str = TESTS_CLIENT) -> dict:
    """New tokens for a refresh token."""
    return _request(  # type: ignore[no-any-return]
        token_endpoint(issuer),
        form={"grant_type": "refresh_token", "client_id": client,
              "refresh_token": refresh_token},
    )  # fmt: skip


def client_token(
    issuer: str, client: str = SCRIPT_CLIENT, secret: str = SCRIPT_SECRET
) -> dict[str, Any]:
    """A service's tokens by the client-credentials grant."""
    return _request(  # type: ignore[no-any-return]
        token_endpoint(issuer),
        form={"grant_type": "client_credentials", "client_id": client,
              "client_secret": secret},
    )  # fmt: skip


class RealmKeys:
    """The realm's signing keys, through the admin API."""

    def __init__(self, server_url: str, realm: str = REALM) -> None:
        self.base = f"{server_url}/admin/realms/{realm}"
        self.issuer = f"{server_url}/realms/{realm}"

    def _token(self) -> str:
        answer = client_token(self.issuer, ADMIN_CLIENT, ADMIN_SECRET)
        return str(answer["access_token"])

    def keys(self) -> list[dict[str, Any]]:
        """Every key of the realm: ``kid``, ``providerId``, ``algorithm``,
        ``status`` (ACTIVE, PASSIVE, DISABLED), ``providerPriority`` …"""
        answer = _request(f"{self.base}/keys", token=self._token())
        return list(answer["keys"])

    def active_rs256(self) -> dict[str, Any]:
        """The key that signs new RS256 tokens (highest priority, active)."""
        candidates = [k for k in self.keys()
                      if k.get("algorithm") == "RS256" and k.get("status") == "ACTIVE"
                      and k.get("use", "SIG") == "SIG"]  # fmt: skip
        return max(candidates, key=lambda k: int(k.get("providerPriority", 0)))

    def add_rs256(self, name: str) -> dict[str, Any]:
        """A new RSA key that signs from now on (priority above every other);
        returns it."""
        top = max((int(k.get("providerPriority", 0)) for k in self.keys()), default=0)
        token = self._token()
        _request(
            f"{self.base}/components", token=token, method="POST",
            body={"name": name, "providerId": "rsa-generated",
                  "providerType": "org.keycloak.keys.KeyProvider",
                  "parentId": REALM,
                  "config": {"priority": [str(top + 10)], "enabled": ["true"],
                             "active": ["true"], "keySize": ["2048"],
                             "algorithm": ["RS256"]}},
        )  # fmt: skip
        key = self.active_rs256()
        if int(key.get("providerPriority", 0)) != top + 10:
            raise ProviderError(500, f"the new key is not the active one: {key}")
        return key

    def remove(self, key: dict[str, Any]) -> None:
        """Remove a key (its provider component): tokens it signed no longer
        verify against the realm's JWKS."""
        _request(f"{self.base}/components/{key['providerId']}", token=self._token(),
                 method="DELETE")  # fmt: skip

    def rotate(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Add a new signing key and remove the one that signed until now;
        returns (new, removed)."""
        old = self.active_rs256()
        new = self.add_rs256(name)
        self.remove(old)
        return new, old
