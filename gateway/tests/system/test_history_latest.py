"""Which subjects stored a message in a span (a playback's metadata and large
values), answered from when each one's newest message was stored, as last asked:
the same answers as asking each time, with no request for a span before then."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from nats.js.api import StorageType, StreamConfig

from synoptic_bus.connect import NatsClient
from synoptic_bus.moment import last_at
from synoptic_gateway.history.latest import LatestStored

STREAM = "LATEST_TEST"


@pytest.fixture
async def stream(nc: NatsClient) -> AsyncIterator[str]:
    """An empty stream of ``lt.>`` answering Direct Gets, as the history's."""
    js = nc.jetstream()
    config = StreamConfig(
        STREAM, subjects=["lt.>"], storage=StorageType.MEMORY, allow_direct=True
    )
    await js.add_stream(config)
    try:
        yield STREAM
    finally:
        await js.delete_stream(STREAM)


async def _stored(nc: NatsClient, subject: str) -> int:
    """Publish to ``subject``; its store time (ns)."""
    ack = await nc.jetstream().publish(subject, b"x", stream=STREAM)
    found = await last_at(nc, STREAM, [subject], time.time_ns() + 10**12)
    assert found[subject].seq == ack.seq
    return found[subject].stored_ns


async def test_spans_before_the_last_ask_need_no_request(
    nc: NatsClient, stream: str
) -> None:
    a, b, never = "lt.a", "lt.b", "lt.never"
    a1 = await _stored(nc, a)
    b1 = await _stored(nc, b)
    latest = LatestStored(lag_ns=0)  # (one host: no clocks' difference)
    both = [a, b, never]

    async def stored_in(t0: int, t1: int) -> list[str]:
        return sorted(await latest.stored_in(nc, STREAM, both, t0, t1, timeout=5))

    asked_at = time.time_ns()
    assert await stored_in(a1 - 1, asked_at) == [a, b]
    assert latest.asked == 1
    # before then: known without asking
    assert await stored_in(b1, asked_at) == []
    assert await stored_in(a1, asked_at) == [b]
    assert latest.asked == 1
    # a span ending before a newest message: that subject is asked up to its end
    assert await stored_in(a1 - 1, a1) == [a]
    assert latest.asked == 2
    # after the last ask: asked again, and a new message found
    a2 = await _stored(nc, a)
    assert await stored_in(b1, time.time_ns()) == [a]
    assert latest.asked == 3
    assert await stored_in(a1, a2 - 1) == [b]  # b's newest known; a's asked
    assert latest.asked == 4


async def test_subjects_asked_least_recently_are_forgotten(
    nc: NatsClient, stream: str
) -> None:
    t = await _stored(nc, "lt.a")
    latest = LatestStored(max_subjects=2, lag_ns=0)
    now = time.time_ns()
    subjects = ["lt.a", "lt.b", "lt.c"]
    assert await latest.stored_in(nc, STREAM, subjects, t - 1, now, timeout=5) == [
        "lt.a"
    ]
    # two kept: the one asked first is asked again
    assert await latest.stored_in(nc, STREAM, ["lt.c"], t, now, timeout=5) == []
    assert latest.asked == 1
    assert await latest.stored_in(nc, STREAM, ["lt.a"], t - 1, now, timeout=5) == [
        "lt.a"
    ]
    assert latest.asked == 2
