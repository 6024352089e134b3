"""Watching every key of a JetStream key-value bucket: its current entries, then
``None`` once they have all arrived, then each change.

nats.py's ``watchall`` sends that ``None`` before any entry when its consumer's
info says nothing is pending and no message has arrived yet. The server may have
taken the bucket's last entry for delivery already (the info then says 0 pending)
with the message still on its way: the marker then comes first, and a listing that
stops at it misses every key. Here the marker counts only after an entry with
nothing pending behind it, or when the bucket's stream holds no message at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable

from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

Update = KeyValue.Entry | None


async def current_then_changes(
    updates: AsyncIterable[Update], holds_messages: Callable[[], Awaitable[bool]]
) -> AsyncIterator[Update]:
    """``updates`` (a ``watchall``'s) with its ``None`` marker moved to where the
    current entries have truly all arrived; ``holds_messages`` says whether the
    bucket's stream holds any message (asked only when the marker comes first)."""
    current = False
    async for update in updates:
        if update is not None:
            yield update
            if not current and update.delta == 0:
                current = True
                yield None
        elif not current and not await holds_messages():
            current = True
            yield None


class BucketWatch:
    """Every key of a bucket: its current entries, ``None``, then each change."""

    def __init__(
        self, watcher: KeyValue.KeyWatcher, holds: Callable[[], Awaitable[bool]]
    ):
        self._watcher = watcher
        self._holds = holds

    @classmethod
    async def start(
        cls, kv: KeyValue, js: JetStreamContext, stream: str
    ) -> BucketWatch:
        """Watch every key of ``kv``, whose stream is ``stream``."""

        async def holds() -> bool:
            return (await js.stream_info(stream)).state.messages > 0

        return cls(await kv.watchall(), holds)

    def __aiter__(self) -> AsyncIterator[Update]:
        return current_then_changes(self._watcher, self._holds)

    async def stop(self) -> None:
        """End the watch (its consumer goes with it)."""
        await self._watcher.stop()
