"""The history service on a thread and event loop of its own.

Reading history is CPU work in Python (nats-py parses every stored message, then
decoding, reduction and encoding): on the gateway's event loop a burst of history
requests delays live delivery by the length of each parse. On its own thread the
live loop waits at most an interpreter switch interval for the GIL instead. The
answer is encoded there too; the live loop only queues the bytes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from synoptic_gateway.history.service import HistoryService
from synoptic_gateway.principal import Principal

T = TypeVar("T")


class HistoryWorker:
    """Runs a :class:`HistoryService` on its own thread; same ``answer`` contract,
    cancellation included (a cancelled caller cancels the work)."""

    def __init__(self, service: HistoryService) -> None:
        self.service = service
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="synoptic-history", daemon=True
        )

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(coro, self._loop)
        )

    async def start(self) -> None:
        self._thread.start()
        await self._call(self.service.start())

    async def answer(
        self, frame: dict[str, Any], principal: Principal, *, json_mode: bool
    ) -> bytes | str:
        return await self._call(
            self.service.answer_encoded(frame, principal, json_mode)
        )

    async def close(self) -> None:
        if self._thread.is_alive():
            try:
                await asyncio.wait_for(self._call(self.service.close()), 5)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                await asyncio.to_thread(self._thread.join, 5)
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()
