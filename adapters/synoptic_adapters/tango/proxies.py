"""Where every DeviceProxy of the adapter is created: on a few threads of their
own, one creation per key at a time.

A creation cannot be interrupted: on a host that never answers it holds its
thread until omniORB gives up (3 s, 9 s through a database). On these threads
it never holds a read's thread nor another device's creation (up to
:data:`PROXY_THREADS` hanging at once); a caller that stops waiting leaves it
running, and the next caller with the same key waits for the same creation.
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tango

#: Threads that create proxies; at most this many creations hang at once.
PROXY_THREADS = 8


def _new_proxy(url: str) -> Any:
    """A DeviceProxy in asyncio mode (runs in a thread: creation blocks)."""
    proxy = tango.DeviceProxy(url)
    proxy.set_green_mode(tango.GreenMode.Asyncio)
    return proxy


class ProxyMaker:
    """Creates DeviceProxies on :data:`PROXY_THREADS` threads, one creation per
    key in flight."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(PROXY_THREADS, thread_name_prefix="tango-proxy")
        #: creations in flight by key, outliving a caller that gave up
        self._creating: dict[str, asyncio.Future[Any]] = {}

    async def create(self, key: str, url: str) -> Any:
        """A new proxy (asyncio mode) of ``url``, or the one already being
        created under ``key``; cancelling the wait leaves the creation running."""
        creating = self._creating.get(key)
        if creating is None:
            creating = asyncio.get_running_loop().run_in_executor(
                self._pool, _new_proxy, url
            )
            self._creating[key] = creating
            creating.add_done_callback(lambda _: self._creating.pop(key, None))
        return await asyncio.shield(creating)

    def close(self) -> None:
        """Give the threads up (creations still hanging end on their own)."""
        with contextlib.suppress(Exception):
            self._pool.shutdown(wait=False, cancel_futures=True)
