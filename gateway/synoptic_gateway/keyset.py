"""The provider's signing keys: its discovery document and JWKS, read from the
issuer URL and cached.

Guarantees: a token whose ``kid`` is cached is checked without any request; an
unknown ``kid`` makes one read of the JWKS (shared by every token waiting for it,
at most one per ``min_interval`` seconds), so a rotated key is accepted on the
first token that uses it and a flood of forged ``kid`` values costs the provider
nothing more; the set is read again every ``refresh`` seconds, and a key the
provider no longer publishes is dropped then. While the provider cannot be
reached, the keys already held keep working and reads are retried with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

log = logging.getLogger(__name__)

#: Largest discovery document or key set read (bytes).
MAX_DOCUMENT = 512 * 1024
#: Signature algorithms accepted from a provider's keys (never ``none`` or HMAC).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
              "ES256", "ES384", "ES512", "EdDSA")  # fmt: skip


class KeySetError(Exception):
    """No key can be had for a token (unknown ``kid``, provider unreachable)."""


@dataclass(frozen=True)
class Discovery:
    """What the gateway and the UI need of the provider's discovery document."""

    issuer: str
    jwks_uri: str
    authorization_endpoint: str
    token_endpoint: str
    end_session_endpoint: str | None
    device_authorization_endpoint: str | None

    @classmethod
    def parse(cls, doc: Any, issuer: str) -> Discovery:
        if not isinstance(doc, dict):
            raise KeySetError("the discovery document is not a JSON object")
        if doc.get("issuer") != issuer:
            raise KeySetError(
                f"the discovery document names issuer {doc.get('issuer')!r}, "
                f"not {issuer!r}"
            )
        try:
            return cls(
                issuer,
                str(doc["jwks_uri"]),
                str(doc["authorization_endpoint"]),
                str(doc["token_endpoint"]),
                doc.get("end_session_endpoint"),
                doc.get("device_authorization_endpoint"),
            )
        except KeyError as exc:
            raise KeySetError(f"the discovery document lacks {exc}") from None


class KeySet:
    """The signing keys of one issuer, cached and kept current."""

    def __init__(
        self,
        issuer: str,
        *,
        refresh: float = 300.0,
        min_interval: float = 5.0,
        timeout: float = 5.0,
        retry_max: float = 30.0,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.refresh = refresh
        self.min_interval = min_interval
        self.retry_max = retry_max
        self.discovery: Discovery | None = None
        self.keys: dict[str, jwt.PyJWK] = {}
        self.error: str | None = None  # why the last read failed (None: it worked)
        self.reads = 0  # key set reads made (for tests and metrics)
        self._timeout = timeout
        self._last_read = -float("inf")  # loop time of the last read started
        self._read: asyncio.Task[None] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._http: httpx.AsyncClient | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Read the keys now and keep them current in the background."""
        self._http = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        self._loop_task = asyncio.create_task(self._keep_current(), name="jwks")

    async def close(self) -> None:
        for task in (self._loop_task, self._read):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._http is not None:
            await self._http.aclose()

    async def _keep_current(self) -> None:
        delay = 1.0
        while True:
            try:
                await self._read_now()
            except asyncio.CancelledError:
                raise
            except Exception:  # noted in self.error by _read_now
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.retry_max)
                continue
            delay = 1.0
            await asyncio.sleep(self.refresh)

    # ------------------------------------------------------------ reading

    async def _get_json(self, url: str) -> Any:
        assert self._http is not None, "KeySet.start() was not called"
        async with self._http.stream("GET", url) as response:
            if response.status_code != 200:
                raise KeySetError(f"{url} answered {response.status_code}")
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT:
                    raise KeySetError(f"{url} is larger than {MAX_DOCUMENT} bytes")
        return json.loads(body)

    async def _read_now(self) -> None:
        """One read of discovery (first time) and the JWKS; shared by callers."""
        if self._read is None or self._read.done():
            self._last_read = asyncio.get_running_loop().time()
            self._read = asyncio.create_task(self._fetch(), name="jwks-read")
        await asyncio.shield(self._read)

    async def _fetch(self) -> None:
        self.reads += 1
        try:
            if self.discovery is None:
                url = f"{self.issuer}/.well-known/openid-configuration"
                self.discovery = Discovery.parse(await self._get_json(url), self.issuer)
            jwks = await self._get_json(self.discovery.jwks_uri)
            keys = self._parse(jwks)
        except (httpx.HTTPError, KeySetError, ValueError) as exc:
            self.error = _reason(exc)
            log.warning("keys of %s not read: %s", self.issuer, self.error)
            raise KeySetError(self.error) from None
        dropped = set(self.keys) - set(keys)
        added = set(keys) - set(self.keys)
        self.keys = keys
        self.error = None
        if dropped or added:
            log.info("keys of %s: %d (added %s, dropped %s)", self.issuer,
                     len(keys), sorted(added), sorted(dropped))  # fmt: skip

    @staticmethod
    def _parse(jwks: Any) -> dict[str, jwt.PyJWK]:
        if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
            raise KeySetError("the JWKS is not a JSON object with a 'keys' list")
        keys: dict[str, jwt.PyJWK] = {}
        for entry in jwks["keys"]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            kid = entry.get("kid")
            if not isinstance(kid, str) or entry.get("alg", "RS256") not in ALGORITHMS:
                continue
            try:
                keys[kid] = jwt.PyJWK(entry)
            except jwt.PyJWTError as exc:
                log.warning("key %s of the JWKS skipped: %s", kid, exc)
        return keys

    # ------------------------------------------------------------ lookup

    @property
    def ready(self) -> bool:
        """Whether keys were read at least once."""
        return self.discovery is not None and bool(self.keys)

    async def discovered(self, wait: float) -> Discovery | None:
        """The provider's discovery document; not read yet, it is read now (the
        read in flight shared, a new one at most every ``min_interval``) for at
        most ``wait`` seconds. None: not read (yet)."""
        if self.discovery is None and self._http is not None:
            loop_time = asyncio.get_running_loop().time()
            reading = self._read is not None and not self._read.done()
            if reading or loop_time - self._last_read >= self.min_interval:
                with contextlib.suppress(KeySetError, TimeoutError):
                    await asyncio.wait_for(self._read_now(), wait)
        return self.discovery

    async def key(self, kid: str) -> jwt.PyJWK:
        """The key ``kid``: cached, or after one JWKS read if the last read is
        older than ``min_interval``; raise :class:`KeySetError` otherwise."""
        key = self.keys.get(kid)
        if key is not None:
            return key
        loop_time = asyncio.get_running_loop().time()
        reading = self._read is not None and not self._read.done()
        if reading or loop_time - self._last_read >= self.min_interval:
            with contextlib.suppress(KeySetError):
                await self._read_now()
            key = self.keys.get(kid)
            if key is not None:
                return key
        if self.error is not None and not self.keys:
            raise KeySetError(f"the identity provider cannot be reached: {self.error}")
        raise KeySetError(f"the token's signing key {kid[:64]!r} is not the provider's")


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text[:300]
