"""The metadata in force at any moment: a stream that keeps every metadata message.

The last-value stream (``CS_LAST``) keeps each channel's latest metadata only,
but a screen shown as it was at 03:12 needs the units, limits and enum labels of
03:12. The last-value stream republishes everything it stores under
``cs.hist.>`` (values to ``cs.hist.val.<tail>``, metadata to
``cs.hist.meta.<tail>``: :func:`synoptic_bus.store.history_feed`), and this
stream (``CS_META``) keeps the metadata messages for a long window: metadata
changes seldom (an adapter publishes it on connect and when it changes), so
months of it cost little. The metadata of a channel at a moment is the last
message of its subject stored at or before it (:func:`synoptic_bus.moment.last_at`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from nats.aio.client import Client as NatsClient
from nats.js.api import DiscardPolicy, StorageType, StreamConfig

from synoptic_bus.store import ensure_stream, stream_name
from synoptic_schemas.subjects import DEFAULT_PREFIX

log = logging.getLogger(__name__)

#: Defaults of ``synoptic bus init``: 400 days (the longest history request), the
#: last 1000 metadata messages of a channel, 256 MiB in all (~500 000 messages).
DEFAULT_META_WINDOW_S = 400 * 86400.0
DEFAULT_META_PER_SUBJECT = 1000
DEFAULT_META_BYTES = 256 << 20


def meta_stream_name(prefix: str) -> str:
    """``cs`` → ``CS_META``."""
    return stream_name(prefix).removesuffix("_LAST") + "_META"


@dataclass(frozen=True)
class MetaHistoryConfig:
    """How the metadata history is laid out in one deployment."""

    prefix: str = DEFAULT_PREFIX
    window_s: float = DEFAULT_META_WINDOW_S
    max_msgs_per_subject: int = DEFAULT_META_PER_SUBJECT
    max_bytes: int = DEFAULT_META_BYTES
    storage: Literal["memory", "file"] = "file"
    replicas: int = 1

    @property
    def stream(self) -> str:
        return meta_stream_name(self.prefix)

    @property
    def subjects(self) -> list[str]:
        return [f"{self.prefix}.hist.meta.>"]

    def stream_config(self) -> StreamConfig:
        return StreamConfig(
            name=self.stream,
            description="Synoptic metadata history: every metadata message",
            subjects=self.subjects,
            storage=StorageType.MEMORY
            if self.storage == "memory"
            else StorageType.FILE,
            num_replicas=self.replicas,
            max_age=self.window_s,
            max_msgs_per_subject=self.max_msgs_per_subject,
            max_bytes=self.max_bytes,
            discard=DiscardPolicy.OLD,
            allow_direct=True,
        )


async def ensure_meta_history(nc: NatsClient, config: MetaHistoryConfig) -> None:
    """Create the metadata history stream or apply ``config``'s limits to it
    (idempotent; storage cannot change in place: the existing one is kept). The
    last-value stream feeds it once the raw history's feed is in place
    (:func:`synoptic_bus.history.ensure_history`)."""
    await ensure_stream(nc, config.stream_config(), "metadata history")
