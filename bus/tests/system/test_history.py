"""Recent history on the bus (CS_HIST) against a real nats-server."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history, read_range
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, StoreError, ensure_store
from synoptic_schemas import Subjects, decode_value, encode, parse_channel

SUBJECTS = Subjects()
CH = [parse_channel(f"ca://HIST:{i}") for i in range(3)]


def value(v: float, seq: int, t: int) -> bytes:
    return encode({"ver": 1, "v": v, "t": t, "sev": 0, "st": "", "seq": seq, "ep": 1,
                   "c": True})  # fmt: skip


async def stored(nc: NatsClient, stream: str, count: int) -> None:
    """Wait until ``stream`` holds ``count`` messages."""
    js = nc.jetstream()
    async with asyncio.timeout(20):
        while (await js.stream_info(stream)).state.messages < count:  # noqa: ASYNC110 - no event to await for a stream count
            await asyncio.sleep(0.05)


async def test_bus_init_creates_history_with_its_limits(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "synoptic_bus.cli", "bus", "init", "--nats",
        nats_server.url, "--prefix", "hi", "--history-window", "600",
        "--history-per-channel", "5000", "--history-bytes", "1000000",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert "HI_HIST ready: 600 s of history" in out.decode()
    info = (await nc.jetstream().stream_info("HI_HIST")).config
    assert (info.max_age, info.max_msgs_per_subject, info.max_bytes) == (
        600, 5000, 1000000,
    )  # fmt: skip
    assert info.subjects == ["hi.hist.val.>"]
    last = (await nc.jetstream().stream_info("HI_LAST")).config
    assert last.republish is not None and last.republish.dest == "hi.hist.>"


async def test_every_value_is_kept_and_a_range_reads_back_bounded(
    nc: NatsClient,
) -> None:
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    await ensure_store(nc, StoreConfig())  # as an adapter does: the feed stays
    t0 = time.time_ns()
    n = 500
    for seq in range(1, n + 1):  # faster than any source: the last-value stream
        for ch in CH:  # keeps one per subject, the history all of them
            await nc.publish(SUBJECTS.val(ch), value(float(seq), seq, t0 + seq))
    await stored(nc, "CS_HIST", n * len(CH))
    wanted = [SUBJECTS.hist(ch) for ch in CH[:2]]
    read = await read_range(nc, "CS_HIST", wanted, t0 - 10**9, time.time_ns())
    assert read.count == 2 * n and not read.truncated
    assert sorted(read.payloads) == sorted(wanted)
    seqs = [decode_value(p)["seq"] for p in read.payloads[wanted[0]]]
    assert seqs == list(range(1, n + 1))
    bounded = await read_range(
        nc, "CS_HIST", wanted, t0 - 10**9, time.time_ns(), max_msgs=300, batch=128
    )
    assert bounded.count == 300 and bounded.truncated
    later = await read_range(nc, "CS_HIST", wanted, time.time_ns() + 10**10, 0)
    assert later.count == 0  # nothing stored after the start: an empty answer


async def test_a_missing_history_stream_is_a_clear_error(nc: NatsClient) -> None:
    with pytest.raises(StoreError, match="stream not found"):
        await read_range(nc, "NO_HIST", ["cs.hist.val.ca.X"], 0, time.time_ns())


async def test_a_recreated_last_value_stream_feeds_the_history_again(
    nc: NatsClient,
) -> None:
    """A memory last-value stream is gone after a server restart and an adapter
    creates it again: the history (file storage: it survived) keeps being fed."""
    await ensure_store(nc, StoreConfig("rc"))
    await ensure_history(nc, HistoryConfig("rc", storage="file"))
    await nc.jetstream().delete_stream("RC_LAST")
    await ensure_store(nc, StoreConfig("rc"))  # as an adapter does on connect
    last = (await nc.jetstream().stream_info("RC_LAST")).config
    assert last.republish is not None and last.republish.dest == "rc.hist.>"
    await nc.publish("rc.val.ca.AGAIN", value(1.0, 1, time.time_ns()))
    await stored(nc, "RC_HIST", 1)
