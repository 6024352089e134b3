"""The alarm feed's pace: value-driven changes gathered for FLUSH_S into one frame,
an operator's acknowledge or shelve sent at once in a frame of its own, ahead of
what was gathered."""

from __future__ import annotations

import asyncio
from typing import Any

from synoptic_gateway.alarm_feed import FLUSH_S, AlarmFeed
from synoptic_schemas import SCHEMA_VERSION, encode


class Page:
    """A follower of the whole list: each frame, when it came (loop time)."""

    json = True

    def __init__(self) -> None:
        self.frames: list[tuple[float, str]] = []
        self.came = asyncio.Event()

    def push_control(self, frame: bytes | str) -> None:
        self.frames.append((asyncio.get_running_loop().time(), str(frame)))
        self.came.set()

    async def next(self) -> tuple[float, str]:
        async with asyncio.timeout(5):
            while not self.frames:
                self.came.clear()
                await self.came.wait()
        return self.frames.pop(0)


def state(ch: str, n: int, ev: str = "sev", **over: Any) -> bytes:
    body = {"ver": SCHEMA_VERSION, "ch": ch, "area": "Plant", "n": n, "ev": ev, "sev": 2, "st": "HIHI",
            "c": True, "lat": 2, "ackd": False, "since": 1, "t": 1, "at": 1, **over}  # fmt: skip
    return encode(body)


def due_in(feed: AlarmFeed, since: float) -> float:
    """Seconds from ``since`` to the flush the feed has scheduled."""
    assert feed._flush is not None, "no flush scheduled"
    return feed._flush.when() - since


async def test_changes_are_gathered_and_acknowledgements_sent_first() -> None:
    feed = AlarmFeed(bus=None, prefix="cs")  # type: ignore[arg-type]
    page = Page()
    feed.follow(page, full=True)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    feed._take(state("ca://A", 1))
    feed._take(state("ca://B", 1))
    assert FLUSH_S <= due_in(feed, t0) < FLUSH_S + 0.01  # gathered ...
    _, frame = await page.next()
    assert '"ca://A"' in frame and '"ca://B"' in frame  # ... into one frame
    t0 = loop.time()
    storm = [state(f"ca://S{i}", 1) for i in range(2000)]
    for data in storm[:1000]:  # value-driven changes, then an operator's
        feed._take(data)
    feed._take(state("ca://S5", 2, "ack", ackd=True, ack={"by": "alice", "t": 2}))
    for data in storm[1000:]:  # read with it: they do not put it off
        feed._take(data)
    assert due_in(feed, t0) >= FLUSH_S  # the storm waits for the window ...
    _, frame = await page.next()  # ... the ack does not: it comes first, alone
    assert '"alice"' in frame and '"ca://S5"' in frame
    assert '"ca://S4"' not in frame, "the ack waits in a frame with the storm"
    _, frame = await page.next()  # the storm, gathered, after it ...
    assert all(f'"ca://S{i}"' in frame for i in (0, 4, 999, 1000, 1999))
    assert '"ca://S5"' not in frame, "the ack's channel went back to an older state"
    # ... and a change of the acknowledged channel after the ack comes after it
    feed._take(state("ca://A", 3, "ack", ackd=True, ack={"by": "bob", "t": 3}))
    feed._take(state("ca://A", 4))
    _, frame = await page.next()
    assert '"bob"' in frame
    _, frame = await page.next()
    assert '"ca://A"' in frame and '"bob"' not in frame and '"n":4' in frame
    await asyncio.sleep(FLUSH_S * 2)
    assert page.frames == []  # nothing left behind, nothing sent twice
    await feed.close()
