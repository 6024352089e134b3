"""Prometheus metrics of one adapter process, read from its counters at scrape time
(nothing is added to the hot path). Served on ``/metrics`` when the configuration
sets ``metrics.port``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from synoptic_adapters.demand import Demand
from synoptic_adapters.publisher import Publisher
from synoptic_adapters.source import Source


class Observed(Protocol):
    """What the metrics read of a running adapter (``runner.Adapter`` is one)."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> Source: ...
    @property
    def publisher(self) -> Publisher | None: ...
    @property
    def demand(self) -> Demand | None: ...
    @property
    def put_results(self) -> Mapping[str, int]: ...


_COUNTERS = {
    "received": "source events (values and disconnects) handed to the publisher",
    "published": "value messages published to NATS",
    "meta_published": "metadata messages published to NATS",
    "sev_published": "severity transitions (cs.sev) published to NATS",
    "sev_dropped": "severity transitions not queued (queue full; the latest followed)",
    "dropped": "value events dropped because the publisher queue was full",
    "offline_dropped": "value events not sent while NATS was unreachable",
    "republished": "messages published again after NATS reconnects",
    "errors": "publishes that failed",
}


#: Per-device figures a source may give (``device_stats()``: device → figures),
#: as metric name → (kind, help). The Tango source gives them (decision 0016).
_DEVICE_FIGURES = {
    "busy_fraction": ("gauge", "share of the last minute the device spent on this adapter's reads"),
    "busy_seconds": ("counter", "seconds the device spent on this adapter's reads"),
    "in_backoff": ("gauge", "attributes whose reads are backed off (slow or timing out)"),
    "events_received": ("counter", "value events received from the device"),
    "events_expected_per_s": ("gauge", "events per second the device's polling would send if every value changed at each poll"),
    "event_errors": ("counter", "error events received from the device"),
    "busy_pings": ("counter", "pings that timed out while a read of this adapter held the device (busy, not reconnected)"),
    "connects": ("counter", "connections to the device (first one and reconnections)"),
}  # fmt: skip


def device_families(
    labels: list[str], values: list[str], stats: dict[str, dict[str, float]]
) -> Iterator[Metric]:
    """The families of :data:`_DEVICE_FIGURES`, one sample per device."""
    for name, (kind, doc) in _DEVICE_FIGURES.items():
        family_type = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
        family = family_type(
            f"synoptic_adapter_device_{name}", doc, labels=[*labels, "device"]
        )
        for device, figures in sorted(stats.items()):
            if name in figures:
                family.add_metric([*values, device], figures[name])
        yield family


class AdapterCollector:
    """Exposes an adapter's publisher, source and put counters."""

    def __init__(self, adapter: Observed) -> None:
        self.adapter = adapter

    def collect(self) -> Iterator[Metric]:
        adapter, labels = self.adapter, ["adapter", "proto"]
        values = [adapter.id, adapter.source.proto]
        publisher = adapter.publisher
        if publisher is None:
            return
        for name, doc in _COUNTERS.items():
            family = CounterMetricFamily(f"synoptic_adapter_{name}", doc, labels=labels)
            family.add_metric(values, getattr(publisher.stats, name))
            yield family
        merged = getattr(adapter.source, "merged", None)
        if merged is not None:
            family = CounterMetricFamily(
                "synoptic_adapter_source_merged",
                "updates replaced by a newer one before delivery (event loop behind)",
                labels=labels,
            )
            family.add_metric(values, merged)
            yield family
        device_stats = getattr(adapter.source, "device_stats", None)
        if device_stats is not None:
            yield from device_families(labels, values, device_stats())
        puts = CounterMetricFamily(
            "synoptic_adapter_puts", "put requests answered, by result",
            labels=[*labels, "result"],
        )  # fmt: skip
        for result, count in sorted(adapter.put_results.items()):
            puts.add_metric([*values, result], count)
        yield puts
        for name, doc, value in (
            ("channels", "channels that reported anything", publisher.channel_count),
            ("connected", "channels whose latest state is connected", publisher.connected_count),
            ("monitored", "configured plus demanded channels", len(adapter.demand.monitored) if adapter.demand else 0),
            ("queued", "source events waiting to be published", publisher.queued),
        ):  # fmt: skip
            gauge = GaugeMetricFamily(f"synoptic_adapter_{name}", doc, labels=labels)
            gauge.add_metric(values, value)
            yield gauge


def serve_metrics(adapter: Observed, port: int, addr: str = "0.0.0.0") -> None:
    """Serve ``/metrics`` for ``adapter`` on ``addr:port`` (a daemon thread)."""
    registry = CollectorRegistry()
    registry.register(AdapterCollector(adapter))  # type: ignore[arg-type]
    start_http_server(port, addr, registry=registry)
