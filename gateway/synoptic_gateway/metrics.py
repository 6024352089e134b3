"""Gateway metrics: plain integer counters on the hot path, exported to Prometheus
by a collector at scrape time (one registry per app, no globals)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

#: Upper bounds (seconds) of the latency histogram buckets.
LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 5.0)
#: Stamps per batch from which :meth:`Histogram.observe_ages` counts with numpy.
VECTOR_FROM = 64
#: Largest |age| (ns) counted with int64 arithmetic (~146 years).
_AGE_LIMIT = 2**62


@dataclass
class Histogram:
    """A cheap histogram: bucket counts and a sum, no locks (one event loop)."""

    bounds: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)
        # bounds in integer nanoseconds (observe_ages): same buckets as observe
        self._bounds_ns = [round(b * 1e9) for b in self.bounds]
        self._bounds_array = np.array(self._bounds_ns, dtype=np.int64)

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1

    def observe_ages(self, now_ns: int, stamps_ns: list[int]) -> None:
        """Observe ``now_ns - t`` (in seconds) for every ``t`` of ``stamps_ns``:
        one call per batch instead of one per update (with numpy from
        :data:`VECTOR_FROM` stamps: ~0.04 instead of ~0.18 µs per update)."""
        n = len(stamps_ns)
        if n < VECTOR_FROM or not self._observe_vector(now_ns, stamps_ns):
            counts, bounds_ns = self.counts, self._bounds_ns
            for t in stamps_ns:
                counts[bisect_left(bounds_ns, now_ns - t)] += 1
        self.total += (now_ns * n - sum(stamps_ns)) * 1e-9  # exact, as one by one
        self.n += n

    def _observe_vector(self, now_ns: int, stamps_ns: list[int]) -> bool:
        """Count the ages' buckets with numpy; False (nothing counted) when a stamp
        is so far from ``now_ns`` that an int64 age could overflow."""
        try:
            stamps = np.array(stamps_ns, dtype=np.int64)
        except OverflowError:
            return False
        if stamps.min() < now_ns - _AGE_LIMIT or stamps.max() > now_ns + _AGE_LIMIT:
            return False
        buckets = np.searchsorted(self._bounds_array, now_ns - stamps, side="left")
        counts = self.counts
        for index, count in enumerate(
            np.bincount(buckets, minlength=len(counts)).tolist()
        ):
            counts[index] += count
        return True

    def buckets(self) -> list[tuple[str, float]]:
        """Cumulative ``(le, count)`` pairs ending with ``+Inf``."""
        out, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            out.append(("+Inf" if bound == float("inf") else repr(bound), running))
        return out


@dataclass
class Stats:
    """Counters of one gateway instance (incremented by the hub and sessions)."""

    updates_in: int = 0
    updates_out: int = 0  # updates delivered, counted per socket
    frames_out: int = 0
    bytes_out: int = 0
    conflated: int = 0
    missed: int = 0
    slow_closes: int = 0
    bad_payloads: int = 0
    errors_sent: int = 0
    puts: int = 0
    snapshot_rereads: int = 0  # store reads repeated: the replica was behind
    settle_reads: int = 0  # later store reads of new subscriptions (cluster)
    settle_updates: int = 0  # values they found newer than the snapshot's
    latency: Histogram = field(default_factory=Histogram)
    snapshot_seconds: Histogram = field(default_factory=Histogram)


#: The gauges ``Hub.gauges`` gives, with their help text.
GAUGES = {
    "connections": "open WebSocket connections",
    "conflating_sockets": "sockets behind their mailbox, sent the latest values only",
    "groups": "channel sets (dashboards) fanned out, each encoded once for its sockets",
    "nats_subscriptions": "channels with NATS subscriptions (watched or lingering)",
    "channels": "channels the gateway holds (watched or lingering)",
    "lingering_channels": "channels nobody watches, kept subscribed for --linger",
    "bus_up": "1 while NATS is connected, else 0",
    "silent_adapters": "adapters whose newest epoch stopped beating",
    "stale_channels": "watched channels with no live source",
}


class _Collector(Collector):
    def __init__(self, stats: Stats, gauges: Callable[[], dict[str, float]]) -> None:
        self._stats = stats
        self._gauges = gauges

    def collect(self) -> Iterator[object]:
        s = self._stats
        prefix = "synoptic_gateway_"
        for name, value, doc in (
            ("updates_in", s.updates_in, "value updates received from NATS"),
            ("updates_out", s.updates_out, "value updates delivered, per socket"),
            ("frames_out", s.frames_out, "WebSocket frames sent"),
            ("bytes_out", s.bytes_out, "WebSocket payload bytes sent"),
            ("conflated", s.conflated, "channels delivered as latest value after a slow socket caught up"),
            ("missed", s.missed, "updates a slow socket never received one by one"),
            ("slow_closes", s.slow_closes, "sockets closed as slow consumers (4001)"),
            ("bad_payloads", s.bad_payloads, "undecodable NATS payloads dropped"),
            ("errors_sent", s.errors_sent, "err frames sent to clients"),
            ("puts", s.puts, "write requests handled"),
            ("snapshot_rereads", s.snapshot_rereads, "last-value reads repeated: the replica was behind the barrier"),
            ("settle_reads", s.settle_reads, "settle reads: later last-value reads of new subscriptions (NATS cluster)"),
            ("settle_updates", s.settle_updates, "values a settle read found newer than the snapshot (sent as updates)"),
        ):  # fmt: skip
            yield CounterMetricFamily(prefix + name, doc, value=value)
        for name, value in self._gauges().items():
            doc = GAUGES.get(name, name.replace("_", " "))
            yield GaugeMetricFamily(prefix + name, doc, value=value)
        for name, hist, doc in (
            ("latency_seconds", s.latency, "source timestamp to gateway send"),
            ("snapshot_seconds", s.snapshot_seconds, "last-value store read per group"),
        ):
            yield HistogramMetricFamily(
                prefix + name, doc, buckets=hist.buckets(), sum_value=hist.total
            )


def make_registry(
    stats: Stats, gauges: Callable[[], dict[str, float]]
) -> CollectorRegistry:
    """A registry exporting ``stats`` and the current ``gauges()``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(stats, gauges))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text exposition of a registry."""
    return generate_latest(registry)
