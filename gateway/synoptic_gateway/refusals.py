"""Records of refused tokens: who the token claimed to be, never the token."""

from __future__ import annotations

import time
from typing import Any

import jwt

from synoptic_schemas.signin import auth_refusal_record


def claimed_name(token: str | None) -> str:
    """The name an (unverified) token claims: ``preferred_username``, else
    ``sub``; empty when it is not a readable JWT."""
    if not token:
        return ""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return ""
    for key in ("preferred_username", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def refusal_record(
    at: str, reason: str, token: str | None, peer: str, by: str, who: str = ""
) -> dict[str, Any]:
    """The ``cs.audit.auth`` record of one refusal."""
    name = who or claimed_name(token)
    return auth_refusal_record(at, name, reason, peer, time.time_ns(), by)
