"""Where a bucket watch says its current entries have all arrived."""

from __future__ import annotations

from collections.abc import AsyncIterator

from nats.js.kv import KeyValue

from synoptic_bus.kvwatch import Update, current_then_changes


def entry(key: str, revision: int, pending: int) -> KeyValue.Entry:
    return KeyValue.Entry("b", key, b"", revision, pending, None, None)


async def replay(updates: list[Update]) -> AsyncIterator[Update]:
    for update in updates:
        yield update


async def marked(updates: list[Update], holds: bool) -> list[str | None]:
    asked: list[bool] = []

    async def holds_messages() -> bool:
        asked.append(True)
        return holds

    out = [
        u if u is None else u.key
        async for u in current_then_changes(replay(updates), holds_messages)
    ]
    return [*out, f"asked {len(asked)}"]


async def test_the_marker_follows_the_entry_with_nothing_pending() -> None:
    updates = [entry("a", 1, 1), entry("b", 2, 0), None, entry("a", 3, 0)]
    assert await marked(updates, holds=True) == ["a", "b", None, "a", "asked 0"]


async def test_a_marker_before_the_entries_waits_for_them() -> None:
    # the consumer's info said 0 pending while the last entry was on its way
    updates = [None, entry("a", 1, 1), entry("b", 2, 0), entry("b", 3, 0)]
    assert await marked(updates, holds=True) == ["a", "b", None, "b", "asked 1"]


async def test_an_empty_bucket_is_current_at_once() -> None:
    updates = [None, entry("a", 1, 0)]
    assert await marked(updates, holds=False) == [None, "a", "asked 1"]
