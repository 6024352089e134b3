"""Screens served by ``/api/screens``: the bus's ``screens`` key-value bucket,
watched by every gateway (any gateway serves any screen, none keeps state of its
own).

Each gateway watches the whole bucket and keeps the newest revision of every
screen, parsed and validated once per revision (~1 ms for 1000 widgets), ready to
send. Writes go to the bucket conditionally on the revision the edit is based on;
every gateway's watch then sees them and tells the sockets watching that screen
(the ``screen`` frame). When NATS is down the cached screens are still served;
writes answer "unavailable".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from synoptic_bus.screens import (
    Entry,
    ScreenBucket,
    ScreensConfig,
    StoreUnavailableError,
    entry_from,
)
from synoptic_gateway.bus import Bus
from synoptic_gateway.screenindex import NONE, ScreenChannels
from synoptic_gateway.screenindex import search as search_channels
from synoptic_gateway.settings import Settings
from synoptic_schemas import frames
from synoptic_schemas.screens import ScreenInvalidError, dump_screen, validate_screen

log = logging.getLogger(__name__)

#: Seconds between attempts to open (or re-watch) the bucket after a failure.
RETRY_S = 2.0


class ScreenError(Exception):
    """A screen that cannot be served: ``status`` 404 (none), 422 (stored but
    invalid: ``pointer``/``reason``, the stored ``revision``) or 503 (the store
    is unavailable)."""

    def __init__(
        self,
        status: int,
        message: str,
        pointer: str = "",
        reason: str = "",
        revision: int = 0,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.pointer = pointer
        self.reason = reason or message
        self.revision = revision


@dataclass(frozen=True, slots=True)
class Cached:
    """One screen's newest revision, validated: the bytes to send and their ETag,
    or the first schema error."""

    entry: Entry
    body: bytes = b""
    etag: str = '""'
    error: ScreenInvalidError | None = None
    #: The channels it shows (what a search by channel looks in).
    index: ScreenChannels = NONE


def cache_entry(entry: Entry, *, validated: bool = False) -> Cached:
    """Validate (unless ``validated``: a write this gateway checked) and encode
    one revision (a delete marker has nothing to send)."""
    if entry.deleted or entry.screen is None:
        return Cached(entry)
    try:
        if not validated:
            validate_screen(entry.screen)
    except ScreenInvalidError as exc:
        return Cached(entry, error=exc)
    body = dump_screen(entry.screen)
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return Cached(entry, body, etag, index=ScreenChannels.of(entry.screen))


class Watcher(Protocol):
    """A socket that can be told about a screen's new revision."""

    def send_frame(self, frame: dict[str, Any]) -> None: ...


class ScreenWatchers:
    """Which sockets watch which screen names."""

    def __init__(self) -> None:
        self._by_name: dict[str, set[Watcher]] = {}
        self._names: dict[Watcher, frozenset[str]] = {}

    def set(self, watcher: Watcher, names: frozenset[str]) -> None:
        """``watcher``'s watched names become ``names`` (empty: none)."""
        self.drop(watcher)
        if names:
            self._names[watcher] = names
            for name in names:
                self._by_name.setdefault(name, set()).add(watcher)

    def drop(self, watcher: Watcher) -> None:
        for name in self._names.pop(watcher, frozenset()):
            group = self._by_name.get(name)
            if group is not None:
                group.discard(watcher)
                if not group:
                    del self._by_name[name]

    def notify(self, entry: Entry) -> int:
        """Send the ``screen`` frame of ``entry`` to its watchers; how many."""
        group = self._by_name.get(entry.name)
        if not group:
            return 0
        frame = frames.screen(
            entry.name, entry.revision, entry.rev.by, entry.rev.at, entry.deleted
        )
        for watcher in list(group):
            watcher.send_frame(frame)
        return len(group)


