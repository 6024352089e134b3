"""The screens bucket: a JetStream key-value bucket with one key per screen.

Every write is validated against the screen schema first and is conditional on the
key's last revision (optimistic concurrency): a write based on a stale revision is
refused with :class:`ConflictError`, naming who wrote the newer one and when. Deletes
leave a marker (with who and when) and keep the history. Used by the ``synoptic
screens`` commands and by gateways; the layout is documented in docs/bus.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nats.errors import (
    ConnectionClosedError,
    NoRespondersError,
    OutboundBufferLimitError,
)
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import KeyValueConfig, RawStreamMsg, StorageType
from nats.js.errors import (
    APIError,
    BucketNotFoundError,
    NoStreamResponseError,
    NotFoundError,
)
from nats.js.kv import KeyValue

from synoptic_bus.connect import NatsClient
from synoptic_bus.kvwatch import BucketWatch
from synoptic_schemas.screens import (
    DEFAULT_BUCKET,
    HISTORY,
    MAX_SCREEN_BYTES,
    RevInfo,
    ScreenInvalidError,
    ScreenTooLargeError,
    check_name,
    decode_stored,
    encode_stored,
    encode_valid,
    make_rev,
    parse_json,
    validate_screen,
)

log = logging.getLogger(__name__)

KV_OP = "KV-Operation"
EXPECTED_LAST = "Nats-Expected-Last-Subject-Sequence"
#: JetStream's "wrong last sequence" error codes
WRONG_LAST = (10071, 10164)
#: Room left in a message for headers under the server's max_payload
HEADROOM = 1024
#: The most revisions one history read returns (a bucket keeps ``history`` of them)
MAX_HISTORY_READ = 1000


class StoreUnavailableError(RuntimeError):
    """The bucket is missing, or NATS/JetStream does not answer."""


class ScreenNotFoundError(LookupError):
    """No such screen (never written, deleted, or a revision no longer kept)."""


class ConflictError(Exception):
    """A write based on a stale revision: ``revision`` is the current one (0: the
    key has none), ``by``/``at`` who wrote it and when."""

    def __init__(self, name: str, revision: int, rev: RevInfo, deleted: bool) -> None:
        who = f" by {rev.by}" if rev.by else ""
        when = f" at {rev.at}" if rev.at else ""
        state = "deleted" if deleted else "saved"
        super().__init__(
            f"screen {name!r} was {state} as revision {revision}{who}{when}"
        )
        self.name = name
        self.revision = revision
        self.rev = rev
        self.deleted = deleted


@dataclass(frozen=True)
class ScreensConfig:
    """How the bucket is laid out in one deployment."""

    bucket: str = DEFAULT_BUCKET
    history: int = HISTORY
    storage: Literal["memory", "file"] = "file"
    replicas: int = 1

    @property
    def stream(self) -> str:
        return f"KV_{self.bucket}"

    def kv_config(self) -> KeyValueConfig:
        return KeyValueConfig(
            bucket=self.bucket,
            description="Synoptic screens: one key per screen, JSON values",
            history=self.history,
            storage=StorageType.FILE if self.storage == "file" else StorageType.MEMORY,
            replicas=self.replicas,
            max_value_size=MAX_SCREEN_BYTES + HEADROOM,
            direct=True,
        )


@dataclass(frozen=True, slots=True)
class Entry:
    """One revision of a screen: its content (None for a delete marker) and record."""

    name: str
    revision: int
    screen: dict[str, Any] | None
    rev: RevInfo
    deleted: bool = False

    def summary(self) -> dict[str, Any]:
        """``name``, ``revision``, ``at``, ``by`` (what a write answers)."""
        return {"name": self.name, "revision": self.revision, "at": self.rev.at,
                "by": self.rev.by}  # fmt: skip


def entry_from(name: str, revision: int, data: bytes, deleted: bool) -> Entry:
    """An :class:`Entry` from a stored value (a value that is not a JSON object
    becomes a screen ``{}``: it fails validation where it is served)."""
    try:
        screen, rev = decode_stored(data) if data else ({}, RevInfo())
    except ScreenInvalidError:
        screen, rev = {}, RevInfo()
    return Entry(name, revision, None if deleted else screen, rev, deleted)


def _is_delete(headers: dict[str, str] | None) -> bool:
    return bool(headers) and headers.get(KV_OP) in ("DEL", "PURGE")  # type: ignore[union-attr]


@dataclass
class SeedReport:
    """What :meth:`ScreenBucket.seed` did with each file."""

    created: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # file name -> reason


class ScreenBucket:
    """The screens bucket on one NATS connection."""

    def __init__(self, nc: NatsClient, config: ScreensConfig, kv: KeyValue) -> None:
        self.nc = nc
        self.config = config
        self.kv = kv
        self._js = nc.jetstream()

    # ---------------------------------------------------------------- opening

    @classmethod
    async def open(cls, nc: NatsClient, config: ScreensConfig) -> ScreenBucket:
        """The existing bucket; :class:`StoreUnavailableError` when it is missing."""
        try:
            kv = await nc.jetstream().key_value(config.bucket)
        except BucketNotFoundError:
            raise StoreUnavailableError(
                f"the screens bucket {config.bucket!r} does not exist "
                "(`synoptic bus init` creates it)"
            ) from None
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"JetStream does not answer: {exc}") from None
        return cls(nc, config, kv)

    @classmethod
    async def ensure(cls, nc: NatsClient, config: ScreensConfig) -> ScreenBucket:
        """The bucket, created with ``config`` when missing (idempotent; a
        concurrent creator wins). An existing bucket keeps its layout."""
        try:
            return await cls.open(nc, config)
        except StoreUnavailableError:
            pass
        js = nc.jetstream()
        try:
            await js.create_key_value(config.kv_config())
            log.info("created screens bucket %s", config.bucket)
        except APIError as exc:  # created meanwhile with another layout
            log.debug("create_key_value: %s", exc)
        except (NoRespondersError, NatsTimeoutError) as exc:
            raise StoreUnavailableError(f"JetStream does not answer: {exc}") from None
        return await cls.open(nc, config)

    def _subject(self, name: str) -> str:
        return f"$KV.{self.config.bucket}.{check_name(name)}"

    @property
    def limit(self) -> int:
        """The largest value this bucket takes: 5 MiB or the server's max_payload."""
        return min(MAX_SCREEN_BYTES, max(self.nc.max_payload - HEADROOM, 0))

    # ---------------------------------------------------------------- reading

    async def _newest(self, name: str) -> RawStreamMsg | None:
        """The newest message of ``name``'s subject, or None."""
        try:
            return await self._js.get_msg(
                self.config.stream, subject=self._subject(name)
            )
        except NotFoundError:
            return None
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"reading {name!r}: {exc}") from None

    async def latest(self, name: str) -> Entry | None:
        """The newest revision of ``name`` (a delete marker included), or None."""
        msg = await self._newest(name)
        if msg is None:
            return None
        return entry_from(name, msg.seq or 0, msg.data or b"", _is_delete(msg.headers))

    async def latest_stored(self, name: str) -> tuple[int, bytes] | None:
        """The newest revision of ``name`` as stored (its bytes undecoded), or
        None when there is none or it is a delete marker."""
        msg = await self._newest(name)
        if msg is None or _is_delete(msg.headers):
            return None
        return msg.seq or 0, msg.data or b""

    async def get(self, name: str, revision: int | None = None) -> Entry:
        """The current screen ``name``, or one revision of it; :class:`ScreenNotFoundError`."""
        if revision is None:
            entry = await self.latest(name)
        else:
            entry = await self._revision(name, revision)
        if entry is None or entry.deleted:
            raise ScreenNotFoundError(
                f"no screen {name!r}" + (f" revision {revision}" if revision else "")
            )
        return entry

    async def _revision(self, name: str, revision: int) -> Entry | None:
        subject = self._subject(name)
        if revision < 1:
            return None
        try:
            msg = await self._js.get_msg(self.config.stream, seq=revision)
        except NotFoundError:
            return None
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"reading {name!r}: {exc}") from None
        if msg.subject != subject:
            return None
        return entry_from(name, revision, msg.data or b"", _is_delete(msg.headers))

    async def history(self, name: str) -> list[Entry]:
        """Every kept revision of ``name``, newest first (empty: none).

        Read message by message (Direct Get, next by subject) rather than with
        nats-py's ``KeyValue.history``: its watcher can report "no keys" when the
        consumer has delivered everything before its first message is handled."""
        subject = self._subject(name)
        out: list[Entry] = []
        seq = 1
        while len(out) < MAX_HISTORY_READ:
            try:
                msg = await self._js.get_msg(
                    self.config.stream, seq=seq, subject=subject, next=True
                )
            except NotFoundError:
                break
            except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
                raise StoreUnavailableError(f"history of {name!r}: {exc}") from None
            revision = msg.seq or 0
            out.append(
                entry_from(name, revision, msg.data or b"", _is_delete(msg.headers))
            )
            seq = revision + 1
        return sorted(out, key=lambda e: e.revision, reverse=True)

    async def watch(self) -> BucketWatch:
        """Every key's newest revision, then ``None``, then each new revision."""
        return await BucketWatch.start(self.kv, self._js, self.config.stream)

    async def entries(self, timeout: float = 10.0) -> list[Entry]:
        """The newest revision of every key (delete markers included), by name."""
        try:
            watcher = await self.watch()
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"listing screens: {exc}") from None
        out: dict[str, Entry] = {}
        try:
            async with asyncio.timeout(timeout):
                async for e in watcher:
                    if e is None:
                        break
                    out[e.key] = entry_from(
                        e.key, e.revision or 0, e.value or b"",
                        e.operation in ("DEL", "PURGE"),
                    )  # fmt: skip
        except TimeoutError:
            raise StoreUnavailableError("listing screens timed out") from None
        except (NoRespondersError, ConnectionClosedError) as exc:  # the stream's info
            raise StoreUnavailableError(f"listing screens: {exc}") from None
        finally:
            await watcher.stop()
        return [out[k] for k in sorted(out)]

    # ---------------------------------------------------------------- writing

    async def put(
        self,
        name: str,
        screen: Any,
        base_revision: int,
        by: str,
        summary: str = "",
        *,
        recreate: bool = True,
        valid_json: str | None = None,
    ) -> Entry:
        """Write ``screen`` as the next revision of ``name`` if the key's current
        revision is ``base_revision`` (0: the key holds no screen: never written,
        or deleted unless ``recreate`` is false). Raises :class:`ScreenInvalidError` (nothing written),
        :class:`ScreenTooLargeError`, :class:`ConflictError` or :class:`StoreUnavailableError`.

        ``valid_json``: ``screen`` as compact JSON text made by a caller that has
        just validated it (the importer: every converted screen is validated
        once, as it is made); stored as it is, neither validated nor encoded
        again. Every other write is validated here."""
        check_name(name)
        rev = make_rev(by, summary)
        if valid_json is None:
            validate_screen(screen)
            data = encode_stored(screen, rev)
        else:
            data = encode_valid(valid_json, rev)
        if len(data) > self.limit:
            raise ScreenTooLargeError(len(data), self.limit)
        revision = await self._write(
            name, data, base_revision, delete=False, recreate=recreate
        )
        return Entry(name, revision, screen, rev)

    async def delete(
        self, name: str, base_revision: int, by: str, summary: str = ""
    ) -> Entry:
        """Leave a delete marker (the history stays) if the current revision is
        ``base_revision``; :class:`ScreenNotFoundError` when there is no screen to delete."""
        current = await self.latest(name)
        if current is None or current.deleted:
            raise ScreenNotFoundError(f"no screen {name!r}")
        rev = make_rev(by, summary or "deleted")
        revision = await self._write(
            name, encode_stored(None, rev), base_revision, delete=True
        )
        return Entry(name, revision, None, rev, deleted=True)

    async def revert(
        self, name: str, revision: int, base_revision: int, by: str
    ) -> Entry:
        """Write revision ``revision``'s content as a new revision."""
        old = await self.get(name, revision)
        assert old.screen is not None
        return await self.put(
            name, old.screen, base_revision, by, f"revert to {revision}"
        )

    async def _write(
        self, name: str, data: bytes, base: int, *, delete: bool, recreate: bool = True
    ) -> int:
        headers = {EXPECTED_LAST: str(base)}
        if delete:
            headers[KV_OP] = "DEL"
        try:
            ack = await self._js.publish(self._subject(name), data, headers=headers)
        except APIError as exc:
            if exc.err_code not in WRONG_LAST:
                raise StoreUnavailableError(
                    f"writing {name!r}: {exc.description}"
                ) from None
            current = await self.latest(name)
            if base == 0 and recreate and not delete and current and current.deleted:
                return await self._write(name, data, current.revision, delete=False)
            if current is None:
                raise ConflictError(name, 0, RevInfo(), True) from None
            raise ConflictError(
                name, current.revision, current.rev, current.deleted
            ) from None
        except (NoRespondersError, NoStreamResponseError):
            raise StoreUnavailableError(
                f"no stream answers for the screens bucket {self.config.bucket!r} "
                "(it does not exist, or JetStream is still starting)"
            ) from None
        except NatsTimeoutError:
            raise StoreUnavailableError(
                f"writing {name!r}: JetStream did not acknowledge in time "
                "(the write may have been stored: reload to see)"
            ) from None
        except (ConnectionClosedError, OutboundBufferLimitError) as exc:
            raise StoreUnavailableError(
                f"writing {name!r}: {type(exc).__name__}"
            ) from None
        return int(ack.seq)

    async def seed(self, files: Iterable[Path], by: str = "seed") -> SeedReport:
        """Create each ``<name>.json`` file's screen whose key holds nothing (not
        even a delete marker); keys already present are left alone."""
        report = SeedReport()
        for path in sorted(files):
            name = path.name.removesuffix(".json")
            try:
                check_name(name)
                screen = parse_json(path.read_bytes())
                await self.put(
                    name, screen, 0, by, f"seeded from {path.name}", recreate=False
                )
            except ConflictError:
                report.present.append(name)
            except (
                ScreenInvalidError,
                ScreenTooLargeError,
                OSError,
                ValueError,
            ) as exc:
                report.refused[path.name] = str(exc)
                log.warning("not seeding %s: %s", path, exc)
            else:
                report.created.append(name)
        return report

    async def seed_folder(self, folder: Path, by: str = "seed") -> SeedReport:
        """:meth:`seed` with every ``*.json`` of ``folder`` (none if it is missing)."""
        return await self.seed(await asyncio.to_thread(json_files, folder), by)


def json_files(folder: Path) -> list[Path]:
    """The ``*.json`` files of ``folder``, sorted (none if it is missing)."""
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


__all__ = [
    "ConflictError",
    "Entry",
    "ScreenBucket",
    "ScreenNotFoundError",
    "ScreensConfig",
    "SeedReport",
    "StoreUnavailableError",
    "json_files",
]
