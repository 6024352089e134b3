"""Which channels are alarms, and where in the tree: a lookup built once per tree.

A channel listed by a node belongs to it; any other channel belongs to the first
enabled node (depth first, in order) with a pattern that matches its URI. Lookups
of channels not listed are cached, so a channel's patterns are matched once per
tree whatever the traffic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate
from typing import Any

from synoptic_schemas.alarmtree import Entry, listed, walk

#: Patterns compiled into one regular expression each (alternation in order).
_CHUNK = 200
#: Channels whose (non-)membership is cached; beyond it the cache starts again.
_MAX_CACHED = 2_000_000


@dataclass(frozen=True, slots=True)
class _Pattern:
    area: str
    latch: bool


class TreeIndex:
    """The alarms of one tree revision."""

    def __init__(self, tree: dict[str, Any] | None, revision: int = 0) -> None:
        self.tree = tree
        self.revision = revision
        self.listed: dict[str, Entry] = {}
        self._patterns: list[tuple[re.Pattern[str], list[_Pattern]]] = []
        self._cache: dict[str, Entry | None] = {}
        if tree is None:
            return
        for entry in listed(tree):
            self.listed[entry.uri] = entry
        found: list[tuple[str, _Pattern]] = [
            (pattern, _Pattern(path, latch))
            for path, node, enabled, latch in walk(tree)
            if enabled
            for pattern in node.get("patterns", ())
        ]
        for start in range(0, len(found), _CHUNK):
            chunk = found[start : start + _CHUNK]
            regex = "|".join(
                f"(?P<p{i}>{translate(pattern)})"
                for i, (pattern, _) in enumerate(chunk)
            )
            self._patterns.append((re.compile(regex), [p for _, p in chunk]))

    @property
    def has_patterns(self) -> bool:
        return bool(self._patterns)

    def lookup(self, uri: str) -> Entry | None:
        """The alarm entry of a channel URI, or None when it is not an alarm."""
        entry = self.listed.get(uri)
        if entry is not None or not self._patterns:
            return entry
        try:
            return self._cache[uri]
        except KeyError:
            pass
        found = None
        for regex, patterns in self._patterns:
            m = regex.match(uri)
            if m is not None and m.lastgroup is not None:
                pattern = patterns[int(m.lastgroup[1:])]
                found = Entry(uri, pattern.area, pattern.latch)
                break
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[uri] = found
        return found
