"""The gateway application: ``create_app(settings)`` builds everything (no globals).

Routes: ``/ws`` (the protocol of ``docs/protocol.md``), ``/api/screens``,
``/api/screens/{name}``, ``/healthz``, ``/readyz``, ``/metrics``, and the built UI
(``ui/dist``) with a single-page-app fallback to ``index.html``.

HTTP caching: ``/api/screens/{name}`` carries an ETag with ``Cache-Control:
no-cache``, so a reload revalidates and gets a 304; the UI's files as
:mod:`synoptic_gateway.static` says. Every HTTP response carries the security
headers of :mod:`synoptic_gateway.headers`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from urllib.parse import urlsplit

from fastapi import FastAPI, WebSocket
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from synoptic_gateway.alarm_api import add_alarm_routes
from synoptic_gateway.alarm_feed import AlarmFeed
from synoptic_gateway.auth import Authenticator, AuthError, bearer_token
from synoptic_gateway.bus import Bus
from synoptic_gateway.credentials import nobody
from synoptic_gateway.directory import ChannelDirectory
from synoptic_gateway.headers import SecurityHeaders
from synoptic_gateway.history.build import history_runner
from synoptic_gateway.hub import Hub
from synoptic_gateway.metrics import Stats, make_registry, render
from synoptic_gateway.playback import PlaybackShare
from synoptic_gateway.prereq import check_archive, check_bus
from synoptic_gateway.refusals import refusal_record
from synoptic_gateway.screen_api import add_screen_routes
from synoptic_gateway.screens import ScreenCatalog, ScreenWatchers
from synoptic_gateway.session import Session
from synoptic_gateway.settings import Settings
from synoptic_gateway.site_api import add_site_routes
from synoptic_gateway.static import mount_ui
from synoptic_schemas import encode, frames
from synoptic_schemas.frames import CloseCode, ErrorCode

log = logging.getLogger(__name__)

#: How long ``GET /api/auth`` waits for the provider's discovery document when the
#: gateway has not read it yet (the page then reads it itself).
AUTH_CONFIG_WAIT_S = 3.0


class Gateway:
    """The parts of one gateway instance, reachable as ``app.state.gateway``."""

    def __init__(self, settings: Settings) -> None:
        if not settings.gateway_id:
            settings = replace(settings, gateway_id=f"gw-{secrets.token_hex(3)}")
        self.settings = settings
        self.id = settings.gateway_id
        self.stats = Stats()
        self.bus = Bus(
            settings.nats_url,
            settings.prefix,
            f"synoptic-gateway-{self.id}",
            on_down=self._bus_down,
            on_up=self._bus_up,
        )
        self.hub = Hub(self.bus, settings, self.stats, self.id)
        self.auth = Authenticator(settings)
        if self.auth.roles is not None:
            self.auth.roles.on_change = lambda _map: self._regrant()
        self.watchers = ScreenWatchers()
        self.screens = ScreenCatalog(self.bus, settings, self.watchers.notify)
        self.directory = ChannelDirectory(self.bus, settings.prefix)
        self.alarms = AlarmFeed(self.bus, settings.prefix)
        self.registry = make_registry(self.stats, self.hub.gauges)
        self.history = history_runner(settings)
        self.playbacks = PlaybackShare(settings.play_fps, settings.play_fps_total)
        self._history_started: asyncio.Task[None] | None = None
        self._checks: asyncio.Task[None] | None = None
        #: why the gateway cannot serve at all (then it ends), None while it can
        self.fatal: str | None = None
        #: called once :attr:`fatal` is set (the server ends the process)
        self.on_fatal: Callable[[], None] | None = None

    def _regrant(self) -> None:
        """The role file changed: every socket gets the grants it now gives."""
        for session in list(self.hub.sessions):
            session.regrant()

    async def refused(
        self, where: str, reason: str, token: str | None, peer: str = "",
        who: str = "",
    ) -> None:  # fmt: skip
        """Audit a refused token (``cs.audit.auth``; never the token itself)."""
        record = refusal_record(where, reason, token, peer, self.id, who)
        log.warning("refused %s from %s (%s): %s", where, peer or "?",
                    record["who"] or "unnamed", reason)  # fmt: skip
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.bus.publish(self.hub.subjects.audit("auth"), encode(record))

    async def _bus_down(self) -> None:
        await self.hub.bus_down()

    async def _bus_up(self) -> None:
        self.screens.restart()  # a fresh watch of the screens bucket
        self.directory.bus_up()
        await self.hub.bus_up()
        await self.alarms.bus_up()

    async def start(self) -> None:
        await self.auth.start()
        self.bus.start()
        self.hub.start()
        # its own NATS connection, made in the background like the live one
        self._history_started = asyncio.create_task(self.history.start())
        self.screens.start()  # watch the screens bucket once NATS is connected
        self.alarms.start()  # follow the alarm states once NATS is connected
        self.directory.start()  # load the channel directory once NATS is connected
        self._checks = asyncio.create_task(self._check_prerequisites())

    async def _check_prerequisites(self) -> None:
        """Once NATS is first connected: JetStream, the streams, the archive
        (:mod:`synoptic_gateway.prereq`)."""
        await self.bus.wait_connected(None)
        checks = [check_bus(self.bus.nc, self.settings.prefix, self._cannot_serve)]
        if self.settings.hist_archive_dsn:
            checks.append(check_archive(self.settings.hist_archive_dsn))
        await asyncio.gather(*checks)

    def _cannot_serve(self, why: str) -> None:
        self.fatal = why
        print(f"synoptic gateway {self.id} cannot serve: {why}", file=sys.stderr,
              flush=True)  # fmt: skip
        if self.on_fatal is not None:
            self.on_fatal()

    def going_away(self) -> None:
        """Ask every client to reconnect elsewhere (before a shutdown)."""
        for session in list(self.hub.sessions):
            session.close_going_away()

    async def stop(self) -> None:
        if self._checks is not None:
            self._checks.cancel()
        self.going_away()
        await self.hub.close()
        if self._history_started is not None:
            self._history_started.cancel()
        await self.history.close()
        await self.screens.close()
        await self.directory.close()
        await self.alarms.close()
        await self.bus.close()
        await self.auth.close()


class _TransportScope:
    """Puts the server's transport into WebSocket scopes (``synoptic.transport``)
    so that a stalled socket can be aborted when even its close frame cannot leave."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            protocol = getattr(send, "__self__", None)
            scope["synoptic.transport"] = getattr(protocol, "transport", None)
        await self.app(scope, receive, send)


