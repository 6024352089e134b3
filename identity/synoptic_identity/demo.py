"""The provider's part of ``synoptic demo``: Keycloak with the demo realm on
``http://127.0.0.1:<idp-port>`` (8180), its data under ``var/demo/keycloak``."""

from __future__ import annotations

import sys
from typing import Any

from synoptic_bus.demo import DemoContext, DemoProcess
from synoptic_identity.keycloak import READY
from synoptic_identity.realm import REALM, USERS


def issuer(ctx: DemoContext) -> str:
    """The demo realm's issuer URL (the gateway's ``--oidc-issuer``)."""
    return f"http://127.0.0.1:{ctx.idp_port}/realms/{REALM}"


def components(ctx: DemoContext) -> list[Any]:
    """Keycloak, started after the gateway (which waits for its keys): its JVM
    takes tens of seconds to start on two cores, and nothing else needs it."""
    argv = [sys.executable, "-m", "synoptic_identity.keycloak", "serve",
            "--port", str(ctx.idp_port), "--data", str(ctx.var_dir / "keycloak")]  # fmt: skip
    people = ", ".join(f"{name}/{name}" for name in USERS)
    return [
        DemoProcess(
            name="keycloak",
            argv=argv,
            ready=READY,
            order=90,
            ready_timeout=600.0,
            banner=f"{issuer(ctx)} (sign in as {people})",
        )
    ]
