"""Which subscription worker of a Tango adapter instance owns a device.

cppTango makes one event subscription at a time per process, so an adapter
instance with ``workers: N`` runs N worker processes and deals whole devices out
to them: a device goes to the worker with the fewest devices (then the fewest
attributes, then the lowest index), so 10 devices over 5 workers are 2 each, never
a hash collision. The table lives in the supervising process
(:mod:`synoptic_adapters.tango.supervisor`); each worker holds its own share in a
:class:`WorkerShard`. No Tango import here: the supervisor never loads cppTango.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from synoptic_adapters.sharding import Shard
from synoptic_schemas import Channel


class Assignment:
    """The device → worker table of one adapter instance."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers: {workers}: expected >= 1")
        self.workers = workers
        self.owner: dict[str, int] = {}  # device (host:port/d/f/m) -> worker
        self.attributes: Counter[int] = Counter()  # monitored attributes per worker

    def devices_of(self, worker: int) -> list[str]:
        """The devices dealt to ``worker``, sorted."""
        return sorted(d for d, w in self.owner.items() if w == worker)

    def deal(self, channels: Iterable[Channel]) -> dict[int, list[str]]:
        """Give every device of ``channels`` that has no owner yet to the least
        loaded worker (devices in sorted order, the largest first); return the new
        devices per worker."""
        wanted: Counter[str] = Counter(c.tango_device for c in channels)
        fresh = sorted(
            (d for d in wanted if d not in self.owner), key=lambda d: (-wanted[d], d)
        )
        per_worker = Counter(self.owner.values())
        dealt: dict[int, list[str]] = {}
        for device in fresh:
            worker = min(
                range(self.workers),
                key=lambda w: (per_worker[w], self.attributes[w], w),
            )
            self.owner[device] = worker
            per_worker[worker] += 1
            self.attributes[worker] += wanted[device]
            dealt.setdefault(worker, []).append(device)
        return dealt


@dataclass(frozen=True)
class WorkerShard(Shard):
    """Worker ``worker`` of ``workers`` inside the adapter replica ``index/count``:
    it owns the channels of its devices (the set grows when the supervisor deals
    it new ones)."""

    worker: int = 0
    workers: int = 1
    devices: set[str] = field(default_factory=set, compare=False, hash=False)

    def owns(self, channel: Channel) -> bool:
        """Whether this worker owns ``channel`` (its device was dealt to it)."""
        return channel.proto == "tango" and channel.tango_device in self.devices

    def __str__(self) -> str:
        return f"{self.index}/{self.count} worker {self.worker}/{self.workers}"
