"""History per kind of value, on a real nats-server with file storage and a real
``synoptic rollup``: the raw history keeps scalars only (large values are refused,
so a flood of images cannot push a scalar out); the rollup keeps the large values
thinned in a stream of their own; ``synoptic bus status`` says how far back each
reaches; and all of it survives a restart of NATS."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator

import numpy as np
import pytest
from nats.js.api import StreamConfig

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import HistoryConfig
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.rollup import ensure_rollup, start_rollup
from synoptic_schemas import Subjects, decode_value, encode, parse_channel

SUBJECTS = Subjects()
SCALARS = [f"ca://HK:S{k:02d}" for k in range(20)]
IMAGE = "pva://HK:IMAGE"
#: raw history budget: a few hundred kB, so the images would fill it many times
RAW_BYTES = 400_000
ARRAY_BYTES = 8 << 20


@pytest.fixture(scope="module")
def server() -> Iterator[NatsServer]:
    """nats-server with an 8 MiB payload limit and its own store (restarted below)."""
    with NatsServer(max_payload=8 << 20) as nats:
        yield nats


def bus_init(url: str) -> str:
    """``synoptic bus init`` with a small raw budget, as an operator runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "synoptic_bus.cli", "bus", "init", "--nats", url,
         "--history-bytes", str(RAW_BYTES), "--history-arrays-bytes",
         str(ARRAY_BYTES), "--history-window", "600"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout


@pytest.fixture(scope="module")
def rollup(server: NatsServer) -> Iterator[Process]:
    out = bus_init(server.url)
    assert "stream CS_ARRAYS ready" in out
    proc = start_rollup(server.url, "--span", "1", "--tick", "0.2")
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
async def bus(server: NatsServer, rollup: Process) -> AsyncIterator[NatsClient]:
    nc = await connect(server.url, name="test-kinds")
    try:
        yield nc
    finally:
        await nc.close()


def value(v: object, seq: int) -> bytes:
    return encode({"ver": 1, "v": v, "t": time.time_ns(), "sev": 0, "st": "",
                   "seq": seq, "ep": 7, "c": True})  # fmt: skip


async def stored(nc: NatsClient, stream: str, at_least: int) -> int:
    js = nc.jetstream()
    async with asyncio.timeout(60):
        while (n := (await js.stream_info(stream)).state.messages) < at_least:  # noqa: ASYNC110 - no event for a stream count
            await asyncio.sleep(0.05)
    return n


async def test_images_do_not_push_scalars_out_and_are_kept_thinned(
    bus: NatsClient,
) -> None:
    js = bus.jetstream()
    image = np.arange(512 * 512, dtype="<u2").reshape(512, 512)  # 512 KiB
    rounds = 40  # 20 MiB of images: fifty times the raw budget
    for i in range(rounds):
        for uri in SCALARS:
            await bus.publish(SUBJECTS.val(parse_channel(uri)), value(float(i), i + 1))
        await bus.publish(SUBJECTS.val(parse_channel(IMAGE)), value(image + i, i + 1))
        await asyncio.sleep(0.05)  # 20 Hz
    await bus.flush()
    # every scalar value is in the raw history, no image is
    raw = await stored(bus, "CS_HIST", rounds * len(SCALARS))
    assert raw == rounds * len(SCALARS)
    info = await js.stream_info("CS_HIST")
    assert info.state.bytes < RAW_BYTES
    oldest = await js.get_msg("CS_HIST", info.state.first_seq)
    assert decode_value(oldest.data)["seq"] == 1  # the first round is still there
    # the rollup kept the first image and a few more: within its share
    kept = await stored(bus, "CS_ARRAYS", 1)
    first = await js.get_msg(
        "CS_ARRAYS", (await js.stream_info("CS_ARRAYS")).state.first_seq
    )
    got = decode_value(first.data)
    assert first.subject == "cs.hist.arr.pva.HK:IMAGE" and got["seq"] == 1
    np.testing.assert_array_equal(got["v"], image)
    # 8 MiB over 600 s at 0.9: ~12.6 kB/s for the one channel, a 512 KiB image
    # every ~42 s: in 2 s of images, the first only
    assert kept == 1


