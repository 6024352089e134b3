"""Connecting to NATS the same way everywhere: endless reconnects with backoff,
clear logs, and the URL from ``SYNOPTIC_NATS_URL`` unless given."""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import nats
from nats.aio.client import Client as NatsClient

log = logging.getLogger(__name__)

DEFAULT_URL = "nats://127.0.0.1:4222"

#: Seconds between the client's PINGs to its server (nats-py's default is 120 s).
PING_INTERVAL_S = 5.0
#: Unanswered PINGs after which the server counts as hung: the client drops the
#: connection and reconnects to another server of the cluster. With the defaults a
#: hung (e.g. SIGSTOPped) server is left after 10-15 s instead of 4-6 minutes.
MAX_OUTSTANDING_PINGS = 2


def nats_url(url: str | None = None) -> str:
    """The NATS URL(s): the argument, else ``$SYNOPTIC_NATS_URL``, else localhost.
    Several servers of a cluster are given comma-separated."""
    return url or os.environ.get("SYNOPTIC_NATS_URL", DEFAULT_URL)


def server_urls(url: str | None = None) -> list[str]:
    """The comma-separated URLs of :func:`nats_url` as a list."""
    return [u.strip() for u in nats_url(url).split(",") if u.strip()]


def redact(url: str) -> str:
    """A URL safe to log: user and password replaced by ``***``."""
    return ",".join(
        urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))
        if "@" in (parts := urlsplit(u.strip())).netloc
        else u.strip()
        for u in url.split(",")
    )


async def connect(
    url: str | None = None,
    *,
    name: str,
    on_reconnect: Callable[[], Awaitable[None]] | None = None,
    on_disconnect: Callable[[], Awaitable[None]] | None = None,
    connect_timeout: float = 5.0,
    retry_on_failed_connect: bool = True,
    max_reconnect_attempts: int = -1,
    ping_interval: float | None = None,
    max_outstanding_pings: int = MAX_OUTSTANDING_PINGS,
) -> NatsClient:
    """Connect to NATS with endless reconnects (1 s apart, jittered by nats-py);
    the first connection is retried with exponential backoff and jitter too unless
    ``retry_on_failed_connect`` is false.

    ``on_reconnect`` runs after every successful reconnect (republish state there);
    ``on_disconnect`` when the connection drops. A server that leaves
    ``max_outstanding_pings`` PINGs sent every ``ping_interval`` seconds
    (``$SYNOPTIC_NATS_PING_INTERVAL``, else :data:`PING_INTERVAL_S`) unanswered is
    hung: the connection is dropped and re-established elsewhere.
    """
    if ping_interval is None:
        ping_interval = float(
            os.environ.get("SYNOPTIC_NATS_PING_INTERVAL", PING_INTERVAL_S)
        )

    async def _disconnected() -> None:
        if nc.is_closed or nc.is_draining:
            return
        log.warning("NATS connection lost (%s); reconnecting", redact(nats_url(url)))
        if on_disconnect:
            await on_disconnect()

    async def _reconnected() -> None:
        log.info(
            "NATS reconnected to %s",
            nc.connected_url.netloc.rsplit("@", 1)[-1] if nc.connected_url else "?",
        )
        if on_reconnect:
            await on_reconnect()

    async def _error(exc: Exception) -> None:
        log.warning("NATS: %s", exc)

    delay = 0.2
    while True:
        nc = NatsClient()
        try:
            await nc.connect(
                servers=server_urls(url),
                name=name,
                connect_timeout=connect_timeout,
                reconnect_time_wait=1.0,
                # nats-py retries a failed first connection endlessly when
                # reconnects are endless: bound it when asked not to retry
                max_reconnect_attempts=max_reconnect_attempts
                if retry_on_failed_connect or max_reconnect_attempts >= 0
                else 1,
                allow_reconnect=True,
                disconnected_cb=_disconnected,
                reconnected_cb=_reconnected,
                error_cb=_error,
                pending_size=64 * 1024 * 1024,
                ping_interval=ping_interval,
                max_outstanding_pings=max_outstanding_pings,
            )
        except Exception as exc:  # NoServersError, OSError, TimeoutError
            if not retry_on_failed_connect:
                raise
            log.warning(
                "NATS not reachable at %s (%s); retrying", redact(nats_url(url)), exc
            )
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 5.0)
            continue
        nc.options["max_reconnect_attempts"] = max_reconnect_attempts
        return nc


__all__ = [
    "DEFAULT_URL",
    "MAX_OUTSTANDING_PINGS",
    "PING_INTERVAL_S",
    "NatsClient",
    "connect",
    "nats",
    "nats_url",
    "redact",
    "server_urls",
]
