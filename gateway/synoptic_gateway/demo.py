"""The gateway's part of ``synoptic demo``: one gateway on http://localhost:8000."""

from __future__ import annotations

import sys
from typing import Any

from synoptic_bus.demo import DemoContext, DemoProcess


def components(ctx: DemoContext) -> list[Any]:
    """One gateway serving the UI and screens, started after adapters."""
    port = ctx.http_port
    argv = [sys.executable, "-m", "synoptic_bus.cli", "gateway", "--host", "0.0.0.0",
            "--port", str(port), "--nats", ctx.nats_url,
            "--anonymous-screens", "*"]  # fmt: skip
    if ctx.archive_dsn:
        argv += ["--archive-dsn", ctx.archive_dsn]
    return [
        DemoProcess(
            name="gateway",
            argv=argv,
            ready=r"synoptic gateway \S+ ready on",
            order=80,
            banner=f"http://localhost:{port} (UI, /api/screens, /metrics; WebSocket /ws)",
        )
    ]
