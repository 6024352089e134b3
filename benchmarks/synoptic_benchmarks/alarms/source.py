"""The alarm benchmark's channels: one process that publishes like an adapter
(the adapters' own :class:`~synoptic_adapters.publisher.Publisher`, so values and
severity transitions are what the adapters send), driven over NATS.

Every channel's value changes ``rate`` times a second, spread evenly; each
second a ``crossing`` share of the channels crosses an alarm limit (MINOR or
MAJOR) and the previous second's go back, so that many transitions enter and
leave alarm every second, spread over the second as the values are (a channel
crosses with one of its values; channels at 1 Hz change at their own moments). ``--part i/n`` takes every n-th thousand of the
channels (several processes share the work). ``bench.alarms.storm`` (payload: a
count) puts that many channels of the upper half into MAJOR within the next
second; ``bench.alarms.stats`` (request, one answer per process) gives counters.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from typing import Any

import uvloop

from synoptic_adapters.publisher import Publisher
from synoptic_bus.connect import connect
from synoptic_schemas import SCHEMA_VERSION, Subjects, encode, parse_channel

SLOTS = 50  # value publishes are spread over this many slots a second


def channel_uri(i: int) -> str:
    """The URI of benchmark channel ``i`` (100 areas of 1000 by default)."""
    return f"ca://BENCH:A{i // 1000:03d}:C{i % 1000:04d}"


class Source:
    def __init__(self, nc: Any, channels: int, rate: float, crossing: float,
                 part: int = 0, parts: int = 1) -> None:  # fmt: skip
        self.nc = nc
        self.index = [i for i in range(channels) if (i // 1000) % parts == part]
        self.total = channels
        self.channels = [parse_channel(channel_uri(i)) for i in self.index]
        self.rate = rate
        self.crossing = crossing
        self.epoch = time.time_ns() // 1_000_000 + part
        self.name = f"bench-alarms-{part}"
        self.publisher = Publisher(nc, Subjects(), self.name, self.epoch)
        self.sev = [0] * len(self.channels)
        self.storming: list[int] = []
        self.crossed: list[int] = []
        #: this second's transitions not published yet: (channel, severity, value)
        self.due: list[tuple[int, int, float]] = []
        self.due_per_slot = 0
        self.values = 0
        self.skipped = 0  # values not sent: the process was behind
        self.transitions = 0
        self.running = True

    def push(self, i: int, v: float) -> None:
        sev = self.sev[i]
        st = ("NO_ALARM", "HIGH", "HIHI", "INVALID")[sev]
        self.publisher.value(self.channels[i], v, t=time.time_ns(), sev=sev, st=st)
        self.values += 1

    async def run(self) -> None:
        await self.publisher.start()
        for i in range(len(self.channels)):  # first values: every channel known
            self.push(i, 0.0)
            if i % 5000 == 4999:
                await asyncio.sleep(0)
        beat = asyncio.create_task(self.heartbeat())
        n = len(self.channels)
        per_slot = int(n * self.rate / SLOTS)
        cursor = 0
        tick = 0
        start = time.monotonic()
        next_cross = start + 1.0
        while self.running:
            tick += 1
            now = time.monotonic()
            if now >= next_cross:  # transitions keep to the clock ...
                self.cross()
                next_cross += 1.0
            if self.due:
                self.publish_due(self.due_per_slot)
            if self.rate and now < start + (tick + 1) / SLOTS:  # ... values as far
                # as it keeps up
                for _ in range(per_slot):
                    self.push(cursor, random.random())
                    cursor = (cursor + 1) % n
            else:
                self.skipped += per_slot
            if self.storming:
                batch, self.storming = self.storming[:500], self.storming[500:]
                for i in batch:
                    self.sev[i] = 2
                    self.push(i, 99.0)
                    self.transitions += 1
            delay = start + tick / SLOTS - time.monotonic()
            await asyncio.sleep(max(delay, 0))
        beat.cancel()

    def cross(self) -> None:
        """A new second: the last second's crossed channels go back and a new
        share crosses; both spread over the second's slots, in random order."""
        self.publish_due(len(self.due))  # behind: the last second's rest first
        back = [(i, 0, 0.5) for i in self.crossed]
        count = int(len(self.channels) * self.crossing)
        was = set(self.crossed)  # (not again at once: its going back comes first)
        lower = [k for k, i in enumerate(self.index)
                 if i < self.total // 2 and k not in was]  # fmt: skip
        self.crossed = random.sample(lower, min(count, len(lower)))
        self.due = back + [(i, random.choice((1, 2)), 95.0) for i in self.crossed]
        random.shuffle(self.due)
        self.due_per_slot = -(-len(self.due) // SLOTS)

    def publish_due(self, count: int) -> None:
        batch, self.due = self.due[:count], self.due[count:]
        for i, sev, v in batch:
            if self.sev[i] != sev:
                self.sev[i] = sev
                self.push(i, v)
                self.transitions += 1

    async def heartbeat(self) -> None:
        while self.running:
            body = {"ver": SCHEMA_VERSION, "id": self.name, "proto": "ca",
                    "ep": self.epoch, "t": time.time_ns(), "period": 1.0,
                    "n": len(self.channels), "conn": len(self.channels)}  # fmt: skip
            await self.nc.publish(Subjects().hb(self.name), encode(body))
            await asyncio.sleep(1.0)

    async def on_storm(self, msg: Any) -> None:
        count = int(msg.data or b"0")
        half = self.total // 2  # the storm takes the upper half: no crossings there
        self.storming = [
            k for k, i in enumerate(self.index) if half <= i < half + count
        ]

    async def on_stats(self, msg: Any) -> None:
        stats = self.publisher.stats
        await msg.respond(json.dumps({
            "values": self.values, "transitions": self.transitions,
            "skipped": self.skipped,
            "published": stats.published, "sev_published": stats.sev_published,
            "dropped": stats.dropped,
        }).encode())  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    nc = await connect(args.nats, name="bench-alarms-source")
    part, _, parts = args.part.partition("/")
    source = Source(nc, args.channels, args.rate, args.crossing, int(part), int(parts))
    await nc.subscribe("bench.alarms.storm", cb=source.on_storm)
    await nc.subscribe("bench.alarms.stats", cb=source.on_stats)
    print("bench source ready", flush=True)
    await source.run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats", required=True)
    parser.add_argument("--channels", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--crossing", type=float, default=0.01)
    parser.add_argument("--part", default="0/1", help="i/n: this process's share")
    uvloop.run(main(parser.parse_args()))
