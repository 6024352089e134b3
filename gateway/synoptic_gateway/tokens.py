"""Tokens for scripts, services and people at a terminal: the client side of
signing in with the facility's OpenID Connect provider.

- :class:`ClientCredentials`: a service signs in as itself (client id and secret).
- :class:`DeviceCode`: a person at a terminal opens a URL, enters a code, signs
  in in a browser; the refresh token is kept in a file of their own
  (``~/.cache/synoptic/tokens.json``, mode 600) so the next command needs no
  sign-in while it is valid.
- :class:`Password`: the resource-owner password grant (the demo's test client).
- :class:`StaticToken`: a token handed over as it is.

Each is a :class:`TokenSource`: ``await source.token()`` returns a valid access
token, fetching a new one shortly before the held one expires. The CLI and
:class:`~synoptic_gateway.client.GatewayClient` take any of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

#: Seconds before a token's expiry at which a new one is fetched.
RENEW_AHEAD = 30.0
#: Largest answer read from the provider (bytes).
MAX_ANSWER = 256 * 1024


class SignInError(Exception):
    """The provider refused or could not be reached (the reason says which)."""


class TokenSource(Protocol):
    """Something that hands out valid access tokens."""

    async def token(self) -> str: ...

    @property
    def expires(self) -> float | None:
        """When the token last handed out ends (Unix seconds), if known."""
        ...


@dataclass
class StaticToken:
    """A token as it is (no renewal)."""

    value: str
    expires: float | None = None

    async def token(self) -> str:
        return self.value


@dataclass
class Endpoints:
    """The provider endpoints a client uses (from its discovery document)."""

    issuer: str
    token: str
    device: str | None

    @classmethod
    async def discover(cls, issuer: str, http: httpx.AsyncClient) -> Endpoints:
        issuer = issuer.rstrip("/")
        doc = await _json(http, "GET", f"{issuer}/.well-known/openid-configuration")
        if doc.get("issuer") != issuer:
            raise SignInError(f"{issuer} names issuer {doc.get('issuer')!r}")
        return cls(issuer, doc["token_endpoint"],
                   doc.get("device_authorization_endpoint"))  # fmt: skip


async def _json(
    http: httpx.AsyncClient, method: str, url: str, form: dict[str, str] | None = None
) -> dict[str, Any]:
    try:
        response = await http.request(method, url, data=form)
    except httpx.HTTPError as exc:
        raise SignInError(f"the identity provider cannot be reached: {exc}") from None
    body = response.content[:MAX_ANSWER]
    try:
        answer = json.loads(body)
    except ValueError:
        raise SignInError(f"{url} answered {response.status_code}, not JSON") from None
    if not isinstance(answer, dict):
        raise SignInError(f"{url} answered {response.status_code}: {answer!r:.200}")
    if response.status_code >= 400 and "error" not in answer:
        raise SignInError(f"{url} answered {response.status_code}")
    return answer


def _check(answer: dict[str, Any]) -> dict[str, Any]:
    if "error" in answer:
        text = answer.get("error_description") or answer["error"]
        raise SignInError(f"the identity provider refused: {text}")
    if not isinstance(answer.get("access_token"), str):
        raise SignInError("the identity provider's answer holds no access token")
    return answer


@dataclass
class _Grant:
    """Shared by the sources: discovery, the held token, renewal before expiry."""

    issuer: str
    client_id: str
    timeout: float = 10.0
    _endpoints: Endpoints | None = field(default=None, init=False, repr=False)
    _access: str | None = field(default=None, init=False, repr=False)
    _refresh: str | None = field(default=None, init=False, repr=False)
    _expires: float | None = field(default=None, init=False, repr=False)
    _lock: asyncio.Lock | None = field(default=None, init=False, repr=False)

    @property
    def expires(self) -> float | None:
        return self._expires

    async def endpoints(self, http: httpx.AsyncClient) -> Endpoints:
        if self._endpoints is None:
            self._endpoints = await Endpoints.discover(self.issuer, http)
        return self._endpoints

    def _take(self, answer: dict[str, Any]) -> str:
        answer = _check(answer)
        self._access = answer["access_token"]
        self._refresh = answer.get("refresh_token") or self._refresh
        lifetime = answer.get("expires_in")
        self._expires = (
            time.time() + float(lifetime) if isinstance(lifetime, int | float) else None
        )
        self._saved(answer)
        return str(self._access)

    def _saved(self, answer: dict[str, Any]) -> None:
        """Hook: keep the tokens (the device-code source writes its file)."""

    def _fresh(self) -> bool:
        return self._access is not None and (
            self._expires is None or self._expires - time.time() > RENEW_AHEAD
        )

    async def token(self) -> str:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._fresh():
                return str(self._access)
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                endpoints = await self.endpoints(http)
                if self._refresh:
                    answer = await _json(http, "POST", endpoints.token, {
                        "grant_type": "refresh_token", "client_id": self.client_id,
                        "refresh_token": self._refresh, **self._secret(),
                    })  # fmt: skip
                    if "error" not in answer:
                        return self._take(answer)
                    self._refresh = None  # expired or revoked: sign in again
                return self._take(await self._grant(http, endpoints))

    def _secret(self) -> dict[str, str]:
        return {}

    async def _grant(
        self, http: httpx.AsyncClient, endpoints: Endpoints
    ) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class ClientCredentials(_Grant):
    """A service signs in as itself: the client-credentials grant."""

    secret: str = ""
    scope: str = ""

    def _secret(self) -> dict[str, str]:
        return {"client_secret": self.secret}

    async def _grant(self, http: httpx.AsyncClient, endpoints: Endpoints) -> dict:
        form = {"grant_type": "client_credentials", "client_id": self.client_id,
                "client_secret": self.secret}  # fmt: skip
        if self.scope:
            form["scope"] = self.scope
        return await _json(http, "POST", endpoints.token, form)


@dataclass
class Password(_Grant):
    """The resource-owner password grant (the demo's test client only)."""

    user: str = ""
    password: str = ""

    async def _grant(self, http: httpx.AsyncClient, endpoints: Endpoints) -> dict:
        return await _json(http, "POST", endpoints.token, {
            "grant_type": "password", "client_id": self.client_id,
            "username": self.user, "password": self.password, "scope": "openid",
        })  # fmt: skip


def default_cache() -> Path:
    """Where a person's tokens are kept between commands."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synoptic" / "tokens.json"


@dataclass
class DeviceCode(_Grant):
    """A person at a terminal: the device-authorization grant (RFC 8628).
    ``prompt`` is told the URL and code to open; tokens are kept in ``cache``."""

    prompt: Callable[[str, str], None] = lambda url, code: print(
        f"Sign in: open {url} and enter {code}", flush=True
    )
    cache: Path | None = field(default_factory=default_cache)
    scope: str = "openid profile"

    def __post_init__(self) -> None:
        held = self._load()
        if held:
            self._access = held.get("access_token")
            self._refresh = held.get("refresh_token")
            self._expires = held.get("expires_at")

    def _key(self) -> str:
        return f"{self.issuer.rstrip('/')} {self.client_id}"

    def _load(self) -> dict[str, Any] | None:
        if self.cache is None or not self.cache.exists():
            return None
        with contextlib.suppress(OSError, ValueError):
            held = json.loads(self.cache.read_text()).get(self._key())
            return held if isinstance(held, dict) else None
        return None

    def _saved(self, answer: dict[str, Any]) -> None:
        if self.cache is None:
            return
        self.cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        held: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            held = json.loads(self.cache.read_text())
        held[self._key()] = {"access_token": self._access,
                             "refresh_token": self._refresh,
                             "expires_at": self._expires}  # fmt: skip
        fd = os.open(self.cache, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as file:
            json.dump(held, file)

    def forget(self) -> None:
        """Sign out: drop the kept tokens."""
        self._access = self._refresh = self._expires = None
        if self.cache is None or not self.cache.exists():
            return
        with contextlib.suppress(OSError, ValueError):
            held = json.loads(self.cache.read_text())
            held.pop(self._key(), None)
            self.cache.write_text(json.dumps(held))

    async def _grant(self, http: httpx.AsyncClient, endpoints: Endpoints) -> dict:
        if not endpoints.device:
            raise SignInError("the identity provider offers no device sign-in")
        start = _check_device(await _json(http, "POST", endpoints.device, {
            "client_id": self.client_id, "scope": self.scope,
        }))  # fmt: skip
        self.prompt(
            start.get("verification_uri_complete") or start["verification_uri"],
            start["user_code"],
        )
        interval = float(start.get("interval", 5))
        deadline = time.monotonic() + float(start.get("expires_in", 600))
        while time.monotonic() < deadline:
            await asyncio.sleep(interval)  # the provider's polling interval (RFC 8628)
            answer = await _json(http, "POST", endpoints.token, {
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "client_id": self.client_id, "device_code": start["device_code"],
            })  # fmt: skip
            error = answer.get("error")
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                interval += 5
                continue
            return answer
        raise SignInError("the sign-in was not completed in time")


def _check_device(answer: dict[str, Any]) -> dict[str, Any]:
    if "error" in answer:
        text = answer.get("error_description") or answer["error"]
        raise SignInError(f"the identity provider refused: {text}")
    for key in ("device_code", "user_code", "verification_uri"):
        if not isinstance(answer.get(key), str):
            raise SignInError(f"the device sign-in answer lacks {key!r}")
    return answer
