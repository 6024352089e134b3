"""The alarm service's settings (command line, or built by tests and the demo)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from synoptic_schemas.alarmtree import DEFAULT_BUCKET
from synoptic_schemas.subjects import DEFAULT_PREFIX


@dataclass(frozen=True)
class AlarmSettings:
    """What one alarm service instance needs to know."""

    nats_url: str = "nats://127.0.0.1:4222"
    prefix: str = DEFAULT_PREFIX
    id: str = "alarms"
    #: the key-value bucket holding the tree
    tree_bucket: str = DEFAULT_BUCKET
    #: a tree file (YAML or JSON) written to the bucket when it holds no tree yet
    tree_file: Path | None = None
    #: the durable consumer of the transitions stream
    durable: str = "alarms"
    storage: Literal["memory", "file"] = "file"
    replicas: int = 1
    #: transitions handled per batch (one store barrier and one ack per batch)
    batch: int = 5000
    heartbeat_period: float = 1.0
    #: demand lease announced for the tree's listed channels, seconds (renewed
    #: every third of it; adapters cap it at their max_lease)
    lease: float = 60.0
    #: a listed channel nothing was heard of for this long is shown as no data
    no_data_after: float = 15.0
    #: adapter heartbeats missed before its channels are shown as no data (more
    #: than the gateway's 3: a busy adapter's late beat must not raise a storm
    #: of no-data alarms)
    misses: float = 5.0
    #: Prometheus metrics on http://metrics_addr:metrics_port/metrics (0: off)
    metrics_port: int = 0
    metrics_addr: str = "0.0.0.0"
