"""Who a request is from and what they may do: the :class:`Principal` every
grant check takes. Kept apart from :mod:`.auth` (token checks, the provider's
keys), so that what only checks grants (the history process) loads no JWT or
HTTP library."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

from synoptic_gateway.roles import Because, Grants, Identity


@dataclass(frozen=True)
class Principal:
    """An authenticated (or anonymous) user and their grants."""

    name: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    expires: float | None = None  # the token's exp (Unix seconds)
    screens: tuple[str, ...] = ()  # screen names (globs) this principal may edit
    command: tuple[str, ...] = ()  # Tango commands (channel URI globs)
    ack: tuple[str, ...] = ()  # alarms (channel URI globs) it may acknowledge, shelve
    #: who the token is about, issuer and subject: a renewal must name the same
    subject: str = ""
    #: the person's full name where the token gives one
    display: str = ""
    #: the groups, roles and client the role mapping matched (None: no mapping)
    identity: Identity | None = None
    #: grants the token's own claims gave (kept when the mapping is reloaded)
    claimed: Grants = field(default_factory=Grants)
    because: tuple[Because, ...] = ()

    def may_read(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.read)

    def may_write(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.write)

    def may_command(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.command)

    def may_ack(self, uri: str) -> bool:
        return any(fnmatchcase(uri, pattern) for pattern in self.ack)

    @property
    def can_write(self) -> bool:
        return bool(self.write)

    def may_edit(self, screen: str) -> bool:
        """Whether this principal may save, revert or delete the screen ``screen``."""
        return any(fnmatchcase(screen, pattern) for pattern in self.screens)

    @property
    def grants(self) -> Grants:
        return Grants(self.read, self.write, self.command, self.screens, self.ack)

    def with_grants(self, grants: Grants, because: tuple[Because, ...]) -> Principal:
        return replace(
            self, read=grants.read, write=grants.write, command=grants.command,
            screens=grants.screens, ack=grants.ack, because=because,
        )  # fmt: skip
