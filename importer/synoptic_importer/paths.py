"""Where a display's references lead: other displays (open-display actions,
embedded displays, navigation tabs), pictures and plot files, resolved the way
Phoebus resolves them (``ModelResourceUtil.resolveResource``).

A relative path is taken from the folder of the file that names it (an
embedded display's actions from the embedded file's folder), ``..`` collapsed,
``\\`` read as ``/``; a reference to ``x.opi`` opens ``x.bob`` when that exists
beside it. An absolute path (a BOY workspace path such as
``/CSS/opi/motor.opi``) is matched against the set by its longest tail. A name
that differs only in letter case is taken next (sets written on Windows); last,
a file of that name anywhere in the set, when there is one only (what BOY's
OPI search path gave facilities that list their display folders there)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from synoptic_importer.common import MAX_SOURCE_BYTES, screen_name


def normalize(path: str) -> str:
    """``\\`` as ``/``, ``file:`` dropped, ``.``/``..`` collapsed."""
    path = path.strip().replace("\\", "/")
    if path.startswith("file:"):
        path = path[5:]
    return posixpath.normpath(path) if path else ""


def combine(parent_file: str, path: str) -> str:
    """``path`` from the folder of ``parent_file`` (as it is when absolute)."""
    path = normalize(path)
    if is_absolute(path):
        return path
    return posixpath.normpath(posixpath.join(posixpath.dirname(parent_file), path))


def is_absolute(path: str) -> bool:
    return path.startswith("/") or (len(path) > 1 and path[1] == ":")


class Context(Protocol):
    """What an import may look up besides the display itself."""

    def target(self, from_file: str, path: str) -> tuple[str, bool | None]:
        """The screen a display reference opens, and whether it is among the
        displays imported (a link inside the set; None: its path holds macros
        the opener gives, so it is known only when the link is used)."""
        ...

    def read(self, from_file: str, path: str) -> tuple[str, bytes] | None:
        """The resolved name and bytes of a referenced file (an embedded display,
        a picture, a plot file), or None."""
        ...

    def embed_screen(self, from_file: str, path: str) -> str | None:
        """The screen an embedded display becomes an ``embed`` of (None: inline
        it when it can be read)."""
        ...


#: Reads a file by the name a display gives it (None: not found).
Resolver = Callable[[str], bytes | None]


@dataclass
class FolderContext:
    """One display (or a few) imported from a folder: references read with
    ``resolve`` by their name as written; links name the screen of the file's
    name; displays imported together (``siblings``) are embedded, not inlined."""

    resolve: Resolver | None = None
    siblings: frozenset[str] = frozenset()

    def target(self, from_file: str, path: str) -> tuple[str, bool | None]:
        name = screen_name(path)
        return name, name in self.siblings

    def read(self, from_file: str, path: str) -> tuple[str, bytes] | None:
        if self.resolve is None or not path:
            return None
        data = self.resolve(path)
        return None if data is None else (path, data)

    def embed_screen(self, from_file: str, path: str) -> str | None:
        name = screen_name(path)
        return name if name in self.siblings else None


@dataclass
class SetContext:
    """A set of files (relative POSIX paths from the set's root → bytes) whose
    displays become screens named by ``names``."""

    files: Mapping[str, bytes]
    names: Mapping[str, str]
    #: Referenced displays parsed once for the whole set (see display.parse_cached).
    parsed: dict[str, Any] = field(default_factory=dict)
    #: How a path of the set is named as a screen (site.screen_names' rule).
    name_rule: Callable[[str], str] | None = None
    #: What is read from each element once (see DisplayImporter.memo).
    memo: dict[Any, Any] = field(default_factory=dict)
    #: When a list: each file :meth:`read` returns is appended (the inputs of
    #: the display being converted).
    reads: list[str] | None = None
    _lower: dict[str, str] = field(default_factory=dict)
    _tails: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path in self.files:
            self._lower.setdefault(path.lower(), path)
            parts = path.split("/")
            for k in range(len(parts)):
                self._tails.setdefault("/".join(parts[k:]).lower(), []).append(path)

    def find(self, from_file: str, path: str) -> str | None:
        """The set's file a reference names (Phoebus's rules, then by tail for
        an absolute path, then ignoring case), or None."""
        if not path or "://" in path:
            return None
        combined = combine(from_file, path)
        candidates = [combined]
        if combined.lower().endswith(".opi"):
            candidates.insert(0, combined[:-4] + ".bob")
        for candidate in candidates:
            if candidate in self.files:
                return candidate
        for candidate in candidates:
            if is_absolute(candidate):
                tail = candidate.lstrip("/").split(":", 1)[-1].lstrip("/")
                parts = tail.split("/")
                for k in range(len(parts)):
                    found = self._tails.get("/".join(parts[k:]).lower())
                    if found and len(found) == 1:
                        return found[0]
            elif (exact := self._lower.get(candidate.lower())) is not None:
                return exact
        for candidate in candidates:  # the search path: a unique name in the set
            found = self._tails.get(posixpath.basename(candidate).lower())
            if found and len(found) == 1:
                return found[0]
        return None

    def target(self, from_file: str, path: str) -> tuple[str, bool | None]:
        found = self.find(from_file, path)
        if found is not None and found in self.names:
            return self.names[found], True
        if "$(" in path or "${" in path:  # named by the opener's macros: at open
            return self.name_of(combine(from_file, path)), None
        return screen_name(path), False

    def name_of(self, path: str) -> str:
        """The screen name a path of the set gets (macro references kept, for
        the browser to fill when the link is used)."""
        if self.name_rule is None:
            return screen_name(path)
        return self.name_rule(path)

    def read(self, from_file: str, path: str) -> tuple[str, bytes] | None:
        found = self.find(from_file, path)
        if found is None:
            return None
        data = self.files[found]
        if self.reads is not None:
            self.reads.append(found)
        return (found, data) if len(data) <= MAX_SOURCE_BYTES else None

    def embed_screen(self, from_file: str, path: str) -> str | None:
        return None


def display_paths(paths: Iterable[str], suffixes: tuple[str, ...]) -> list[str]:
    """The display files among ``paths``, sorted."""
    return sorted(p for p in paths if posixpath.splitext(p)[1].lower() in suffixes)
