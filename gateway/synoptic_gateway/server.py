"""Serve one gateway with uvicorn (uvloop, httptools, sans-I/O websockets).

Kept apart from :mod:`synoptic_gateway.cli` so that registering the ``synoptic
gateway`` subcommand imports neither FastAPI nor uvicorn (every ``synoptic``
command registers it)."""

from __future__ import annotations

import asyncio
import errno
import gc
import socket
import sys
from typing import Any

import uvicorn

from synoptic_gateway.app import create_app
from synoptic_gateway.roles import RoleMapError
from synoptic_gateway.settings import Settings


class _Server(uvicorn.Server):
    """Sends close 4000 (going away) to every socket before uvicorn's shutdown."""

    async def shutdown(self, sockets: list | None = None) -> None:  # type: ignore[override]
        gateway = self.config.app.state.gateway  # type: ignore[union-attr]
        gateway.going_away()
        await asyncio.sleep(0.2)  # let the close frames leave
        await super().shutdown(sockets)


class ListenError(OSError):
    """The gateway's address cannot be listened on (one line says why)."""


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to ``host:port`` (every address it resolves to, as asyncio
    binds them), before anything else starts: a port in use ends the gateway at
    once, never half started."""
    try:
        infos = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ListenError(f"cannot resolve --host {host}: {exc.strerror}") from None
    sockets: list[socket.socket] = []
    for family, kind, proto, _, address in dict.fromkeys(infos):
        sock = socket.socket(family, kind, proto)
        sockets.append(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            for opened in sockets:
                opened.close()
            if exc.errno == errno.EADDRINUSE:
                raise ListenError(
                    f"port {port} on {host} is already in use: stop the program "
                    f"listening there or pass --port with a free one"
                ) from None
            raise ListenError(
                f"cannot listen on {host}:{port}: {exc.strerror}"
            ) from None
    return sockets


async def serve(settings: Settings) -> int:
    """Run a gateway until SIGINT/SIGTERM; print a readiness line when listening.
    Returns 1 at once (one line on stderr) when its address cannot be bound."""
    try:
        sockets = listen(settings.host, settings.port)
    except ListenError as exc:
        print(f"synoptic gateway: {exc}", file=sys.stderr, flush=True)
        return 1
    try:
        app = create_app(settings)
    except RoleMapError as exc:
        print(
            f"synoptic gateway: role file refused: {exc}", file=sys.stderr, flush=True
        )
        return 1
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
    gateway = app.state.gateway
    gateway.on_fatal = lambda: setattr(server, "should_exit", True)
    task = asyncio.create_task(server.serve(sockets=sockets))
    while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn has only a flag
        await asyncio.sleep(0.02)
    freezer: asyncio.Task[None] | None = None
    if server.started:
        # Everything imported and built so far lives as long as the process: out
        # of the collector's sight, a full collection no longer walks the ~10^5
        # objects of FastAPI, pydantic and friends (tens of ms on a screen open).
        gc.freeze()
        freezer = asyncio.create_task(_freeze_when_alarms_loaded(gateway))
        print(
            f"synoptic gateway {gateway.id} ready on http://{settings.host}:{settings.port} "
            f"(NATS {settings.nats_url})",
            flush=True,
        )
    try:
        await task
    except SystemExit as exc:  # uvicorn's own start failure (lifespan)
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        if freezer is not None:
            freezer.cancel()
    if gateway.fatal is not None:
        return 2
    return 0 if server.started else 1


async def _freeze_when_alarms_loaded(gateway: Any) -> None:
    """Once the alarm states are read (tens of thousands listed at 100 000 alarms),
    out of the collector's sight too: a full collection no longer delays the
    sockets' frames (an acknowledgement reaching every alarm page) by tens of ms."""
    await gateway.alarms.loaded.wait()
    gc.freeze()
