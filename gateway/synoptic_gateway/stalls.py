"""Closing sockets whose send has been blocked too long (close code 4001), so
that one stuck client never holds memory or the hub's attention."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from synoptic_gateway.member import Member


async def close_stalled(members: Collection[Member], stall_timeout: float) -> None:
    """Forever: close every member whose send has been in progress for more than
    ``stall_timeout`` seconds (checked about four times per timeout, at most
    once per 50 ms, at least once per second)."""
    loop = asyncio.get_running_loop()
    period = max(0.05, min(1.0, stall_timeout / 4))
    while True:
        await asyncio.sleep(period)
        now = loop.time()
        for member in list(members):
            since = member.sending_since
            if since is not None and now - since > stall_timeout:
                member.close_slow()
