"""The role mapping: which grants the identity provider's groups and roles give.

A TOML file (``--roles``; docs/operations.md) of rules. Each rule names what it
matches — ``groups``, ``roles``, ``users`` or ``clients`` (shell-style globs
against the token's group claims, role claims, user name and ``azp``/
``client_id``), or ``signed_in = true`` for every valid token — and what it
grants: ``read``, ``write`` and ``command`` (channel URI patterns), ``screens``
(screen names that may be edited) and ``ack`` (alarms, by channel URI
pattern, that may be acknowledged and shelved). A token gets the union of every rule that matches it.
:class:`RoleFile` reloads the file when it changes; a file that fails to parse
is refused with the line and reason in the log, and the rules before it stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The kinds of grant, in the order ``synoptic auth explain`` prints them.
KINDS = ("read", "write", "command", "screens", "ack")
SELECTORS = ("groups", "roles", "users", "clients")
#: Where groups and roles are found when ``[claims]`` does not say (Keycloak's
#: realm roles and group mapper, and the plain ``roles`` claim of other providers)
DEFAULT_GROUP_CLAIMS = ("groups",)
DEFAULT_ROLE_CLAIMS = ("realm_access.roles", "roles")
#: Largest role file read (bytes).
MAX_FILE = 1024 * 1024


class RoleMapError(ValueError):
    """A role file that cannot be used (the reason names the rule or key)."""


@dataclass(frozen=True)
class Grants:
    """What a principal may do: patterns per kind."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    screens: tuple[str, ...] = ()
    ack: tuple[str, ...] = ()

    def __or__(self, other: Grants) -> Grants:
        if not other:
            return self
        return Grants(*(_merge(getattr(self, k), getattr(other, k)) for k in KINDS))

    def __bool__(self) -> bool:
        return bool(self.read or self.write or self.command or self.screens or self.ack)

    def patterns(self, kind: str) -> tuple[str, ...]:
        return tuple(getattr(self, kind))


