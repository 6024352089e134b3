"""The two streams of the alarm system (docs/bus.md, "Alarms"; ADR 0030).

- ``CS_SEV`` keeps the adapters' severity transitions (``cs.sev.>``): the last
  few of every channel, on file. The alarm service reads it with a durable
  consumer, so transitions that happen while it is down (or restarting) are
  applied when it is back, in order, and latch as if it had never stopped.
  ``synoptic bus init`` creates it, so that transitions are kept from the start.
- ``CS_ALARM`` keeps what the alarm service publishes on ``cs.alarm.st.>``: the
  last states of every alarm, on file. It is the service's memory: a restarted
  service reads the latest state of each alarm from it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from synoptic_bus.connect import NatsClient
from synoptic_bus.prereq import insufficient_storage
from synoptic_schemas.subjects import DEFAULT_PREFIX

log = logging.getLogger(__name__)


def _base(prefix: str) -> str:
    return prefix.upper().replace(".", "_").replace("-", "_")


@dataclass(frozen=True)
class AlarmStreams:
    """The layout of both streams in one deployment."""

    prefix: str = DEFAULT_PREFIX
    storage: Literal["memory", "file"] = "file"
    replicas: int = 1
    #: transitions kept per channel (older ones are dropped first)
    sev_per_channel: int = 8
    sev_bytes: int = 1024 * 1024 * 1024
    #: states kept per alarm: the latest, and a short history of it
    states_per_alarm: int = 20

    @property
    def sev_stream(self) -> str:
        return _base(self.prefix) + "_SEV"

    @property
    def alarm_stream(self) -> str:
        return _base(self.prefix) + "_ALARM"

    @property
    def sync_subject(self) -> str:
        """The alarm service's store barrier (not a data subject)."""
        return f"{self.prefix}.alarm.sync"

    def sev_config(self) -> StreamConfig:
        return StreamConfig(
            name=self.sev_stream,
            description="Synoptic severity transitions, the last few per channel",
            subjects=[f"{self.prefix}.sev.>"],
            storage=self._storage(), num_replicas=self.replicas,
            max_msgs_per_subject=self.sev_per_channel, max_bytes=self.sev_bytes,
            discard=DiscardPolicy.OLD, allow_direct=True,
        )  # fmt: skip

    def alarm_config(self) -> StreamConfig:
        return StreamConfig(
            name=self.alarm_stream,
            description="Synoptic alarm states, the last ones per alarm",
            subjects=[f"{self.prefix}.alarm.st.>", self.sync_subject],
            storage=self._storage(), num_replicas=self.replicas,
            max_msgs_per_subject=self.states_per_alarm,
            discard=DiscardPolicy.OLD, allow_direct=True,
            duplicate_window=120.0,
        )  # fmt: skip

    def _storage(self) -> StorageType:
        return StorageType.FILE if self.storage == "file" else StorageType.MEMORY


async def ensure_stream(nc: NatsClient, config: StreamConfig) -> bool:
    """Create a stream when it is missing (idempotent; a concurrent creator wins);
    an existing one keeps its layout. Returns whether it was created."""
    js = nc.jetstream()
    try:
        await js.stream_info(config.name or "")
        return False
    except NotFoundError:
        pass
    try:
        await js.add_stream(config)
    except Exception as exc:  # created meanwhile
        if insufficient_storage(exc):
            raise
        log.debug("add_stream %s raced: %s", config.name, exc)
        await js.stream_info(config.name or "")
        return False
    log.info("created stream %s", config.name)
    return True
