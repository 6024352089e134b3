"""Serve one gateway with uvicorn (uvloop, httptools, sans-I/O websockets).

Kept apart from :mod:`synoptic_gateway.cli` so that registering the ``synoptic
gateway`` subcommand imports neither FastAPI nor uvicorn (every ``synoptic``
command registers it)."""

from __future__ import annotations

import asyncio
import gc

import uvicorn

from synoptic_gateway.app import create_app
from synoptic_gateway.settings import Settings


class _Server(uvicorn.Server):
    """Sends close 4000 (going away) to every socket before uvicorn's shutdown."""

    async def shutdown(self, sockets: list | None = None) -> None:  # type: ignore[override]
        gateway = self.config.app.state.gateway  # type: ignore[union-attr]
        gateway.going_away()
        await asyncio.sleep(0.2)  # let the close frames leave
        await super().shutdown(sockets)


async def serve(settings: Settings) -> int:
    """Run a gateway until SIGINT/SIGTERM; print a readiness line when listening."""
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http="httptools",
        ws="websockets-sansio",
        ws_per_message_deflate=settings.ws_per_message_deflate,
        ws_max_size=settings.ws_max_size,
        lifespan="on",
        log_level="warning",
        access_log=False,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn has only a flag
        await asyncio.sleep(0.02)
    if server.started:
        # Everything imported and built so far lives as long as the process: out
        # of the collector's sight, a full collection no longer walks the ~10^5
        # objects of FastAPI, pydantic and friends (tens of ms on a screen open).
        gc.freeze()
        gw = app.state.gateway
        print(
            f"synoptic gateway {gw.id} ready on http://{settings.host}:{settings.port} "
            f"(NATS {settings.nats_url})",
            flush=True,
        )
    await task
    return 0 if server.started else 1
