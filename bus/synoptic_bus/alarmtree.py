"""The alarm tree's bucket: a JetStream key-value bucket with one key, ``tree``.

The value is the tree (:mod:`synoptic_schemas.alarmtree`) with its save record,
zlib-compressed JSON; its revision is the key's stream sequence. Writes are
validated first and conditional on the revision they are based on, like the
screens bucket's (:mod:`synoptic_bus.screens`): a stale one is refused with
:class:`~synoptic_bus.screens.ConflictError` naming who saved the newer one. The
alarm service watches the key; gateways read and write it for the browser.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from nats.errors import ConnectionClosedError, NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import (
    APIError,
    BucketNotFoundError,
    NoStreamResponseError,
    NotFoundError,
)

from synoptic_bus.connect import NatsClient
from synoptic_bus.screens import (
    EXPECTED_LAST,
    HEADROOM,
    WRONG_LAST,
    ConflictError,
    StoreUnavailableError,
)
from synoptic_schemas.alarmtree import (
    DEFAULT_BUCKET,
    HISTORY,
    MAX_TREE_BYTES,
    TREE_KEY,
    AlarmTreeError,
    check_tree,
    decode_stored,
    encode_stored,
)
from synoptic_schemas.screens import RevInfo, make_rev

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TreeStoreConfig:
    """How the tree's bucket is laid out in one deployment."""

    bucket: str = DEFAULT_BUCKET
    storage: Literal["memory", "file"] = "file"
    replicas: int = 1

    @property
    def stream(self) -> str:
        return f"KV_{self.bucket}"

    @property
    def subject(self) -> str:
        return f"$KV.{self.bucket}.{TREE_KEY}"

    def kv_config(self) -> KeyValueConfig:
        return KeyValueConfig(
            bucket=self.bucket,
            description="Synoptic alarm tree: one key, zlib-compressed JSON",
            history=HISTORY,
            storage=StorageType.FILE if self.storage == "file" else StorageType.MEMORY,
            replicas=self.replicas,
            max_value_size=MAX_TREE_BYTES,
            direct=True,
        )


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One revision of the tree (``tree`` None: the key holds none)."""

    revision: int
    tree: dict[str, Any] | None
    rev: RevInfo

    def summary(self) -> dict[str, Any]:
        return {"revision": self.revision, "by": self.rev.by, "at": self.rev.at,
                "summary": self.rev.summary}  # fmt: skip


def entry_from(revision: int, data: bytes) -> TreeEntry:
    """A :class:`TreeEntry` from a stored value; a value that is not a valid tree
    (written by another tool) reads as no tree, with a warning."""
    if not data:
        return TreeEntry(revision, None, RevInfo())
    try:
        tree, rev = decode_stored(data)
    except AlarmTreeError as exc:
        log.warning("alarm tree revision %d is not a valid tree: %s", revision, exc)
        return TreeEntry(revision, None, RevInfo())
    return TreeEntry(
        revision, tree, RevInfo(rev.get("by", ""), rev.get("at", ""),
                                rev.get("summary", ""))
    )  # fmt: skip


class TreeStore:
    """The alarm tree's bucket on one NATS connection."""

    def __init__(self, nc: NatsClient, config: TreeStoreConfig) -> None:
        self.nc = nc
        self.config = config
        self._js = nc.jetstream()

    @classmethod
    async def ensure(cls, nc: NatsClient, config: TreeStoreConfig) -> TreeStore:
        """The bucket, created when missing (idempotent; a concurrent creator wins)."""
        js = nc.jetstream()
        try:
            await js.key_value(config.bucket)
        except BucketNotFoundError:
            try:
                await js.create_key_value(config.kv_config())
                log.info("created alarm tree bucket %s", config.bucket)
            except APIError as exc:
                log.debug("create_key_value: %s", exc)
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"JetStream does not answer: {exc}") from None
        return cls(nc, config)

    @property
    def limit(self) -> int:
        """The largest stored (compressed) value: the server's max_payload."""
        return max(self.nc.max_payload - HEADROOM, 0)

    async def latest(self) -> TreeEntry:
        """The current tree (revision 0, tree None: never written)."""
        try:
            msg = await self._js.get_msg(
                self.config.stream, subject=self.config.subject
            )
        except NotFoundError:
            return TreeEntry(0, None, RevInfo())
        except (NoRespondersError, NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(f"reading the alarm tree: {exc}") from None
        return entry_from(msg.seq or 0, msg.data or b"")

    async def _last_revision(self) -> int:
        """The bucket stream's last sequence: the tree's revision or later (cheap:
        the tree itself is not read)."""
        info = await self._js.stream_info(self.config.stream)
        return int(info.state.last_seq)

    async def put(
        self, tree: Any, base_revision: int, by: str, summary: str = ""
    ) -> TreeEntry:
        """Write ``tree`` as the next revision if the current one is
        ``base_revision`` (0: none yet). Raises :class:`AlarmTreeError` (nothing
        written), :class:`ConflictError` or :class:`StoreUnavailableError`."""
        checked = check_tree(tree)
        rev = make_rev(by, summary)
        data = encode_stored(checked, rev.as_dict())
        if len(data) > self.limit:
            raise AlarmTreeError(
                f"the tree takes {len(data)} bytes compressed: more than the bus "
                f"takes in one message ({self.limit}); raise the server's max_payload"
            )
        try:
            ack = await self._js.publish(
                self.config.subject, data, headers={EXPECTED_LAST: str(base_revision)}
            )
        except APIError as exc:
            if exc.err_code not in WRONG_LAST:
                raise StoreUnavailableError(
                    f"writing the alarm tree: {exc.description}"
                ) from None
            current = await self.latest()
            raise ConflictError(
                "alarm tree", current.revision, current.rev, current.tree is None
            ) from None
        except (NoRespondersError, NoStreamResponseError):
            raise StoreUnavailableError(
                f"no stream answers for the alarm tree bucket {self.config.bucket!r}"
            ) from None
        except (NatsTimeoutError, ConnectionClosedError) as exc:
            raise StoreUnavailableError(
                f"writing the alarm tree: {type(exc).__name__} (it may have been stored)"
            ) from None
        return TreeEntry(int(ack.seq), checked, rev)

    async def watch(
        self, poll: float = 1.0, recheck: float = 10.0
    ) -> AsyncIterator[TreeEntry]:
        """The current tree, then each new revision as it is saved (a revision
        missed while the connection was away is read again at least every
        ``recheck`` seconds)."""
        last = -1
        watcher: Any = None
        idle = 0.0
        while True:
            try:
                if watcher is None:
                    kv = await self._js.key_value(self.config.bucket)
                    watcher = await kv.watch(TREE_KEY)
                    idle = recheck
                if idle >= recheck:
                    idle = 0.0
                    if await self._last_revision() > last:
                        entry = await self.latest()
                        if entry.revision > last:
                            last = entry.revision
                            yield entry
                try:
                    update = await watcher.updates(timeout=poll)
                except (NatsTimeoutError, TimeoutError):
                    idle += poll
                    continue
                if update is not None and (update.revision or 0) > last:
                    last = update.revision or 0
                    yield entry_from(last, update.value or b"")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the connection went away, bucket gone …
                log.debug("alarm tree watch: %s", exc)
                watcher = None
                await asyncio.sleep(poll)
