"""The bus record of a refused token (``cs.audit.auth``; auth-audit.schema.json)."""

from __future__ import annotations

from typing import Any

#: Where a refused token was shown.
AUTH_AUDIT_AT = ("connect", "renew", "http")


def auth_refusal_record(
    at: str, who: str, reason: str, peer: str, t: int, by: str
) -> dict[str, Any]:
    """A ``cs.audit.auth`` record (msgpack on the bus): ``at`` one of
    :data:`AUTH_AUDIT_AT`, ``who`` the claimed (unverified) name, ``t`` ns since
    the epoch, ``by`` the gateway. The token itself is never part of it."""
    if at not in AUTH_AUDIT_AT:
        raise ValueError(f"'at' must be one of {AUTH_AUDIT_AT}")
    return {"ver": 1, "op": "refused", "at": at, "who": who[:200],
            "reason": reason[:500], "peer": peer, "t": t, "by": by}  # fmt: skip
