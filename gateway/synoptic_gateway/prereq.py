"""What a gateway checks once NATS is first connected, and what it says.

- JetStream off: nothing can be served (no snapshot, no screen, no history),
  so the gateway ends (exit 2) with one line saying how to turn it on.
- The last-value stream missing: an ERROR line saying to run ``synoptic bus
  init`` (an adapter creates it too), repeated every 30 s until the stream
  exists; the gateway serves live values meanwhile, without snapshots.
- The history stream missing: one WARNING (recent history answers nothing).
- The HDB++ archive (``--archive-dsn``) unreachable: one WARNING with the reason;
  history beyond the bus answers "unavailable" until it is reachable.

Only requests the gateway's NATS user may make are used (``STREAM.INFO`` of its
streams), so a production account sees no permission error from the checks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from synoptic_bus.connect import NatsClient
from synoptic_bus.prereq import (
    JetStreamOffError,
    missing_stream_error,
    stream_exists,
)
from synoptic_bus.store import StoreConfig, history_stream_name

log = logging.getLogger(__name__)

#: Seconds between two checks (and ERROR lines: one per ``SAY_EVERY``) while the
#: last-value stream is missing.
RECHECK = 5.0
SAY_EVERY = 30.0


async def check_bus(
    nc: NatsClient, prefix: str, on_fatal: Callable[[str], None]
) -> None:
    """The checks above on a connected client; ``on_fatal(line)`` when the
    gateway cannot serve at all."""
    store = StoreConfig(prefix)
    said = float("-inf")
    loop = asyncio.get_running_loop()
    while True:
        try:
            found = await stream_exists(nc, store.stream)
        except JetStreamOffError as exc:
            on_fatal(str(exc))
            return
        except Exception as exc:  # JetStream busy, NATS away: try again later
            log.debug("checking %s: %s", store.stream, exc)
            found = None
        if found:
            if said > float("-inf"):
                log.info("last-value stream %s found", store.stream)
            break
        if found is False and loop.time() - said >= SAY_EVERY:
            said = loop.time()
            log.error(
                "%s; snapshots wait for it",
                missing_stream_error(store.stream, "last-value"),
            )
        await asyncio.sleep(RECHECK)
    history = history_stream_name(prefix)
    try:
        if not await stream_exists(nc, history):
            log.warning(
                "%s; recent history answers nothing until then",
                missing_stream_error(history, "history"),
            )
    except Exception as exc:
        log.debug("checking %s: %s", history, exc)


async def check_archive(dsn: str, timeout: float = 5.0) -> None:
    """Log one WARNING if the HDB++ archive at ``dsn`` cannot be reached."""
    import psycopg

    try:
        conn = await psycopg.AsyncConnection.connect(
            dsn, connect_timeout=max(int(timeout), 1)
        )
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())[:300]
        log.warning(
            "the HDB++ archive (--archive-dsn %s) is unreachable: %s; history "
            "beyond the bus answers 'unavailable' until it is reachable (check "
            "the connection string and that PostgreSQL runs)",
            _without_password(dsn), reason,
        )  # fmt: skip
        return
    await conn.close()


def _without_password(dsn: str) -> str:
    """``dsn`` with any ``password=…`` replaced (libpq key/value or URL form)."""
    import re

    dsn = re.sub(r"password=\S+", "password=***", dsn)
    return re.sub(r"(://[^:/@]+):[^@]+@", r"\1:***@", dsn)
