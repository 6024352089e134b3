"""A synthetic counting publisher: C channels at R Hz on NATS, as an adapter would.

Used when the load test should not depend on a control system (or the EPICS adapter
is not wanted): every channel is ``sim://lt:cNNNNN``; each value message carries a
counter as ``v``, the publish time as ``t`` (ns) and a per-channel ``seq`` under one
epoch, so viewers count gaps and latency exactly. Metadata is published once per
channel, and the last-value stream is created, before the readiness line; a
heartbeat goes out every second (``cs.hb.loadtest-publisher``) so gateways know the
source is alive and never mark its channels stale. ``--waveform N`` makes every
value an ``f8`` array of N points instead (the waveform scenario)::

    publisher ready: 100 channels at 10.0 Hz

Run: ``python loadtest/kit/publisher.py --nats URL --channels 100 --rate 10``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import time

import numpy as np

from synoptic_bus.connect import connect
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_schemas.channels import parse_channel
from synoptic_schemas.codec import encode
from synoptic_schemas.messages import SCHEMA_VERSION
from synoptic_schemas.subjects import Subjects

#: At most this many publishing ticks per second (phased mode).
MAX_SLOTS_PER_S = 200
#: The adapter id of the heartbeats, and their period in seconds.
PUBLISHER_ID = "loadtest-publisher"
HEARTBEAT_PERIOD = 1.0


def channel_uris(count: int) -> list[str]:
    """The URIs of the synthetic channels, in order."""
    return [f"sim://lt:c{index:05d}" for index in range(count)]


async def _ensure_store_retrying(
    nc: object, config: StoreConfig, timeout: float
) -> None:
    """JetStream in a fresh cluster needs a few seconds to elect a meta leader."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            await ensure_store(nc, config)  # type: ignore[arg-type]
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def _beat(nc: object, subjects: Subjects, epoch: int, count: int,
                stop: asyncio.Event) -> None:  # fmt: skip
    """A heartbeat every ``HEARTBEAT_PERIOD`` until ``stop``, as an adapter does."""
    subject = subjects.hb(PUBLISHER_ID)
    while not stop.is_set():
        beat = {"ver": SCHEMA_VERSION, "id": PUBLISHER_ID, "proto": "sim", "ep": epoch,
                "t": time.time_ns(), "period": HEARTBEAT_PERIOD, "n": count,
                "conn": count}  # fmt: skip
        await nc.publish(subject, encode(beat))  # type: ignore[attr-defined]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), HEARTBEAT_PERIOD)


async def publish(
    url: str,
    count: int,
    rate: float,
    prefix: str,
    replicas: int,
    phased: bool,
    waveform: int = 0,
) -> None:
    """Publish until SIGTERM/SIGINT, then print the totals as JSON. ``waveform``
    > 0: each value is an ``f8`` array of that many points (a moving sine), not a
    counter."""
    wave = np.sin(np.arange(waveform) / 900.0) if waveform > 0 else None
    subjects = Subjects(prefix)
    channels = [parse_channel(uri) for uri in channel_uris(count)]
    val_subjects = [subjects.val(ch) for ch in channels]
    nc = await connect(url, name="loadtest-publisher")
    await _ensure_store_retrying(nc, StoreConfig(prefix=prefix, replicas=replicas), 30)
    epoch = int(time.time() * 1000)
    now = time.time_ns()
    for channel in channels:
        meta = {"ver": SCHEMA_VERSION, "dt": "i8", "shape": [], "w": False, "t": now,
                "ep": epoch, "unit": "count", "desc": "load-test counter"}  # fmt: skip
        if wave is not None:
            meta |= {"dt": "f8", "shape": [len(wave)], "desc": "load-test waveform"}
        await nc.publish(subjects.meta(channel), encode(meta))
    await nc.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    beating = asyncio.create_task(_beat(nc, subjects, epoch, count, stop))
    print(f"publisher ready: {count} channels at {rate} Hz", flush=True)

    # Each period is cut into `slots` ticks; channel k publishes on tick k % slots.
    # phased=False: every channel on the same tick (records of one scan thread, big
    # batches); phased=True: spread evenly (many independent sources, the most
    # frames per second for a gateway: the worst case).
    slots = max(1, min(count, MAX_SLOTS_PER_S // max(1, int(rate)))) if phased else 1
    by_slot = [val_subjects[slot::slots] for slot in range(slots)]
    tick = 1.0 / rate / slots
    seq = 0  # every channel publishes once per period, so one seq serves all
    ticks = 0
    started = time.monotonic()
    published = 0
    while not stop.is_set():
        slot = ticks % slots
        if slot == 0:
            seq += 1
        t = time.time_ns()
        v = seq if wave is None else np.roll(wave, 97 * seq)
        msg = encode({"ver": SCHEMA_VERSION, "v": v, "t": t, "sev": 0, "st": "",
                      "seq": seq, "ep": epoch, "c": True})  # fmt: skip
        for subject in by_slot[slot]:
            await nc.publish(subject, msg)
        published += len(by_slot[slot])
        ticks += 1
        delay = started + ticks * tick - time.monotonic()
        if delay <= 0:
            await asyncio.sleep(0)  # behind schedule: catch up, but stay stoppable
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
    await beating
    with contextlib.suppress(Exception):
        await asyncio.wait_for(nc.drain(), 5)
    elapsed = time.monotonic() - started
    print(json.dumps({"published": published, "seconds": round(elapsed, 3),
                      "rate": round(published / elapsed, 1)}), flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nats", required=True, help="NATS URL")
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10.0, help="Hz per channel")
    parser.add_argument("--prefix", default="cs")
    parser.add_argument("--replicas", type=int, default=1, help="last-value stream")
    parser.add_argument("--phased", action=argparse.BooleanOptionalAction, default=True,
                        help="spread channels over the period (default) or publish "
                        "all at once")  # fmt: skip
    parser.add_argument("--waveform", type=int, default=0,
                        help="values are f8 arrays of this many points (0: counters)")  # fmt: skip
    args = parser.parse_args()
    asyncio.run(
        publish(
            args.nats,
            args.channels,
            args.rate,
            args.prefix,
            args.replicas,
            args.phased,
            args.waveform,
        )
    )


if __name__ == "__main__":
    main()
