"""A socket's identity over its life: the principal it started with, a token it
hands over later (the ``auth`` frame: a browser's first token, then each renewal),
the grants a reloaded role file gives, and what is left when the token expires.

Guarantees: a token is accepted only for the same person (issuer and subject) once
the socket has one, so a renewal never turns a socket into someone else's; a
refused token leaves the grants as they were; when a token expires unrenewed the
socket keeps reading where anonymous reading is allowed and loses its write,
command, edit and acknowledge grants, told by an ``auth`` frame (``expired``) —
where anonymous reading is not allowed the socket is closed with 4401.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from synoptic_gateway.auth import LEEWAY, Authenticator, AuthError
from synoptic_gateway.principal import Principal
from synoptic_schemas import frames

log = logging.getLogger(__name__)

#: The name of a socket that has shown no token where one is required.
NOBODY = ""


def nobody() -> Principal:
    """A socket without a token where anonymous access is off: it may send an
    ``auth`` frame and nothing else succeeds until then."""
    return Principal(NOBODY, (), ())


class Credentials:
    """The principal of one socket, kept current."""

    def __init__(
        self,
        principal: Principal,
        auth: Authenticator | None,
        *,
        send: Callable[[dict[str, Any]], None],
        close_unauthorized: Callable[[str], None],
        anonymous_allowed: bool,
        auth_timeout: float,
    ) -> None:
        self.principal = principal
        self._auth = auth
        self._send = send
        self._close = close_unauthorized
        self._anonymous_allowed = anonymous_allowed
        self._auth_timeout = auth_timeout
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Arm the expiry (or, for a socket with no token yet, the deadline)."""
        if self.principal.name == NOBODY and not self._anonymous_allowed:
            self._arm(self._auth_timeout, self._no_token)
        else:
            self._arm_expiry()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, delay: float, callback: Callable[[], None]) -> None:
        self.stop()
        self._timer = asyncio.get_running_loop().call_later(max(0.0, delay), callback)

    def _arm_expiry(self) -> None:
        # a token is accepted until ``exp`` + LEEWAY: so long it is the socket's too
        if self.principal.expires is not None:
            self._arm(self.principal.expires + LEEWAY - time.time(), self._expired)
        else:
            self.stop()

    def state(self, req_id: Any) -> dict[str, Any]:
        """The ``auth`` frame describing the current grants."""
        who = self.principal
        return frames.auth_state(
            req_id, who.name, write=who.can_write, cmd=bool(who.command),
            screens=who.screens, exp=who.expires,
        )  # fmt: skip

    async def renew(self, token: str) -> Principal:
        """Take ``token`` for this socket; :class:`AuthError` leaves it as it was."""
        if self._auth is None:
            raise AuthError("this gateway takes no tokens")
        fresh = await self._auth.principal(token)
        held = self.principal.subject
        if held and fresh.subject != held:
            raise AuthError(
                f"the token is {fresh.name}'s, not {self.principal.name}'s: a socket "
                "keeps its user (sign out to change user)"
            )
        self.principal = fresh
        self._arm_expiry()
        log.info("token of %s taken, until %s", fresh.name, fresh.expires)
        return fresh

    def regrant(self) -> bool:
        """Apply the current role mapping; whether the grants changed."""
        if self._auth is None:
            return False
        fresh = self._auth.regrant(self.principal)
        changed = fresh.grants != self.principal.grants
        self.principal = fresh
        return changed

    def _no_token(self) -> None:
        self._timer = None
        if self.principal.name == NOBODY:
            self._close(
                f"no token in {self._auth_timeout:g} s: a bearer token is required"
            )

    def _expired(self) -> None:
        self._timer = None
        who = self.principal
        if who.expires is None or who.expires + LEEWAY > time.time() + 0.5:
            self._arm_expiry()  # renewed meanwhile
            return
        log.info("token of %s expired", who.name)
        if not self._anonymous_allowed or self._auth is None:
            self._close("the token expired")
            return
        self.principal = self._auth.expired(who)
        frame = self.state(None)
        frame["expired"] = True
        frame["msg"] = (
            f"the sign-in of {who.name} expired: reading goes on, writing, commands "
            "and editing are off until you sign in again"
        )
        self._send(frame)
