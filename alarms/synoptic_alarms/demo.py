"""The alarm service's part of ``synoptic demo`` (entry point ``synoptic.demo``):
one instance, its tree seeded from ``demo-tree.yaml`` the first time."""

from __future__ import annotations

import sys
from pathlib import Path

from synoptic_bus.demo import DemoContext, DemoProcess

#: The demo's alarm tree (written to the bucket when it holds none yet).
DEMO_TREE = Path(__file__).with_name("demo-tree.yaml")


def components(ctx: DemoContext) -> list[DemoProcess]:
    """The alarm service, started after the adapters, before the gateway."""
    argv = [sys.executable, "-m", "synoptic_bus.cli", "alarms", "run",
            "--nats", ctx.nats_url, "--tree", str(DEMO_TREE)]  # fmt: skip
    return [
        DemoProcess(
            name="alarms",
            argv=argv,
            ready=r"alarm service \S+ ready",
            order=60,
            banner="alarm tree of the demo IOC and Tango device; alarms at /#/alarms",
        )
    ]
