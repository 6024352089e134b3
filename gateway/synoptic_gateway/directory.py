"""The channel directory: every channel URI the last-value stream holds a value
for, with the description and units of its metadata, searched by any part of the
name, the description and the units, ranked (``/api/channels``).

The list is read from the stream in the background once NATS is connected (the
names, then the metadata of each, in batches), so that the first search finds it
ready; it follows the metadata the adapters publish (a new channel, a changed
description: indexed a second after the last change, or by the next search), and
is read again in the background when a search finds it older than ``refresh_s``
(channels with a value and no metadata; the metadata of new names only, all of it
again after a reconnect). A search scans one lower-cased text per channel for each
word of the query (C string search: a few milliseconds over 100 000 channels) and
ranks only the matches.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import re
import time

from synoptic_bus.screens import StoreUnavailableError
from synoptic_bus.store import StoreConfig, StoreError, fetch_last, stream_subjects
from synoptic_gateway.bus import Bus
from synoptic_schemas import Subjects
from synoptic_schemas.codec import meta_text

log = logging.getLogger(__name__)

#: Where a name's parts begin: after these characters (``DEMO:SINE``, ``sr/d/1/current``).
_PART = re.compile(r"[:/._\-]")

#: How long the metadata of every channel may take to read.
_DETAILS_S = 30.0

#: Seconds between tries of the first load while the stream cannot be read.
_RETRY_S = 5.0

#: Ranks, best first: how a word of the query matches a channel.
EXACT, PREFIX, PART, INSIDE, UNIT, DESCRIPTION = range(6)


class DirectoryIndex:
    """Channel URIs with their description and units (pure, no I/O), searched by
    any part of the name, the description and the units, ranked."""

    def __init__(
        self, uris: list[str], details: dict[str, tuple[str, str]] | None = None
    ) -> None:
        details = details or {}
        unique = set(uris)
        self._uris = sorted(unique, key=str.lower)
        self._details = [details.get(u, ("", "")) for u in self._uris]
        self._by_uri = {u: d for u, d in details.items() if u in unique}
        low = [u.lower() for u in self._uris]
        self._low = low
        self._names = [u.partition("://")[2] or u for u in low]  # after the scheme
        self._units = [unit.lower() for _, unit in self._details]
        # the name's parts, each after \x01: a part starting with a word is one search
        self._parts = ["\x01" + _PART.sub("\x01", n) for n in self._names]
        self._descs = [desc.lower() for desc, _ in self._details]
        # each channel's place among all, shorter names first (the order within a rank)
        self._short = [0] * len(low)
        by_length = sorted(
            range(len(low)), key=lambda i: (len(self._names[i]), self._names[i])
        )
        for place, i in enumerate(by_length):
            self._short[i] = place
        # one text per channel, scanned for each word of a query
        self._hay = [
            f"{u}\x00{d}\x00{n}"
            for u, d, n in zip(low, self._descs, self._units, strict=True)
        ]

    def __len__(self) -> int:
        return len(self._uris)

    def _rank(self, i: int, word: str) -> int:
        """How well ``word`` (lower-cased, known to occur) matches channel ``i``."""
        name = self._names[i]
        if word == name or word == self._low[i]:
            return EXACT
        if name.startswith(word) or self._low[i].startswith(word):
            return PREFIX
        at = name.find(word)
        if at > 0 and _PART.match(name, at - 1):
            return PART
        if at >= 0 or word in self._low[i]:
            return INSIDE
        if self._units[i].startswith(word):
            return UNIT
        return DESCRIPTION

    def search(self, query: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` URIs whose name, description or units hold every word of
        ``query`` (case-insensitive), best first: the whole name, then its start,
        the start of a part of it (``SINE`` in ``DEMO:SINE``), anywhere in it,
        the units, the description; shorter names first within a rank. And how
        many match in all."""
        words = query.lower().split()
        if not words:
            return self._uris[:limit], len(self._uris)
        hay = self._hay
        matches = [i for i in range(len(hay)) if words[0] in hay[i]]
        for word in words[1:]:
            matches = [i for i in matches if word in hay[i]]
        if len(words) > 1 or len(matches) <= 4 * limit:
            best = heapq.nsmallest(
                limit,
                matches,
                key=lambda i: (
                    max(self._rank(i, w) for w in words),
                    len(self._names[i]),
                    self._names[i],
                ),
            )
        else:
            best = self._best_of_one_word(matches, words[0], limit)
        return [self._uris[i] for i in best], len(matches)

    def _tier(self, k: int, pool: list[int], word: str) -> list[int]:
        """The channels of ``pool`` that ``word`` matches at rank ``k`` or better."""
        names, low = self._names, self._low
        if k == EXACT:
            return [i for i in pool if names[i] == word or low[i] == word]
        if k == PREFIX:
            return [
                i for i in pool if names[i].startswith(word) or low[i].startswith(word)
            ]
        if k == PART:
            part = "\x01" + word
            parts = self._parts
            return [i for i in pool if part in parts[i] or low[i].startswith(word)]
        if k == INSIDE:
            return [i for i in pool if word in low[i]]
        if k == UNIT:
            units = self._units
            return [i for i in pool if word in low[i] or units[i].startswith(word)]
        return pool

    def _best_of_one_word(self, matches: list[int], word: str, limit: int) -> list[int]:
        """The best ``limit`` of many matches of one word, rank by rank: the
        first rank holding ``limit`` channels ends the ranking (a broad word
        costs a few C-speed passes, not one ranking per channel)."""
        names = self._names
        better: list[int] = []  # fewer than limit, ranked below k
        for k in range(DESCRIPTION + 1):
            tier = self._tier(k, matches, word)
            if len(tier) < limit and k < DESCRIPTION:
                better = tier
                continue
            head = sorted(
                better, key=lambda i: (self._rank(i, word), len(names[i]), names[i])
            )
            seen = set(better)
            more = heapq.nsmallest(
                limit - len(head),
                (i for i in tier if i not in seen) if seen else tier,
                key=self._short.__getitem__,
            )
            return head + more
        return better

    def details(self, uri: str) -> tuple[str, str]:
        """The description and units known for ``uri`` (empty when none)."""
        return self._by_uri.get(uri, ("", ""))


