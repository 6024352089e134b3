"""Where every DeviceProxy of the adapter is created: on a few threads of their
own, one creation per key at a time.

A creation cannot be interrupted: on a host that never answers it holds its
thread until omniORB gives up (3 s, 9 s through a database). On these threads it
never holds a read's thread, a subscription or another device's creation (up to
:data:`PROXY_THREADS` hanging at once). A caller waits a bounded time and may
give up; the creation goes on, and its proxy waits, unclaimed, for the next
caller with the same key (a retry), which takes it at once. So no proxy is ever
dropped by a caller that gave up.

Proxies that held subscriptions are never destroyed while the process runs
(:func:`keep`): a DeviceProxy's destructor waits for cppTango's event locks,
which its keep-alive thread holds while it calls subscription callbacks (a
destructor waited 2.1 s behind a 2 s callback here), and unsubscribes from a
device server that may be gone. The adapter exits with ``os._exit``: nothing of
cppTango is torn down (decision 0010).
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tango

#: Threads that create proxies; at most this many creations hang at once.
PROXY_THREADS = 8

#: Proxies kept until the process ends (see :func:`keep`).
_KEPT: list[Any] = []


def keep(*proxies: Any) -> None:
    """Never destroy ``proxies`` while the process runs (not even when their
    owner, a device link or a whole source, is gone)."""
    _KEPT.extend(p for p in proxies if p is not None)


def _new_proxy(url: str, green_mode: tango.GreenMode) -> Any:
    """A DeviceProxy in ``green_mode`` (runs in a thread: creation blocks). The
    mode is given to the constructor: pytango's ``set_green_mode`` sets an
    attribute of the proxy, and every attribute set asks the device for its
    command and attribute lists first (two calls to the device, which hang with
    the device)."""
    return tango.DeviceProxy(url, green_mode=green_mode)


class ProxyMaker:
    """Creates DeviceProxies on :data:`PROXY_THREADS` threads, one creation per
    key in flight; a proxy nobody waited for any more is kept for the next
    caller of its key."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(PROXY_THREADS, thread_name_prefix="tango-proxy")
        #: creations in flight by key
        self._creating: dict[str, asyncio.Future[Any]] = {}

    async def proxy(
        self,
        key: str,
        url: str,
        wait: float | None = None,
        green_mode: tango.GreenMode = tango.GreenMode.Asyncio,
    ) -> Any:
        """A proxy of ``url`` in ``green_mode`` for ``key``: the one made for an
        earlier caller that gave up, the creation in flight, or a new one.
        Raises :class:`TimeoutError` after ``wait`` seconds (the creation goes
        on), or what the creation raised."""
        future = self._creating.get(key)
        if future is None:
            future = asyncio.get_running_loop().run_in_executor(
                self._pool, _new_proxy, url, green_mode
            )
            self._creating[key] = future
            future.add_done_callback(self._settled)
        done, _ = await asyncio.wait({future}, timeout=wait)
        if not done:
            raise TimeoutError(f"no answer within {wait:g} s while connecting")
        if self._creating.get(key) is future:
            del self._creating[key]  # claimed (or failed: the next caller retries)
        return future.result()

    @staticmethod
    def _settled(future: asyncio.Future[Any]) -> None:
        if not future.cancelled():
            future.exception()  # a failure nobody waits for is not "never retrieved"

    def close(self) -> None:
        """Give the threads up (creations still hanging end on their own); the
        proxies made for callers that gave up are kept."""
        for future in self._creating.values():
            if future.done() and not future.cancelled() and not future.exception():
                keep(future.result())
            else:
                future.add_done_callback(_keep_result)
        self._creating.clear()
        with contextlib.suppress(Exception):
            self._pool.shutdown(wait=False, cancel_futures=True)


def _keep_result(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is None:
        keep(future.result())