async def test_bus_status_tells_how_far_back_each_kind_reaches(
    server: NatsServer, bus: NatsClient
) -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "synoptic_bus.cli", "bus", "status", "--json",
         "--nats", server.url],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    kinds = {s["kind"]: s for s in json.loads(done.stdout)["history"]}
    assert set(kinds) == {"raw", "blocks", "arrays", "meta"}
    assert kinds["raw"]["max_msg_size"] == 4096
    assert kinds["raw"]["max_bytes"] == RAW_BYTES
    assert kinds["arrays"]["max_bytes"] == ARRAY_BYTES
    assert all(s["storage"] == "file" for s in kinds.values())
    assert all(kinds[k]["window_s"] == 600 for k in ("raw", "blocks", "arrays"))
    assert kinds["meta"]["window_s"] == 400 * 86400  # metadata: months, by default
    assert kinds["raw"]["kept_s"] > 0 and kinds["blocks"]["messages"] > 0
    text = (
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "synoptic_bus.cli", "bus", "status", "--nats",
             server.url],
            capture_output=True, text=True, timeout=30, check=True,
        )
    ).stdout  # fmt: skip
    assert (
        "CS_HIST" in text and "messages up to 4096 B" in text and "reaches back" in text
    )


async def test_history_survives_a_restart_of_nats(
    server: NatsServer, bus: NatsClient
) -> None:
    js = bus.jetstream()
    before = {
        name: (await js.stream_info(name)).state.messages
        for name in ("CS_HIST", "CS_ROLL", "CS_ROLL_OPEN", "CS_ARRAYS")
    }
    assert all(before.values())
    await bus.close()
    server.restart()
    nc = await connect(server.url, name="test-kinds-after")
    try:
        js = nc.jetstream()
        after = {name: (await js.stream_info(name)).state.messages for name in before}
        assert after["CS_HIST"] == before["CS_HIST"]
        assert after["CS_ARRAYS"] >= before["CS_ARRAYS"]
        assert after["CS_ROLL"] >= 1 and after["CS_ROLL_OPEN"] >= 1
    finally:
        await nc.close()


async def test_closed_blocks_are_only_appended(bus: NatsClient) -> None:
    """ADR 0035: growing blocks, rewritten every tick, live in ``CS_ROLL_OPEN``
    (one per channel), so ``CS_ROLL`` deletes nothing inside itself and a search
    of it by stream time is right."""
    js = bus.jetstream()
    for seq in range(1, 30):
        await bus.publish(
            SUBJECTS.val(parse_channel(SCALARS[0])), value(1.0 * seq, seq)
        )
        await asyncio.sleep(0.05)  # (values over a few of the rollup's ticks)
    subject = SUBJECTS.block(parse_channel(SCALARS[0]), "open")
    async with asyncio.timeout(30):
        while True:
            growing = await js.stream_info("CS_ROLL_OPEN", subjects_filter=subject)
            if (growing.state.subjects or {}).get(subject):  # (rewritten each tick)
                break
            await asyncio.sleep(0.1)
    closed = await js.stream_info("CS_ROLL")
    assert closed.config.subjects == ["cs.roll.0.>"]
    assert closed.state.messages > 0 and not closed.state.num_deleted
    assert growing.state.subjects == {subject: 1}
    assert growing.config.max_msgs_per_subject == 1


async def test_a_block_stream_of_the_earlier_layout_gives_up_its_growing_blocks(
    bus: NatsClient,
) -> None:
    js = bus.jetstream()
    await js.add_stream(
        StreamConfig(name="LAY_ROLL", subjects=["lay.roll.>"], storage="file",
                     allow_rollup_hdrs=True)
    )  # fmt: skip
    await js.publish("lay.roll.0.ca.X", b"closed")
    await ensure_rollup(bus, HistoryConfig("lay"), update=False)
    closed = await js.stream_info("LAY_ROLL")
    assert closed.config.subjects == ["lay.roll.0.>"] and closed.state.messages == 1
    growing = await js.stream_info("LAY_ROLL_OPEN")
    assert growing.config.subjects == ["lay.roll.open.>"]
    await js.publish(
        "lay.roll.open.ca.X", b"growing"
    )  # (refused by a stream that lacks it)
    assert (await js.stream_info("LAY_ROLL_OPEN")).state.messages == 1