def uris_of(subjects: list[str], prefix: str) -> list[str]:
    """The channel URIs of ``val`` subjects (others are skipped)."""
    return Subjects(prefix).uris(subjects, "val")


def details_of(messages: dict[str, bytes], prefix: str) -> dict[str, tuple[str, str]]:
    """(description, units) per channel URI of ``meta`` messages by subject
    (those naming no channel, undecodable or without either are skipped)."""
    mapping = Subjects(prefix)
    out: dict[str, tuple[str, str]] = {}
    for subject, data in messages.items():
        for uri in mapping.uris([subject], "meta"):
            desc, unit = meta_text(data)
            if desc or unit:
                out[uri] = (desc, unit)
    return out


class ChannelDirectory:
    """The directory of one gateway, loaded in the background, following the
    metadata published and refreshed from the last-value stream."""

    def __init__(
        self, bus: Bus, prefix: str, refresh_s: float = 10.0, settle_s: float = 1.0
    ) -> None:
        self._bus = bus
        self._prefix = prefix
        self._subjects = Subjects(prefix)
        self._stream = StoreConfig(prefix).stream
        self._refresh_s = refresh_s
        self._settle_s = settle_s
        self._index = DirectoryIndex([])
        self._loaded_at: float | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._started: asyncio.Task[None] | None = None
        #: the channels listed and their (description, units)
        self._uris: set[str] = set()
        self._details: dict[str, tuple[str, str]] = {}
        #: channels whose metadata was read or received (not read again)
        self._described: set[str] = set()
        #: channels whose metadata arrived during the refresh under way
        self._live: set[str] = set()
        #: the index lacks changes made since it was built
        self._changed = False
        self._building: asyncio.Task[None] | None = None
        self._settle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Follow the metadata and load the directory in the background, once NATS
        is connected."""
        self._started = asyncio.create_task(self._start(), name="directory-start")

    async def _start(self) -> None:
        await self._bus.wait_connected(None)
        await self._bus.subscribe(f"{self._prefix}.meta.>", self._on_meta)
        while self._loaded_at is None:  # the stream may come later (bus init)
            self._spawn_refresh()
            assert self._refreshing is not None
            await asyncio.shield(self._refreshing)
            if self._loaded_at is None:
                await asyncio.sleep(_RETRY_S)

    def bus_up(self) -> None:
        """After a reconnect: metadata published meanwhile was missed, so the next
        refresh reads all of it again."""
        self._described.clear()

    def _on_meta(self, subject: bytes, data: bytes) -> None:
        for uri in self._subjects.uris([subject.decode(errors="replace")], "meta"):
            about = meta_text(data)
            self._live.add(uri)
            self._described.add(uri)
            if uri in self._uris and self._details.get(uri, ("", "")) == about:
                return
            self._uris.add(uri)
            if about == ("", ""):
                self._details.pop(uri, None)
            else:
                self._details[uri] = about
            self._mark_changed()

    def _mark_changed(self) -> None:
        """Index the change once the metadata has been quiet for ``settle_s``."""
        self._changed = True
        if self._settle is not None:
            self._settle.cancel()
        self._settle = asyncio.get_running_loop().call_later(
            self._settle_s, self._spawn_build
        )

    def _spawn_build(self) -> asyncio.Task[None]:
        if self._building is None or self._building.done():
            self._building = asyncio.create_task(self._build())
        return self._building

    async def _build(self) -> None:
        while self._changed:
            self._changed = False
            uris, details = list(self._uris), dict(self._details)
            self._index = await asyncio.to_thread(DirectoryIndex, uris, details)

    async def ready(self) -> None:
        """Load the directory on first use (or wait for the load under way); once
        loaded, a search never waits: changes not indexed yet are indexed in the
        background, and the list is refreshed there when it is older than
        ``refresh_s``. :class:`StoreUnavailableError` if it was never loaded and
        cannot be."""
        if self._loaded_at is None:
            await self._refresh_once()
        elif time.monotonic() - self._loaded_at > self._refresh_s:
            self._spawn_refresh()
        if self._changed:
            self._spawn_build()

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
        """Read the stream's ``val`` subjects now, and the metadata of the
        channels whose metadata was not read or received yet."""
        if not self._bus.up:
            raise StoreUnavailableError("NATS is down")
        self._live = set()
        try:
            subjects = await stream_subjects(
                self._bus.nc, self._stream, f"{self._prefix}.val.>"
            )
        except StoreError as exc:
            raise StoreUnavailableError(str(exc)) from None
        named = await asyncio.to_thread(self._named, subjects)
        unread = [
            (uri, subject) for uri, subject in named if uri not in self._described
        ]
        read = await self._read_details([meta for _, meta in unread])
        self._uris = {uri for uri, _ in named} | self._live
        # channels gone from the stream are forgotten
        self._details = {u: d for u, d in self._details.items() if u in self._uris}
        self._described &= self._uris
        for uri, _ in unread:
            if uri in self._live:  # received meanwhile: newer than the one read
                continue
            self._described.add(uri)
            about = read.get(uri)
            if about:
                self._details[uri] = about
            else:
                self._details.pop(uri, None)
        self._changed = True
        await asyncio.shield(self._spawn_build())
        self._loaded_at = time.monotonic()

    def _named(self, subjects: list[str]) -> list[tuple[str, str]]:
        """(URI, ``meta`` subject) of each ``val`` subject naming a channel."""
        val, meta = f"{self._prefix}.val.", f"{self._prefix}.meta."
        return [
            (uri, meta + subject[len(val) :])
            for subject in subjects
            for uri in self._subjects.uris([subject], "val")
        ]

    async def _read_details(self, subjects: list[str]) -> dict[str, tuple[str, str]]:
        """Description and units per channel from these metadata subjects (empty
        when they cannot be read: the names alone are still searched)."""
        if not subjects:
            return {}
        try:
            snap = await fetch_last(
                self._bus.nc, subjects, stream=self._stream, timeout=_DETAILS_S
            )
        except (StoreError, TimeoutError) as exc:
            log.warning("channel directory without descriptions: %s", exc)
            return {}
        return await asyncio.to_thread(details_of, snap.messages, self._prefix)

    def search(self, query: str, limit: int) -> tuple[list[str], int]:
        """See :meth:`DirectoryIndex.search`."""
        return self._index.search(query, limit)

    def details(self, uri: str) -> tuple[str, str]:
        """See :meth:`DirectoryIndex.details`."""
        return self._index.details(uri)

    async def close(self) -> None:
        if self._settle is not None:
            self._settle.cancel()
        for task in (self._started, self._refreshing, self._building):
            if task is not None:
                task.cancel()
