"""Deterministic sharding: which adapter instance owns a channel.

``Shard(i, n)`` owns the channels whose stable hash (CRC-32 of the normalised URI,
the same in every process and Python version) is ``i`` modulo ``n``. Replicas
started with ``--shard 0/n`` … ``--shard n-1/n`` split any channel set between
them with no coordination; each channel has exactly one owner.

A Tango channel hashes by its device (``tango://host:port/domain/family/member``):
every attribute of a device has the same owner. cppTango makes one event
subscription at a time per client process, so shards that hold whole devices
subscribe in parallel, one device proxy and one event channel per device server
each (4000 attributes over 10 devices: 8.5 s split by attribute, 4.1 s by device,
in 5 processes).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from synoptic_schemas import Channel

_SPEC = re.compile(r"^(\d+)/(\d+)$")


def channel_hash(channel: Channel) -> int:
    """A hash of the channel URI (of its device, for Tango) that every process
    agrees on."""
    key = f"tango://{channel.tango_device}" if channel.proto == "tango" else channel.uri
    return zlib.crc32(key.encode())


@dataclass(frozen=True)
class Shard:
    """This instance's share: index ``index`` of ``count`` replicas."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(
                f"shard {self.index}/{self.count}: expected 0 <= i < n, n >= 1"
            )

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """Parse ``"i/n"`` (e.g. ``"0/4"``)."""
        match = _SPEC.match(spec.strip())
        if not match:
            raise ValueError(f"shard {spec!r}: expected i/n, e.g. 0/4")
        return cls(int(match.group(1)), int(match.group(2)))

    def owns(self, channel: Channel) -> bool:
        """Whether this instance owns ``channel``."""
        return self.count == 1 or channel_hash(channel) % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
