"""Who a connection is and what it may read, write, command and edit.

Anonymous read-only by default. With an identity provider (``--oidc-issuer``) a
bearer token is checked against the provider's published keys
(:mod:`synoptic_gateway.keyset`): signature, issuer, audience, expiry and
not-before; the role mapping (:mod:`synoptic_gateway.roles`) turns its groups
and roles into grants. With a static JWT key (an HS256 secret, or an RS256/ES256
public key) hand-made tokens work as before. In both, grant claims in the token
itself (``read``/``write``/``command``/``screens``/``ack``: shell-style globs on
normalised URIs, screen names) add to what the mapping gives. The Origin header
is checked against an allow-list. Tokens are taken from the ``Authorization``
header (or the WebSocket ``auth`` frame) only, never from a URL.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

import jwt

from synoptic_gateway.jws import DECODER
from synoptic_gateway.keyset import ALGORITHMS, KeySet, KeySetError
from synoptic_gateway.principal import Principal
from synoptic_gateway.roles import Grants, RoleFile, RoleMap
from synoptic_gateway.settings import Settings

log = logging.getLogger(__name__)

ANONYMOUS = "anonymous"
#: Seconds of clock difference tolerated with the provider (exp, nbf, iat).
LEEWAY = 5.0
#: Longest token accepted (bytes): a provider's tokens are a few kB.
MAX_TOKEN = 16 * 1024


class AuthError(Exception):
    """A token that may not be used (missing, malformed, forged, expired …)."""


def _patterns(claims: dict[str, Any], key: str) -> tuple[str, ...]:
    claim = claims.get(key)
    if claim is None:
        return ()
    if isinstance(claim, str):
        return (claim,)
    if isinstance(claim, list) and all(isinstance(p, str) for p in claim):
        return tuple(claim)
    raise AuthError(f"the token's '{key}' claim must be a pattern or a list of them")


def _claimed(claims: dict[str, Any]) -> Grants:
    """Grants written in the token itself."""
    return Grants(*(_patterns(claims, k) for k in
                    ("read", "write", "command", "screens", "ack")))  # fmt: skip


class Authenticator:
    """Turns a bearer token (or its absence) into a :class:`Principal`."""

    def __init__(
        self,
        settings: Settings,
        keyset: KeySet | None = None,
        roles: RoleFile | None = None,
    ) -> None:
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
        if keyset is None and settings.oidc_issuer:
            keyset = KeySet(
                settings.oidc_issuer,
                refresh=settings.jwks_refresh,
                min_interval=settings.jwks_min_interval,
            )
        self.keyset = keyset
        if roles is None and settings.roles_file is not None:
            roles = RoleFile(settings.roles_file)
        self.roles = roles

    async def start(self) -> None:
        if self.keyset is not None:
            self.keyset.start()
        if self.roles is not None:
            self.roles.start()

    async def close(self) -> None:
        if self.keyset is not None:
            await self.keyset.close()
        if self.roles is not None:
            await self.roles.close()

    @property
    def role_map(self) -> RoleMap | None:
        return self.roles.current if self.roles is not None else None

    def anonymous(self) -> Principal:
        """The principal of a connection without a token."""
        return Principal(ANONYMOUS, self._settings.anonymous_read, (),
                         screens=self._settings.anonymous_screens)  # fmt: skip

    async def principal(self, token: str | None) -> Principal:
        """The principal of a connection; raise :class:`AuthError` to refuse it."""
        if not token:
            if not self._settings.anonymous_allowed:
                raise AuthError("a bearer token is required")
            return self.anonymous()
        claims, oidc = await self.verify(token)
        return self.from_claims(claims, oidc=oidc)

    async def verify(self, token: str) -> tuple[dict[str, Any], bool]:
        """The claims of a valid token, and whether the provider signed it."""
        if len(token) > MAX_TOKEN:
            raise AuthError(f"the token is longer than {MAX_TOKEN} bytes")
        header = _header(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            raise AuthError("unsigned tokens are refused")
        kid = header.get("kid")
        if self.keyset is not None and alg in ALGORITHMS and isinstance(kid, str):
            try:
                key = await self.keyset.key(kid)
            except KeySetError as exc:
                raise AuthError(str(exc)) from None
            return self._decode(token, key.key, [key.algorithm_name], oidc=True), True
        if self._key is not None and alg in self._algorithms:
            return self._decode(token, self._key, self._algorithms, oidc=False), False
        if self._key is None and self.keyset is None:
            raise AuthError("tokens are not accepted: no identity provider or key")
        raise AuthError(f"tokens signed with {alg} are not accepted here")

    def _decode(
        self, token: str, key: Any, algorithms: list[str], *, oidc: bool
    ) -> dict[str, Any]:
        settings = self._settings
        if oidc:
            audience = settings.oidc_audience or None
            issuer: str | None = settings.oidc_issuer
            require = ["sub", "exp", "iss"]
        else:
            audience, issuer = settings.jwt_audience, settings.jwt_issuer
            require = ["sub"]
        try:
            claims: dict[str, Any] = DECODER.decode(
                token, key, algorithms=algorithms, audience=audience, issuer=issuer,
                leeway=LEEWAY,
                options={"require": require, "verify_aud": audience is not None},
            )  # fmt: skip
        except jwt.ExpiredSignatureError:
            raise AuthError("the token expired") from None
        except jwt.ImmatureSignatureError:
            raise AuthError("the token is not valid yet") from None
        except jwt.MissingRequiredClaimError as exc:
            if exc.claim == "aud":
                raise AuthError(
                    f"the token is not meant for {audience!r}: it names no audience"
                ) from None
            raise AuthError(f"the token has no {exc.claim!r} claim") from None
        except jwt.InvalidAudienceError:
            raise AuthError(f"the token is not meant for {audience!r}") from None
        except jwt.InvalidIssuerError:
            raise AuthError(f"the token was not issued by {issuer}") from None
        except jwt.InvalidSignatureError:
            raise AuthError("the token's signature does not verify") from None
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token: {exc}") from None
        return claims

    def from_claims(self, claims: dict[str, Any], *, oidc: bool) -> Principal:
        """The principal of verified claims: the role mapping's grants and the
        token's own grant claims."""
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise AuthError("token 'sub' must be a non-empty string")
        name = sub
        wanted = claims.get(self._settings.oidc_name_claim) if oidc else None
        if isinstance(wanted, str) and wanted:
            name = wanted
        display = claims.get("name")
        exp = claims.get("exp")
        claimed = _claimed(claims)
        mapping = self.role_map
        if mapping is None:
            # hand-made tokens: reading everything unless 'read' says otherwise,
            # commands where writes are granted unless 'command' says otherwise
            grants = Grants(
                claimed.read if "read" in claims else ("*",),
                claimed.write,
                claimed.command if "command" in claims else claimed.write,
                claimed.screens,
                claimed.ack,
            )
            identity, because = None, ()
        else:
            identity = mapping.identity(name, claims)
            mapped, because = mapping.grants(identity)
            grants = mapped | claimed
        return Principal(
            name, grants.read, grants.write,
            float(exp) if isinstance(exp, int | float) else None,
            subject=f"{claims.get('iss', '')} {sub}",
            display=display if isinstance(display, str) else "",
            command=grants.command, screens=grants.screens, ack=grants.ack,
            identity=identity, claimed=claimed, because=because,
        )  # fmt: skip

    def regrant(self, principal: Principal) -> Principal:
        """``principal`` with the grants of the current role mapping (after a
        reload); a principal the mapping never saw is returned as it is."""
        mapping = self.role_map
        if mapping is None or principal.identity is None:
            return principal
        mapped, because = mapping.grants(principal.identity)
        return principal.with_grants(mapped | principal.claimed, because)

    def expired(self, principal: Principal) -> Principal:
        """What a socket whose token expired keeps: the anonymous reads, no
        write, command, edit or acknowledge grant."""
        anonymous = self.anonymous()
        return replace(
            principal, read=anonymous.read, write=(), command=(), screens=(), ack=(),
            because=(), expires=None, identity=None, claimed=Grants(),
        )  # fmt: skip

    def origin_allowed(self, origin: str | None) -> bool:
        """Whether a handshake's Origin passes the allow-list (no header passes)."""
        allowed = self._settings.allowed_origins
        if not allowed or origin is None:
            return True
        return any(fnmatchcase(origin, pattern) for pattern in allowed)


def _header(token: str) -> dict[str, Any]:
    """The token's header, unverified: it picks the key; ``jwt.decode`` then checks
    the whole token strictly. (PyJWT's own header reader checks every character of
    every segment in Python: as long as the signature itself, and done twice.)"""
    parts = token.split(".")
    if len(parts) != 3:
        raise AuthError(f"not a token: {len(parts)} segments, not 3")
    head = parts[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error) as exc:
        raise AuthError(f"not a token: its header does not decode ({exc})") from None
    if not isinstance(header, dict):
        raise AuthError("not a token: its header is not an object")
    return header


def bearer_token(headers: Any) -> str | None:
    """The token of a request: ``Authorization: Bearer …``, never the URL (a
    token there ends up in browser history, bookmarks and logs)."""
    header = headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None
