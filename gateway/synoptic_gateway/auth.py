"""Who a connection is and what it may read and write.

Anonymous read-only by default. With a JWT key (HS256 secret, or an RS256/ES256
public key) a bearer token names the principal (``sub``) and grants reading and
writing by channel pattern (``read``/``write`` claims: shell-style globs on
normalised URIs) and editing screens by name pattern (``screens`` claim). The Origin header is checked against an allow-list.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import jwt

from synoptic_gateway.settings import Settings

ANONYMOUS = "anonymous"


class AuthError(Exception):
    """A connection that may not be served (no, bad or expired token)."""


@dataclass(frozen=True)
class Principal:
    """An authenticated (or anonymous) user and their grants."""

    name: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    expires: float | None = None  # the token's exp (Unix seconds)
    screens: tuple[str, ...] = ()  # screen names (globs) this principal may edit

    def may_read(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.read)

    def may_write(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.write)

    @property
    def can_write(self) -> bool:
        return bool(self.write)

    def may_edit(self, screen: str) -> bool:
        """Whether this principal may save, revert or delete the screen ``screen``."""
        return any(fnmatchcase(screen, pattern) for pattern in self.screens)


def _patterns(claim: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    if claim is None:
        return default
    if isinstance(claim, str):
        return (claim,)
    if isinstance(claim, list) and all(isinstance(p, str) for p in claim):
        return tuple(claim)
    raise AuthError(
        "'read'/'write'/'screens' claims must be a pattern or a list of patterns"
    )


class Authenticator:
    """Turns a bearer token (or its absence) into a :class:`Principal`."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        if settings.jwt_secret:
            self._key: Any = settings.jwt_secret
            self._algorithms = ["HS256"]
        elif settings.jwt_public_key:
            self._key = settings.jwt_public_key
            self._algorithms = ["RS256", "ES256"]
        else:
            self._key = None
            self._algorithms = []

    def principal(self, token: str | None) -> Principal:
        """The principal of a connection; raise :class:`AuthError` to refuse it."""
        if not token:
            if not self._settings.anonymous_allowed:
                raise AuthError("a bearer token is required")
            return Principal(
                ANONYMOUS,
                self._settings.anonymous_read,
                (),
                screens=self._settings.anonymous_screens,
            )
        if self._key is None:
            raise AuthError("tokens are not accepted: no JWT key is configured")
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=self._algorithms,
                audience=self._settings.jwt_audience,
                issuer=self._settings.jwt_issuer,
                options={
                    "require": ["sub"],
                    "verify_aud": self._settings.jwt_audience is not None,
                },
            )
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token: {exc}") from None
        name = claims["sub"]
        if not isinstance(name, str) or not name:
            raise AuthError("token 'sub' must be a non-empty string")
        exp = claims.get("exp")
        return Principal(
            name,
            _patterns(claims.get("read"), ("*",)),
            _patterns(claims.get("write"), ()),
            float(exp) if isinstance(exp, int | float) else None,
            _patterns(claims.get("screens"), ()),
        )

    def origin_allowed(self, origin: str | None) -> bool:
        """Whether a handshake's Origin passes the allow-list (no header passes)."""
        allowed = self._settings.allowed_origins
        if not allowed or origin is None:
            return True
        return any(fnmatchcase(origin, pattern) for pattern in allowed)


def bearer_token(headers: Any, query: Any) -> str | None:
    """The token of a request: ``Authorization: Bearer …`` or ``?access_token=``."""
    header = headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return query.get("access_token") or None
