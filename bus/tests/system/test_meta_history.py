"""The metadata in force at a moment (CS_META) and the stream-at-a-moment reads
(:mod:`synoptic_bus.moment`) against a real nats-server."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.metahistory import MetaHistoryConfig, ensure_meta_history
from synoptic_bus.moment import first_kept, last_at, read_run, run_from
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import StoreConfig, ensure_store, store_barrier
from synoptic_schemas import Subjects, decode_meta, decode_value, encode, parse_channel

SUBJECTS = Subjects("mh")
CH = parse_channel("ca://MH:TEMP")


def meta(unit: str) -> bytes:
    return encode({"ver": 1, "dt": "f8", "shape": [], "unit": unit, "w": False,
                   "t": time.time_ns(), "ep": 1})  # fmt: skip


def value(v: float, seq: int) -> bytes:
    return encode({"ver": 1, "v": v, "t": time.time_ns(), "sev": 0, "st": "",
                   "seq": seq, "ep": 1, "c": True})  # fmt: skip


async def count(nc: NatsClient, stream: str, n: int) -> None:
    js = nc.jetstream()
    async with asyncio.timeout(20):
        while (await js.stream_info(stream)).state.messages < n:  # noqa: ASYNC110 - no event to await for a stream count
            await asyncio.sleep(0.02)


async def test_bus_init_creates_the_metadata_history_and_feeds_it(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "synoptic_bus.cli", "bus", "init", "--nats",
        nats_server.url, "--prefix", "mi", "--meta-history-window", "864000",
        "--meta-history-bytes", "2000000",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert "MI_META ready: 10 days of metadata history" in out.decode()
    js = nc.jetstream()
    info = (await js.stream_info("MI_META")).config
    assert (info.max_age, info.max_bytes, info.subjects) == (
        864000, 2000000, ["mi.hist.meta.>"],
    )  # fmt: skip
    last = (await js.stream_info("MI_LAST")).config
    assert last.republish is not None
    assert (last.republish.src, last.republish.dest) == ("mi.>", "mi.hist.>")
    await nc.publish("mi.meta.ca.X", meta("mA"))
    await nc.publish("mi.val.ca.X", value(1.0, 1))
    await store_barrier(nc, "mi.sync.barrier")  # its copy goes to no stream
    await count(nc, "MI_META", 1)
    await count(nc, "MI_HIST", 1)
    assert (await js.stream_info("MI_HIST")).state.messages == 1
    status = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "synoptic_bus.cli", "bus", "status", "--json",
        "--nats", nats_server.url, "--prefix", "mi",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await status.communicate()
    assert status.returncode == 0, err.decode()
    kinds = {s["kind"]: s for s in json.loads(out)["history"]}
    assert kinds["meta"]["window_s"] == 864000 and kinds["meta"]["messages"] == 1


async def test_the_metadata_and_values_in_force_at_a_moment(nc: NatsClient) -> None:
    await ensure_store(nc, StoreConfig("mh"))
    history = HistoryConfig("mh")
    await ensure_history(nc, history)
    await ensure_meta_history(nc, MetaHistoryConfig("mh", storage="memory"))
    before = time.time_ns()
    await nc.publish(SUBJECTS.meta(CH), meta("degC"))
    await nc.publish(SUBJECTS.val(CH), value(20.0, 1))
    # each stream stores on its own: wait for both (a barrier covers the last-value
    # store only)
    await count(nc, "MH_META", 1)
    await count(nc, "MH_HIST", 1)
    between = time.time_ns()
    await nc.publish(SUBJECTS.meta(CH), meta("K"))
    await nc.publish(SUBJECTS.val(CH), value(293.15, 2))
    await count(nc, "MH_META", 2)
    await count(nc, "MH_HIST", 2)
    after = time.time_ns()

    subject = SUBJECTS.hist_meta(CH)
    then = await last_at(nc, "MH_META", [subject, "mh.hist.meta.ca.NONE"], between)
    assert list(then) == [subject]  # a subject with nothing kept: absent
    assert decode_meta(then[subject].data)["unit"] == "degC"
    assert before <= then[subject].stored_ns <= between
    now = await last_at(nc, "MH_META", [subject], after)
    assert decode_meta(now[subject].data)["unit"] == "K"
    assert await last_at(nc, "MH_META", [subject], before - 10**9) == {}

    value_then = await last_at(nc, "MH_HIST", [SUBJECTS.hist(CH)], between)
    assert decode_value(value_then[SUBJECTS.hist(CH)].data)["v"] == 20.0
    run = await run_from(nc, "MH_HIST", SUBJECTS.hist(CH), before, 8)
    assert [decode_value(m.data)["seq"] for m in run] == [1, 2]
    # at the very ns a value was stored it is the value then (JetStream's own
    # ``up_to_time`` leaves it out); one ns earlier it is not yet
    hist = SUBJECTS.hist(CH)
    second = run[1].stored_ns
    assert (await last_at(nc, "MH_HIST", [hist], second))[hist].seq == run[1].seq
    assert (await last_at(nc, "MH_HIST", [hist], second - 1))[hist].seq == run[0].seq
    assert [m.seq for m in run] == sorted(m.seq for m in run)
    assert await run_from(nc, "MH_HIST", SUBJECTS.hist(CH), after + 10**9, 8) == []
    first = await first_kept(nc, "MH_META", subject)
    assert first is not None and decode_meta(first.data)["unit"] == "degC"
    assert await first_kept(nc, "MH_META", "mh.hist.meta.ca.NONE") is None


async def test_more_than_1024_subjects_at_a_moment(nc: NatsClient) -> None:
    """A screen of 2000 channels: two requests, one answer."""
    await ensure_store(nc, StoreConfig("mk"))
    await ensure_history(nc, HistoryConfig("mk"))
    subjects = Subjects("mk")
    channels = [parse_channel(f"ca://MK:{i}") for i in range(2000)]
    for i, ch in enumerate(channels):
        await nc.publish(subjects.val(ch), value(float(i), 1))
    await count(nc, "MK_HIST", len(channels))
    got = await last_at(
        nc, "MK_HIST", [subjects.hist(c) for c in channels], time.time_ns()
    )
    assert len(got) == 2000
    assert decode_value(got[subjects.hist(channels[1500])].data)["v"] == 1500.0


async def test_a_run_until_a_time_in_batches(nc: NatsClient) -> None:
    """A trend's blocks of one channel: every one of its messages in the range,
    in order, over several batches; none of another channel; cut at ``max_msgs``."""
    await ensure_store(nc, StoreConfig("mr"))
    await ensure_history(nc, HistoryConfig("mr"))
    subjects = Subjects("mr")
    ours, other = parse_channel("ca://MR:A"), parse_channel("ca://MR:B")
    before = time.time_ns()
    for i in range(50):
        await nc.publish(subjects.val(ours), value(float(i), i))
        await nc.publish(subjects.val(other), value(-1.0, i))
    await count(nc, "MR_HIST", 100)
    after = time.time_ns()
    hist = subjects.hist(ours)
    run, cut = await read_run(
        nc, "MR_HIST", hist, before, after, max_msgs=1000, batch=8
    )
    assert not cut
    assert [decode_value(m.data)["seq"] for m in run] == list(range(50))
    assert {m.subject for m in run} == {hist}
    middle = run[24].stored_ns
    early, cut = await read_run(nc, "MR_HIST", hist, before, middle, max_msgs=1000,
                                batch=8)  # fmt: skip
    # up to the batch that passes the end: the 25 before it and at most 7 after
    assert not cut and 25 <= len(early) <= 32
    assert [m.seq for m in early] == [m.seq for m in run[: len(early)]]
    short, cut = await read_run(
        nc, "MR_HIST", hist, before, after, max_msgs=20, batch=8
    )
    assert cut and [m.seq for m in short] == [m.seq for m in run[:20]]
    assert await read_run(nc, "MR_HIST", hist, after + 10**9, after + 2 * 10**9,
                          max_msgs=10) == ([], False)  # fmt: skip
