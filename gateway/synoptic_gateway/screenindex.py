"""Which screens show a channel: each cached screen's channels, found once per
revision, searched by the words of a query (``GET /api/channels/screens``).

A screen's channels are the strings it names as a channel anywhere (a widget's
``channels``, a rule's or a write action's ``channel``, widgets inside tabs and
containers), each kept once and at most :data:`MAX_PER_SCREEN` of them: the
index holds no more than the screens already cached."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: Channels kept per screen (a screen's widgets are at most a few thousand).
MAX_PER_SCREEN = 20_000
#: Channels of a screen a search answer names (the count covers all).
SHOWN = 5


def channels_of(screen: dict[str, Any]) -> tuple[str, ...]:
    """The channel URIs ``screen`` names, in order of appearance, each once
    (its ``source`` and ``macros`` left out)."""
    found: dict[str, None] = {}
    todo: list[Any] = [v for k, v in screen.items() if k not in ("source", "macros")]
    while todo and len(found) < MAX_PER_SCREEN:
        value = todo.pop()
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "channels" and isinstance(inner, list):
                    found.update((c, None) for c in inner if isinstance(c, str))
                elif key == "channel" and isinstance(inner, str):
                    found[inner] = None
                elif isinstance(inner, (dict, list)):
                    todo.append(inner)
        elif isinstance(value, list):
            todo.extend(v for v in value if isinstance(v, (dict, list)))
    return tuple(list(found)[:MAX_PER_SCREEN])


def _name_part(uri: str) -> str:
    """A channel URI without its scheme (``ca://SR:I`` → ``sr:i``), lower case."""
    return uri.split("://", 1)[-1].lower()


@dataclass(frozen=True, slots=True)
class ScreenChannels:
    """One screen's channels, with their names in lower case for searching."""

    channels: tuple[str, ...]
    lowered: tuple[str, ...]

    @classmethod
    def of(cls, screen: dict[str, Any]) -> ScreenChannels:
        found = channels_of(screen)
        return cls(found, tuple(_name_part(c) for c in found))


NONE = ScreenChannels((), ())


def _rank(name: str, query: str, first: str) -> int:
    """0: the channel is the query; 1: it starts with its first word; 2: holds it."""
    if name == query:
        return 0
    return 1 if name.startswith(first) else 2


def search(
    screens: Iterable[tuple[str, ScreenChannels]], query: str, limit: int
) -> tuple[list[dict[str, Any]], int]:
    """The screens showing a channel that holds every word of ``query`` (case
    ignored, the URI's scheme too when the query has none), best first: a
    channel that is the query, then one starting with it, then one holding it;
    more such channels first, then by name. At most ``limit`` screens, each
    with its first :data:`SHOWN` matching channels; and how many screens match."""
    q = query.strip().lower()
    if "://" in q:
        q = q.split("://", 1)[1]
    words = q.split()
    if not words:
        return [], 0
    first = words[0]
    hits: list[tuple[int, int, str, list[str]]] = []
    for name, index in screens:
        best, count, shown = 3, 0, []
        for uri, low in zip(index.channels, index.lowered, strict=True):
            if all(w in low for w in words):
                count += 1
                rank = _rank(low, q, first)
                if rank < best:
                    best = rank
                if len(shown) < SHOWN * 4:
                    shown.append((rank, uri))
        if count:
            top = [uri for _, uri in sorted(shown)[:SHOWN]]
            hits.append((best, -count, name, top))
    hits.sort()
    return [
        {"name": name, "channels": top, "matches": -neg}
        for _, neg, name, top in hits[:limit]
    ], len(hits)


__all__ = ["NONE", "ScreenChannels", "channels_of", "search"]