def cap_send_buffer(transport: object, size: int) -> None:
    """Fix the kernel send buffer of an accepted socket at ``size`` bytes.

    Linux autotunes an accepted socket's send buffer up to ``tcp_wmem`` max (~4 MiB):
    a slow reader's socket then keeps accepting data that is seconds old by the time
    it is read, and the gateway never sees back-pressure. A fixed buffer makes the
    socket's send block early, so the session's mailbox fills and conflates."""
    get_extra_info = getattr(transport, "get_extra_info", None)
    if size <= 0 or get_extra_info is None:
        return
    sock = get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


def origin_of(url: str | None) -> tuple[str, ...]:
    """``scheme://host[:port]`` of ``url`` (none for None)."""
    if not url:
        return ()
    parts = urlsplit(url)
    return (f"{parts.scheme}://{parts.netloc}",)


class _SecuredApp(FastAPI):
    """FastAPI with the security headers around its whole middleware stack, so
    that Starlette's own answer to an unhandled error (a 500 from its outermost
    middleware) carries them too, not only what the routes answer."""

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(
            super().build_middleware_stack(), self.state.ui_dir,
            self.state.connect_origins,
        )  # fmt: skip


def create_app(settings: Settings) -> FastAPI:
    """A gateway application for ``settings``."""
    gateway = Gateway(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await gateway.start()
        try:
            yield
        finally:
            await gateway.stop()

    app = _SecuredApp(title="Synoptic gateway", lifespan=lifespan, docs_url="/api/docs",
                      redoc_url=None, openapi_url="/api/openapi.json")  # fmt: skip
    app.state.gateway = gateway
    app.state.ui_dir = settings.ui_dir
    # the browser signs in with the provider: its discovery, keys and tokens
    app.state.connect_origins = origin_of(settings.oidc_issuer)
    app.add_middleware(_TransportScope)

    @app.websocket("/ws")
    async def ws_endpoint(ws: WebSocket) -> None:
        if not gateway.auth.origin_allowed(ws.headers.get("origin")):
            await ws.close(code=1008)  # before accept: HTTP 403
            return
        json_mode = ws.query_params.get("format") == "json"
        token = bearer_token(ws.headers)
        try:
            if token is None and settings.auth_enabled:
                # a browser: its token comes in an ``auth`` frame, or never where
                # anonymous reading is allowed
                principal = gateway.auth.anonymous()
                if not settings.anonymous_allowed:
                    principal = nobody()
            else:
                principal = await gateway.auth.principal(token)
        except AuthError as exc:
            peer = ws.client.host if ws.client else ""
            await gateway.refused("connect", str(exc), token, peer)
            await ws.accept()
            error = frames.err(None, ErrorCode.UNAUTHORIZED, str(exc))
            if json_mode:
                await ws.send_text(frames.to_json(error))
            else:
                await ws.send_bytes(frames.pack(error))
            await ws.close(code=CloseCode.UNAUTHORIZED, reason="unauthorized")
            return
        cap_send_buffer(ws.scope.get("synoptic.transport"), settings.ws_send_buffer)
        await ws.accept()
        await Session(
            ws,
            gateway.hub,
            principal,
            json_mode=json_mode,
            history=gateway.history,
            watchers=gateway.watchers,
            alarms=gateway.alarms,
            auth=gateway.auth,
            refused=gateway.refused,
            playbacks=gateway.playbacks,
        ).run()

    @app.get("/api/auth")
    async def auth_config() -> Response:
        """How the web UI signs people in (no secrets: a public client)."""
        keyset = gateway.auth.keyset
        # a page loaded as the gateway starts waits for its first read (briefly)
        found = await keyset.discovered(AUTH_CONFIG_WAIT_S) if keyset else None
        return JSONResponse({
            "issuer": settings.oidc_issuer, "client_id": settings.oidc_client_id,
            "scope": settings.oidc_scope, "anonymous": settings.anonymous_allowed,
            "provider_ok": keyset.ready and keyset.error is None if keyset else None,
            # the provider's endpoints as its discovery document names them: the
            # browser goes to the provider without reading that document first
            "endpoints": None if found is None else {
                "authorization_endpoint": found.authorization_endpoint,
                "token_endpoint": found.token_endpoint,
                "end_session_endpoint": found.end_session_endpoint,
            },
        })  # fmt: skip

    @app.get("/healthz")
    async def healthz() -> dict[str, object]:
        return {"ok": True, "gw": gateway.id}

    @app.get("/readyz")
    async def readyz() -> Response:
        up = gateway.bus.up
        return JSONResponse({"ready": up, "bus": up, "gw": gateway.id},
                            status_code=200 if up else 503)  # fmt: skip

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(
            render(gateway.registry), media_type="text/plain; version=0.0.4"
        )

    add_screen_routes(app, gateway)
    add_site_routes(app, gateway)
    add_alarm_routes(app, gateway)
    mount_ui(app, settings.ui_dir)
    return app
