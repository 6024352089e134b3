"""Demand: tell adapters which channels this gateway watches.

Each watched channel is announced on ``cs.want.<proto>`` (a ``WantMsg`` with a
lease) when its first group appears and renewed every third of the lease while it is
watched. When its last group goes it is simply no longer renewed: the adapter
releases it when the lease lapses (an explicit release could not work, as other
gateways may hold leases on the same channel).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict

from synoptic_gateway.bus import Bus
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode
from synoptic_schemas.channels import Channel

log = logging.getLogger(__name__)

#: URIs per announcement (keeps payloads far below NATS' 1 MiB).
CHUNK = 500


class Demand:
    """The set of watched channels, announced with a lease."""

    def __init__(self, bus: Bus, subjects: Subjects, lease: float, by: str) -> None:
        self._bus = bus
        self._subjects = subjects
        self._lease = lease
        self._by = by
        self._wanted: dict[str, set[str]] = defaultdict(set)
        self._added: dict[str, set[str]] = defaultdict(set)
        self._flush: asyncio.Handle | None = None
        self._renew: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._renew = asyncio.create_task(self._renew_loop(), name="demand-renew")

    def stop(self) -> None:
        if self._renew:
            self._renew.cancel()
        if self._flush:
            self._flush.cancel()

    def add(self, channel: Channel) -> None:
        self._wanted[channel.proto].add(channel.uri)
        self._added[channel.proto].add(channel.uri)
        self._schedule()

    def remove(self, channel: Channel) -> None:
        self._wanted[channel.proto].discard(channel.uri)
        self._added[channel.proto].discard(channel.uri)

    def watched(self, proto: str) -> set[str]:
        """URIs of ``proto`` watched now."""
        return set(self._wanted[proto])

    def announce_all(self) -> None:
        """Renew every lease now (after a bus reconnect)."""
        self._send({p: set(u) for p, u in self._wanted.items()}, self._lease)

    def _schedule(self) -> None:
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_soon(self._flush_changes)

    def _flush_changes(self) -> None:
        self._flush = None
        added, self._added = self._added, defaultdict(set)
        self._send(added, self._lease)

    def _send(self, by_proto: dict[str, set[str]], lease: float) -> None:
        if not self._bus.up:
            return  # announce_all runs on reconnect
        for proto, uris in by_proto.items():
            ordered = sorted(uris)
            for i in range(0, len(ordered), CHUNK):
                msg = {"ver": SCHEMA_VERSION, "ch": ordered[i : i + CHUNK],
                       "lease": lease, "by": self._by}  # fmt: skip
                task = asyncio.create_task(
                    self._publish(self._subjects.want(proto), encode(msg))
                )
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _publish(self, subject: str, data: bytes) -> None:
        with contextlib.suppress(Exception):
            await self._bus.publish(subject, data)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self._lease / 3)
            self.announce_all()
