"""The alarm benchmark's socket pages, in a process of their own (their frames are
parsed there, not in the process that times the bus): ``count`` WebSocket clients
that follow the whole alarm list as the alarm page does (msgpack). One JSON line out per
command read on stdin:

- (start)            → ``{"ready": count}`` once every page holds the list
- ``storm FIRST N``  → ``{"listed": [wall s per page], "reconnects"}`` once every
  page lists the channels FIRST… (benchmark numbering) MAJOR
- ``ack CH``         → ``{"acked": [wall s per page], "reconnects"}`` once every
  page has CH's acknowledgement (when each arrived)

A page the gateway closes as too slow a reader connects again, as the UI does;
``reconnects`` counts them (all pages, so far).
- ``quit``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import sys
import time
from typing import Any

import uvloop
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from synoptic_benchmarks.alarms.source import channel_uri
from synoptic_schemas import frames


class PageClient:
    """One alarm page's socket: which alarms it lists at which latched severity,
    when each storm alarm was listed, when each acknowledgement arrived (wall s)."""

    def __init__(self) -> None:
        self.lat: dict[str, int] = {}
        self.storm: set[str] = set()  # the storm's channels not listed MAJOR yet
        self.storm_done_at: float | None = None
        self.acked: dict[str, float] = {}
        self.ready = asyncio.Event()
        self.came = asyncio.Event()  # set on every frame
        self.reconnects = 0

    async def run(self, url: str) -> None:
        """Follow the list; when the gateway closes the socket (too slow a reader),
        connect again as the UI does (the whole list comes again)."""
        while True:
            with contextlib.suppress(OSError, ConnectionClosed):
                await self._follow(url)
            self.reconnects += 1
            await asyncio.sleep(0.25)

    async def _follow(self, url: str) -> None:
        # no handshake or keepalive deadline: the first frame holds every listed alarm
        # (tens of thousands once the crossings latch), sent to every page at once
        async with ws_connect(
            url, max_size=None, open_timeout=None, ping_interval=None
        ) as ws:
            await ws.send(frames.pack({"op": "alarms", "id": 1, "full": True}))
            async for raw in ws:
                frame = frames.unpack(raw)
                if frame.get("op") != "alarms":
                    continue
                now = time.time()
                storming = bool(self.storm)
                for state in frame.get("all", []) + frame.get("up", []):
                    ch = state["ch"]
                    self.lat[ch] = state["lat"]
                    if state["ev"] == "ack" and ch not in self.acked:
                        self.acked[ch] = now
                    if storming and state["lat"] == 2:
                        self.storm.discard(ch)
                if "all" in frame:
                    self.ready.set()
                if storming and not self.storm and self.storm_done_at is None:
                    self.storm_done_at = now
                self.came.set()

    async def until(self, done: Any) -> None:
        """Until ``done()`` holds (checked on each frame)."""
        while not done():
            self.came.clear()
            await self.came.wait()


def out(body: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


async def main(url: str, count: int) -> None:
    pages = [PageClient() for _ in range(count)]
    tasks = [asyncio.create_task(page.run(url)) for page in pages]
    async with asyncio.timeout(300):
        for page in pages:
            await page.ready.wait()
    # the lists held (tens of thousands of alarms per page): out of the collector's
    # sight, so that a full collection does not stamp an acknowledgement late
    gc.collect()
    gc.freeze()
    out({"ready": count})
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    while line := (await reader.readline()).decode().split():
        if line[0] == "storm":
            first, n = int(line[1]), int(line[2])
            wanted = {channel_uri(i) for i in range(first, first + n)}
            for page in pages:
                page.storm_done_at = None
                page.storm = {ch for ch in wanted if page.lat.get(ch) != 2}
                if not page.storm:
                    page.storm_done_at = time.time()
            for page in pages:
                await page.until(lambda p=page: p.storm_done_at is not None)
            out({"listed": [page.storm_done_at for page in pages],
                 "reconnects": sum(page.reconnects for page in pages)})  # fmt: skip
        elif line[0] == "ack":
            ch = line[1]
            for page in pages:
                await page.until(lambda p=page, c=ch: c in p.acked)
            out({"acked": [page.acked[ch] for page in pages],
                 "reconnects": sum(page.reconnects for page in pages)})  # fmt: skip
        elif line[0] == "quit":
            break
    for task in tasks:
        task.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args()
    uvloop.run(main(args.url, args.count))
