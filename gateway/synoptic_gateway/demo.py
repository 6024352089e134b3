"""The gateway's part of ``synoptic demo``: one gateway on http://localhost:8000,
signing people in with the demo's provider (``synoptic_identity``: Keycloak on
``--idp-port``, realm ``synoptic``) and granting by the demo's role file."""

from __future__ import annotations

import sys
from typing import Any

from synoptic_bus.demo import DemoContext, DemoProcess
from synoptic_gateway.settings import source_checkout

#: the demo provider's realm (synoptic_identity.realm.REALM)
DEMO_REALM = "synoptic"


def components(ctx: DemoContext) -> list[Any]:
    """One gateway serving the UI and screens, started after adapters."""
    port = ctx.http_port
    argv = [sys.executable, "-m", "synoptic_bus.cli", "gateway", "--host", "0.0.0.0",
            "--port", str(port), "--nats", ctx.nats_url, "--allow-anonymous",
            "--oidc-issuer", f"http://127.0.0.1:{ctx.idp_port}/realms/{DEMO_REALM}"]  # fmt: skip
    checkout = source_checkout()
    if checkout is not None:
        argv += ["--roles", str(checkout / "docker" / "config" / "roles.toml")]
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
