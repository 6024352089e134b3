"""Prometheus metrics of the alarm service (``--metrics-port``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

_SERVICE = {
    "transitions": "severity transitions read from the transitions stream",
    "applied": "transitions of tree channels applied",
    "replayed": "transitions skipped: applied before a restart",
    "malformed": "transitions that could not be read",
    "requests": "acknowledge/shelve requests answered",
    "refused": "requests refused whole (malformed)",
    "no_data": "alarms shown as no data (adapter silent, nothing heard)",
}
_PUBLISHER = {
    "published": "alarm states published",
    "stored": "alarm states confirmed stored",
    "retried": "alarm states published again after a failed store barrier",
}


class AlarmCollector:
    """Counters and gauges of one :class:`~synoptic_alarms.service.AlarmService`."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        service = self.service
        for table, stats in (
            (_SERVICE, service.stats),
            (_PUBLISHER, service.publisher.stats),
        ):
            for name, doc in table.items():
                family = CounterMetricFamily(f"synoptic_alarms_{name}", doc)
                family.add_metric([], getattr(stats, name))
                yield family
        for name, doc, value in (
            ("alarms", "channels of the tree the service knows", len(service.alarms)),
            ("active", "active alarms (latched severity above 0)", service.active_count()),
            ("pending", "states not confirmed stored yet", service.publisher.pending),
            ("tree_revision", "the alarm tree revision in use", service.index.revision),
        ):  # fmt: skip
            gauge = GaugeMetricFamily(f"synoptic_alarms_{name}", doc)
            gauge.add_metric([], value)
            yield gauge


def serve_metrics(service: Any, port: int, addr: str = "0.0.0.0") -> None:
    """Serve ``/metrics`` on ``addr:port`` (a daemon thread)."""
    registry = CollectorRegistry()
    registry.register(AlarmCollector(service))  # type: ignore[arg-type]
    start_http_server(port, addr, registry=registry)