class ScreenCatalog:
    """The bucket as this gateway sees it: a watched, validated cache for reads and
    the bucket itself for writes and history."""

    def __init__(
        self, bus: Bus, settings: Settings, on_change: Callable[[Entry], object]
    ) -> None:
        self._bus = bus
        self._settings = settings
        self._config = ScreensConfig(settings.screens_bucket)
        self._on_change = on_change
        self._cached: dict[str, Cached] = {}
        self._bucket: ScreenBucket | None = None
        self._task: asyncio.Task[None] | None = None
        self._seeded = False
        self.loaded = False  # the whole bucket has been read once
        self.problem = "not connected to NATS yet"
        # set once the first attempt loaded the bucket or failed
        self._settled = asyncio.Event()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="screens-watch")

    def restart(self) -> None:
        """Re-open the watch (after NATS came back)."""
        if self._task is not None:
            self._task.cancel()
        self.start()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        await self._bus.wait_connected(None)
        while True:
            try:
                await self._watch()
            except asyncio.CancelledError:
                raise
            except StoreUnavailableError as exc:
                self._unavailable(str(exc))
            except Exception as exc:  # JetStream errors: retry, never crash
                log.warning("watching the screens bucket: %s", exc)
                self._unavailable(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(RETRY_S)

    def _unavailable(self, reason: str) -> None:
        if self._bucket is not None or reason != self.problem:
            log.warning("screens unavailable: %s", reason)
        self._bucket = None
        self.problem = reason
        self._settled.set()

    async def _watch(self) -> None:
        nc = self._bus.nc
        if self._settings.seed_screens:
            bucket = await ScreenBucket.ensure(nc, self._config)
            if not self._seeded:
                report = await bucket.seed_folder(self._settings.screens_dir)
                self._seeded = True
                log.info(
                    "screens bucket %s: seeded %d from %s, %d present, %d refused",
                    self._config.bucket, len(report.created),
                    self._settings.screens_dir, len(report.present),
                    len(report.refused),
                )  # fmt: skip
        else:
            bucket = await ScreenBucket.open(nc, self._config)
        watcher = await bucket.watch()
        self._bucket = bucket
        self.problem = ""
        seen: set[str] = set()
        live = False
        try:
            async for e in watcher:
                if e is None:  # the newest revision of every key has arrived
                    for gone in set(self._cached) - seen:
                        del self._cached[gone]
                    live = self.loaded = True
                    self._settled.set()
                    continue
                seen.add(e.key)
                current = self._cached.get(e.key)
                if current is not None and current.entry.revision >= (e.revision or 0):
                    continue  # this gateway's own write, already served
                deleted = e.operation in ("DEL", "PURGE")
                entry = entry_from(e.key, e.revision or 0, e.value or b"", deleted)
                if self._apply(entry) and live:
                    self._on_change(entry)
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()

    def _apply(self, entry: Entry, *, validated: bool = False) -> bool:
        """Keep ``entry`` if it is newer than what is cached; whether it was."""
        current = self._cached.get(entry.name)
        if current is not None and current.entry.revision >= entry.revision:
            return False
        self._cached[entry.name] = cache_entry(entry, validated=validated)
        return True

    # ------------------------------------------------------------ reading

    async def settled(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` s) until the bucket was read once or could not
        be: a request right after the gateway started is answered, not refused."""
        if not self._settled.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._settled.wait(), timeout)

    def _require_loaded(self) -> None:
        if not self.loaded:
            raise ScreenError(503, f"screens unavailable: {self.problem}")

    def list(self) -> list[dict[str, Any]]:
        """Every screen: name, title, revision, at, by (and ``valid``/``error``;
        ``set``, ``file`` and ``home`` for a screen imported with its set)."""
        self._require_loaded()
        out: list[dict[str, Any]] = []
        for name in sorted(self._cached):
            cached = self._cached[name]
            entry = cached.entry
            if entry.deleted:
                continue
            screen = entry.screen or {}
            item: dict[str, Any] = {**entry.summary(), "valid": cached.error is None}
            title = screen.get("title")
            item["title"] = title if isinstance(title, str) else name
            if isinstance(screen.get("description"), str):
                item["description"] = screen["description"]
            source = screen.get("source")
            if isinstance(source, dict) and isinstance(source.get("set"), str):
                item["set"] = source["set"]
                item["file"] = str(source.get("file", ""))
                if source.get("home") is True:
                    item["home"] = True
            if cached.error is not None:
                item["error"] = str(cached.error)
            out.append(item)
        return out

    def by_channel(self, query: str, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The screens showing a channel that holds every word of ``query``,
        best first (:func:`synoptic_gateway.screenindex.search`), and how many."""
        self._require_loaded()
        return search_channels(
            ((n, c.index) for n, c in self._cached.items() if not c.entry.deleted),
            query,
            limit,
        )

    async def look_up(self, name: str) -> None:
        """Read ``name`` from the bucket when this gateway has not seen it: a screen
        stored a moment ago through another gateway or the CLI opens at once, before
        the watch brings it."""
        bucket = self._bucket
        if name in self._cached or bucket is None or not self._bus.up:
            return
        with contextlib.suppress(StoreUnavailableError):
            entry = await bucket.latest(name)
            if entry is not None and self._apply(entry):
                self._on_change(entry)

    def get(self, name: str) -> Cached:
        """The newest revision of ``name``, valid; :class:`ScreenError` otherwise."""
        self._require_loaded()
        cached = self._cached.get(name)
        if cached is None or cached.entry.deleted:
            raise ScreenError(404, f"no screen {name!r}")
        if cached.error is not None:
            error = cached.error
            raise ScreenError(
                422, str(error), error.pointer, error.reason, cached.entry.revision
            )
        return cached

    def bucket(self) -> ScreenBucket:
        """The bucket for writes and history; :class:`ScreenError` 503 if the bus
        or the bucket is unavailable."""
        if not self._bus.up:
            raise ScreenError(503, "NATS is down")
        if self._bucket is None:
            raise ScreenError(503, f"screens unavailable: {self.problem}")
        return self._bucket

    def saved(self, entry: Entry) -> None:
        """A write of this gateway succeeded: serve it and tell its watchers at
        once (the watch brings the same revision later and is then ignored)."""
        if self._apply(entry, validated=True):
            self._on_change(entry)