def _merge(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(p for p in b if p not in a)


@dataclass(frozen=True)
class Rule:
    """One rule: what it matches and what it grants."""

    name: str
    grants: Grants
    signed_in: bool = False
    groups: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()

    def why(self, who: Identity) -> str | None:
        """What of ``who`` this rule matches (``"group operators"``), or None."""
        if self.signed_in:
            return "signed in"
        for selector, values in (("group", who.groups), ("role", who.roles),
                                 ("user", (who.user,)), ("client", who.clients)):  # fmt: skip
            patterns = getattr(self, selector + "s")
            for value in values:
                if any(fnmatchcase(value, p) for p in patterns):
                    return f"{selector} {value}"
        return None


@dataclass(frozen=True)
class Identity:
    """The parts of a token that rules match."""

    user: str
    groups: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()


#: identities whose grants a role map keeps worked out (memory stays bounded)
MAX_KNOWN_IDENTITIES = 4096


@dataclass(frozen=True)
class Because:
    """One grant and the rule that gave it (``synoptic auth explain``)."""

    kind: str
    pattern: str
    rule: str
    matched: str


@dataclass(frozen=True)
class RoleMap:
    """Rules, and where a token keeps its groups and roles."""

    rules: tuple[Rule, ...] = ()
    group_claims: tuple[str, ...] = DEFAULT_GROUP_CLAIMS
    role_claims: tuple[str, ...] = DEFAULT_ROLE_CLAIMS
    source: str = ""
    #: grants already worked out per identity (a reconnect, another tab, a renewed
    #: token of the same user: the rules are not matched again); a new map (a
    #: reload) starts empty
    _known: dict[Identity, tuple[Grants, tuple[Because, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def identity(self, user: str, claims: dict[str, Any]) -> Identity:
        """The groups, roles and client of a token's claims."""
        groups = _strings(_lookup(claims, path) for path in self.group_claims)
        roles = _strings(_lookup(claims, path) for path in self.role_claims)
        clients = _strings([claims.get("azp"), claims.get("client_id")])
        # Keycloak may send full group paths ("/operators"): match the name too
        groups += tuple(g.rsplit("/", 1)[-1] for g in groups if "/" in g)
        return Identity(user, groups, roles, clients)

    def grants(self, who: Identity) -> tuple[Grants, tuple[Because, ...]]:
        """The union of every matching rule's grants, and why each was given."""
        known = self._known.get(who)
        if known is None:
            if len(self._known) >= MAX_KNOWN_IDENTITIES:
                self._known.clear()
            known = self._known[who] = self._match(who)
        return known

    def _match(self, who: Identity) -> tuple[Grants, tuple[Because, ...]]:
        total = Grants()
        because: list[Because] = []
        for rule in self.rules:
            matched = rule.why(who)
            if matched is None:
                continue
            total = total | rule.grants
            because += [Because(kind, pattern, rule.name, matched)
                        for kind in KINDS for pattern in rule.grants.patterns(kind)]  # fmt: skip
        return total, tuple(because)

    @classmethod
    def parse(cls, text: str, source: str = "") -> RoleMap:
        """Parse a role file; :class:`RoleMapError` says what is wrong."""
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RoleMapError(f"{source}: {exc}") from None
        unknown = set(doc) - {"claims", "rule"}
        if unknown:
            raise RoleMapError(f"{source}: unknown table(s) {sorted(unknown)}")
        claims = doc.get("claims", {})
        if not isinstance(claims, dict) or set(claims) - {"groups", "roles"}:
            raise RoleMapError(f"{source}: [claims] may hold 'groups' and 'roles'")
        rules = doc.get("rule", [])
        if not isinstance(rules, list):
            raise RoleMapError(f"{source}: rules are written [[rule]]")
        parsed = tuple(_rule(r, i, source) for i, r in enumerate(rules, 1))
        names = [r.name for r in parsed]
        if len(set(names)) != len(names):
            raise RoleMapError(f"{source}: two rules share a name")
        return cls(
            parsed,
            _list(claims, "groups", source, DEFAULT_GROUP_CLAIMS),
            _list(claims, "roles", source, DEFAULT_ROLE_CLAIMS),
            source,
        )

    @classmethod
    def load(cls, path: Path) -> RoleMap:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE + 1)
        if len(raw) > MAX_FILE:
            raise RoleMapError(f"{path}: larger than {MAX_FILE} bytes")
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            raise RoleMapError(f"{path}: not UTF-8") from None
        return cls.parse(text, str(path))


def _rule(raw: Any, index: int, source: str) -> Rule:
    where = f"{source}: rule {index}"
    if not isinstance(raw, dict):
        raise RoleMapError(f"{where}: not a table")
    name = raw.get("name", f"rule {index}")
    if not isinstance(name, str) or not name:
        raise RoleMapError(f"{where}: 'name' must be a non-empty string")
    where = f"{source}: rule {name!r}"
    unknown = set(raw) - {"name", "signed_in", *SELECTORS, *KINDS}
    if unknown:
        raise RoleMapError(f"{where}: unknown key(s) {sorted(unknown)}")
    signed_in = raw.get("signed_in", False)
    if not isinstance(signed_in, bool):
        raise RoleMapError(f"{where}: 'signed_in' must be true or false")
    selectors = {s: _list(raw, s, where) for s in SELECTORS}
    if not signed_in and not any(selectors.values()):
        raise RoleMapError(
            f"{where}: matches nobody (give groups, roles, users, clients or "
            "signed_in = true)"
        )
    grants = Grants(*(_list(raw, kind, where) for kind in KINDS))
    if not any(grants.patterns(k) for k in KINDS):
        raise RoleMapError(f"{where}: grants nothing")
    return Rule(name, grants, signed_in, **selectors)


def _list(
    table: dict[str, Any], key: str, where: str, default: tuple[str, ...] = ()
) -> tuple[str, ...]:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RoleMapError(f"{where}: '{key}' must be a string or a list of strings")
    return tuple(value)


def _lookup(claims: dict[str, Any], path: str) -> Any:
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _strings(values: Iterable[Any]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        out += [v for v in items if isinstance(v, str) and v and v not in out]
    return tuple(out)


@dataclass
class RoleFile:
    """A role file kept current: reloaded when it changes on disk."""

    path: Path
    on_change: Callable[[RoleMap], None] | None = None
    current: RoleMap = field(init=False)
    generation: int = field(init=False, default=1)
    error: str | None = field(init=False, default=None)
    _task: asyncio.Task[None] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.current = RoleMap.load(self.path)  # a bad file at start is fatal

    def start(self) -> None:
        """Watch the file (its folder: editors and ConfigMaps replace files)."""
        self._task = asyncio.create_task(self._watch(), name="roles-watch")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def reload(self) -> bool:
        """Read the file again; False (and the old rules kept) if it is bad."""
        try:
            fresh = RoleMap.load(self.path)
        except (OSError, RoleMapError) as exc:
            self.error = str(exc)
            log.error("role file not reloaded, the previous rules stay: %s", exc)
            return False
        if fresh != self.current:
            self.current = fresh
            self.generation += 1
            log.info("role file %s reloaded: %d rules", self.path, len(fresh.rules))
            if self.on_change is not None:
                self.on_change(fresh)
        self.error = None
        return True

    async def _watch(self) -> None:
        from watchfiles import awatch

        folder = self.path.resolve().parent
        async for _changes in awatch(folder, debounce=200, step=50):
            self.reload()
