"""The channel directory: every channel URI the last-value stream holds a value
for, searched by case-insensitive prefix (``/api/channels``).

The list is read from the stream's subjects on the first search and again in the
background when a search finds it older than ``refresh_s`` (a gateway nobody edits
screens on never reads it). Sorted lower-cased lists — the whole URI, and per
scheme the name after ``://`` — answer a prefix with a few binary searches (one
per scheme): the cost does not grow with the number of channels.
"""

from __future__ import annotations

import asyncio
import logging
import time
from bisect import bisect_left

from synoptic_bus.screens import StoreUnavailableError
from synoptic_bus.store import StoreConfig, StoreError, stream_subjects
from synoptic_gateway.bus import Bus
from synoptic_schemas import ChannelError, Subjects

log = logging.getLogger(__name__)

#: Sorts after every character a URI can hold: the end of a prefix range.
_END = "\U0010ffff"


class DirectoryIndex:
    """Channel URIs in sorted, lower-cased orders (pure, no I/O): the whole URI,
    and per scheme the name after ``://``."""

    def __init__(self, uris: list[str]) -> None:
        unique = set(uris)
        full = sorted((u.lower(), u) for u in unique)
        self._full_keys = [k for k, _ in full]
        self._full = [u for _, u in full]
        tails: dict[str, list[tuple[str, str]]] = {}
        for u in unique:
            scheme, _, name = u.lower().partition("://")
            tails.setdefault(scheme, []).append((name, u))
        self._tails = {
            scheme: ([k for k, _ in pairs], [u for _, u in pairs])
            for scheme, pairs in ((s, sorted(p)) for s, p in sorted(tails.items()))
        }

    def __len__(self) -> int:
        return len(self._full)

    @staticmethod
    def _range(keys: list[str], prefix: str) -> tuple[int, int]:
        return bisect_left(keys, prefix), bisect_left(keys, prefix + _END)

    def search(self, prefix: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` URIs that start with ``prefix`` (case-insensitive), or
        whose name after the scheme does; and how many match in all. Whole-URI
        matches first, then by scheme, each in URI order. A few binary searches,
        whatever the number of channels."""
        q = prefix.lower()
        lo, hi = self._range(self._full_keys, q)
        found = self._full[lo : min(hi, lo + limit)]
        total = hi - lo
        if "://" in q:
            return found, total
        for scheme, (keys, uris) in self._tails.items():
            if (scheme + "://").startswith(q):
                continue  # every URI of this scheme is a whole-URI match already
            tlo, thi = self._range(keys, q)
            total += thi - tlo
            if len(found) < limit:
                found.extend(uris[tlo : min(thi, tlo + limit - len(found))])
        return found, total


def uris_of(subjects: list[str], prefix: str) -> list[str]:
    """The channel URIs of ``val`` subjects (others are skipped)."""
    mapping = Subjects(prefix)
    out: list[str] = []
    for subject in subjects:
        try:
            out.append(mapping.parse(subject)[1].uri)
        except ChannelError:
            continue
    return out


class ChannelDirectory:
    """The directory of one gateway, refreshed from the last-value stream."""

    def __init__(self, bus: Bus, prefix: str, refresh_s: float = 10.0) -> None:
        self._bus = bus
        self._prefix = prefix
        self._stream = StoreConfig(prefix).stream
        self._refresh_s = refresh_s
        self._index = DirectoryIndex([])
        self._loaded_at: float | None = None
        self._refreshing: asyncio.Task[None] | None = None

    async def ready(self) -> None:
        """Load the directory on first use; refresh it in the background when it is
        older than ``refresh_s``. :class:`StoreUnavailableError` if it was never
        loaded and cannot be."""
        if self._loaded_at is None:
            await self._refresh_once()
        elif time.monotonic() - self._loaded_at > self._refresh_s:
            self._spawn_refresh()

    def _spawn_refresh(self) -> None:
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.create_task(self._refresh_quietly())

    async def _refresh_quietly(self) -> None:
        try:
            await self.refresh()
        except StoreUnavailableError as exc:
            log.warning("channel directory not refreshed: %s", exc)

    async def _refresh_once(self) -> None:
        self._spawn_refresh()
        assert self._refreshing is not None
        await asyncio.shield(self._refreshing)
        if self._loaded_at is None:
            await self.refresh()  # raises the reason

    async def refresh(self) -> None:
        """Read the stream's ``val`` subjects now."""
        if not self._bus.up:
            raise StoreUnavailableError("NATS is down")
        try:
            subjects = await stream_subjects(
                self._bus.nc, self._stream, f"{self._prefix}.val.>"
            )
        except StoreError as exc:
            raise StoreUnavailableError(str(exc)) from None
        uris = await asyncio.to_thread(uris_of, subjects, self._prefix)
        self._index = await asyncio.to_thread(DirectoryIndex, uris)
        self._loaded_at = time.monotonic()

    def search(self, prefix: str, limit: int) -> tuple[list[str], int]:
        """See :meth:`DirectoryIndex.search`."""
        return self._index.search(prefix, limit)

    async def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
