"""History read as blocks: ``synoptic rollup`` (a real process) writes blocks of the
values a real nats-server carries, and the gateway's bus backend reads them, with
the raw history for what no block covers, to the very values the raw history
holds."""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.rollup import ensure_rollup, start_rollup
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last
from synoptic_gateway.history.backend import HistoryRead
from synoptic_gateway.history.blocks import BlockRead, ClosedBlocks, read_blocks
from synoptic_gateway.history.busbackend import BusHistory
from synoptic_schemas import Subjects, encode, parse_channel
from synoptic_schemas.blocks import decode_block
from synoptic_schemas.subjects import subject_tail

MS = 1_000_000


@pytest.fixture
def rollup(nats_server: NatsServer) -> Iterator[Process]:
    """The rollup service with 1-s blocks of at most 500 values (on the streams:
    it reads the values the raw history stores)."""
    asyncio.run(streams_at(nats_server.url))
    proc = start_rollup(nats_server.url, "--span", "1", "--max-values", "500",
                        "--tick", "0.2")  # fmt: skip
    try:
        yield proc
    finally:
        proc.stop()


async def streams(nc: NatsClient) -> None:
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    await ensure_rollup(nc, HistoryConfig())


async def streams_at(url: str) -> None:
    nc = await connect(url, name="test-streams")
    try:
        await streams(nc)
    finally:
        await nc.close()


async def publish(
    nc: NatsClient, uris: list[str], n: int, seq0: int = 0
) -> tuple[int, int]:
    """``n`` values per channel (a sine, severity 2 above 0.9) stamped when
    published, as an adapter does; returns the first and last stamps once the
    history stream holds them all."""
    js = nc.jetstream()
    before = (await js.stream_info("CS_HIST")).state.messages
    subjects = Subjects()
    first = last = 0
    for i in range(n):
        v = math.sin((seq0 + i) / 50)
        last = time.time_ns()
        first = first or last
        for k, uri in enumerate(uris):
            msg = {"ver": 1, "v": v + k, "t": last, "sev": 2 if v > 0.9 else 0,
                   "st": "", "seq": seq0 + i + 1, "ep": 3, "c": True}  # fmt: skip
            await nc.publish(subjects.val(parse_channel(uri)), encode(msg))
        if i % 50 == 49:
            await asyncio.sleep(0.02)  # ~ a fast adapter, not a flood
    async with asyncio.timeout(30):
        while (await js.stream_info("CS_HIST")).state.messages < before + n * len(uris):  # noqa: ASYNC110 - no event to await for a stream count
            await asyncio.sleep(0.05)
    return first, last


async def blocks_hold(nc: NatsClient, uris: list[str], t_last: int) -> None:
    """Wait until each channel's growing block reached ``t_last`` (the rollup has
    cut everything published)."""
    js = nc.jetstream()
    subjects = Subjects()
    async with asyncio.timeout(30):
        for uri in uris:
            subject = subjects.block(parse_channel(uri), "open")
            while True:
                try:
                    msg = await js.get_last_msg("CS_ROLL_OPEN", subject)
                except Exception:  # not there yet
                    msg = None
                if msg is not None and decode_block(msg.data).b > t_last:
                    break
                await asyncio.sleep(0.1)


async def rolling(nc: NatsClient, uri: str, timeout: float = 30) -> None:
    """Publish values of ``uri`` until the rollup writes one into a block."""
    subject = Subjects().val(parse_channel(uri))
    async with asyncio.timeout(timeout):
        for seq in range(1, 10**6):
            t = time.time_ns()
            await nc.publish(subject, encode({"ver": 1, "v": 0.0, "t": t, "sev": 0,
                                              "st": "", "seq": seq, "ep": 9, "c": True}))  # fmt: skip
            try:
                async with asyncio.timeout(1):
                    await blocks_hold(nc, [uri], t - 1)
                return
            except TimeoutError:
                continue


def request(uris: list[str], t0: int, t1: int) -> HistoryRead:
    return HistoryRead([parse_channel(u) for u in uris], t0, t1, 1000, 10**6, 30.0)


async def read_both(url: str, q: HistoryRead) -> tuple[dict, dict, int, int]:
    blocks = BusHistory(url, "cs", "test-blocks")
    raw = BusHistory(url, "cs", "test-raw", blocks=False)
    for b in (blocks, raw):
        await b.start()
    try:
        by_blocks, by_raw = await blocks.read(q), await raw.read(q)
    finally:
        for b in (blocks, raw):
            await b.close()
    return by_blocks, by_raw, blocks.messages, raw.messages


async def test_blocks_read_back_every_value_in_few_messages(
    nats_server: NatsServer, nc: NatsClient, rollup: Process
) -> None:
    await streams(nc)
    tag = secrets.token_hex(3).upper()
    uris = [f"ca://RB{tag}:{k}" for k in range(3)]
    n = 1500  # in ~1 s: 1-s windows, and blocks full at 500 values
    t_first, t_last = await publish(nc, uris, n)
    await blocks_hold(nc, uris, t_last)
    # from the first value on: before it, the rollup (started a moment ago) cannot
    # promise it saw everything, and the raw history would be read for that part
    q = request(uris, t_first, t_last)  # (all covered: no raw read at all)
    by_blocks, by_raw, block_msgs, raw_msgs = await read_both(nats_server.url, q)
    for k, uri in enumerate(uris):
        got, want = by_blocks[uri], by_raw[uri]
        assert got.error is None and want.error is None
        assert got.cols is not None and want.cols is not None
        assert len(want.cols) == n
        np.testing.assert_array_equal(got.cols.t, want.cols.t)
        np.testing.assert_array_equal(got.cols.v, want.cols.v)
        np.testing.assert_array_equal(got.cols.sev, want.cols.sev)
        assert want.cols.v[0] == k and set(got.cols.sev.tolist()) == {0, 2}
    assert raw_msgs == n * len(uris)
    assert block_msgs < raw_msgs / 50  # a few blocks per channel


async def all_closed(nc: NatsClient, uris: list[str], t_last: int) -> None:
    """Wait until each channel's blocks closed past ``t_last`` (its growing block
    is the empty one of a quiet channel, from where its newest closed one ends)."""
    subjects = [Subjects().block(parse_channel(u), "open") for u in uris]
    async with asyncio.timeout(30):
        while True:
            snap = await fetch_last(nc, subjects, stream="CS_ROLL_OPEN")
            blocks = [decode_block(d) for d in snap.messages.values()]
            if len(blocks) == len(uris) and all(
                len(b.cols) == 0 and b.a > t_last for b in blocks
            ):
                return
            await asyncio.sleep(0.1)


async def test_closed_blocks_kept_are_not_read_again_until_more_close(
    nats_server: NatsServer, nc: NatsClient, rollup: Process
) -> None:
    await streams(nc)
    tag = secrets.token_hex(3).upper()
    uris = [f"ca://RK{tag}:{k}" for k in range(3)]
    tails = [subject_tail(parse_channel(u)) for u in uris]
    cache = ClosedBlocks(growing_s=0)  # (the growing blocks read every time)

    async def read(t0: int, t1: int, kept: ClosedBlocks | None) -> BlockRead:
        return await read_blocks(
            nc, "CS_ROLL", "CS_HIST", "cs", tails, t0, t1, max_values=10**6,
            timeout=30.0, cache=kept,
        )  # fmt: skip

    async def same_as_read_whole(t0: int, t1: int) -> BlockRead:
        got, want = await read(t0, t1, cache), await read(t0, t1, None)
        for tail in tails:
            np.testing.assert_array_equal(got.columns[tail].t, want.columns[tail].t)
            np.testing.assert_array_equal(got.columns[tail].v, want.columns[tail].v)
            np.testing.assert_array_equal(got.columns[tail].sev, want.columns[tail].sev)
        return got

    t_first, t_mid = await publish(nc, uris, 1500)
    await all_closed(nc, uris, t_mid)
    first = await same_as_read_whole(t_first, t_mid)
    assert first.messages > 2 * len(tails) and cache.hits == 0  # closed ones read
    again = await same_as_read_whole(t_first, t_mid)
    assert again.messages == len(tails) and cache.hits == len(tails)  # growing only
    assert all(len(again.columns[t]) == 1500 for t in tails)
    # more blocks close: a read reaching them reads the channels' closed ones again
    _, t_last = await publish(nc, uris, 1500, seq0=1500)
    await all_closed(nc, uris, t_last)
    later = await same_as_read_whole(t_first, t_last)
    assert later.messages > 2 * len(tails) and cache.hits == len(tails)
    assert all(len(later.columns[t]) == 3000 for t in tails)
    assert (await same_as_read_whole(t_first, t_last)).messages == len(tails)
    assert 0 < cache.bytes <= cache.max_bytes
    # the growing blocks too, for growing_s (a rollup tick by default; longer
    # here, for a busy machine): no message read
    kept = ClosedBlocks(growing_s=60)
    assert (await read(t_first, t_last, kept)).messages > len(tails)
    again = await read(t_first, t_last, kept)
    assert again.messages == 0 and all(len(again.columns[t]) == 3000 for t in tails)


async def test_values_no_block_covers_come_from_the_raw_history(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """Values from before the rollup ran come raw; ranges over both kinds."""
    await streams(nc)
    tag = secrets.token_hex(3).upper()
    uris = [f"ca://RG{tag}:{k}" for k in range(2)]
    t_first, t_before = await publish(nc, uris, 400)  # no rollup runs yet
    fresh = start_rollup(nats_server.url, "--span", "1", "--max-values", "500",
                         "--tick", "0.2")  # fmt: skip
    try:
        t_second, t_last = await publish(nc, uris, 600, seq0=400)
        await blocks_hold(nc, uris, t_last)
        middle = (t_first + t_before) // 2, (t_second + t_last) // 2
        for t0, t1 in ((t_first - MS, t_last + MS), middle):
            by_blocks, by_raw, _, _ = await read_both(
                nats_server.url, request(uris, t0, t1)
            )
            for uri in uris:
                got, want = by_blocks[uri].cols, by_raw[uri].cols
                assert got is not None and want is not None
                inside = (want.t >= t0) & (want.t <= t1)
                keep = (got.t >= t0) & (got.t <= t1)
                np.testing.assert_array_equal(got.t[keep], want.t[inside])
                np.testing.assert_array_equal(got.v[keep], want.v[inside])
        # a bound on the raw messages (where blocks are worth reading at all)
        tails = [subject_tail(parse_channel(u)) for u in uris]
        for max_raw, cut in ((100, True), (10_000, False)):
            read = await read_blocks(
                nc, "CS_ROLL", "CS_HIST", "cs", tails, t_first - MS, t_last + MS,
                max_values=10**6, timeout=30.0, max_raw=max_raw,
            )  # fmt: skip
            assert read.truncated is cut and read.raw_messages <= max_raw
            assert read.raw_messages >= (100 if cut else 800)  # 400 before the rollup
    finally:
        fresh.stop()


async def test_the_rollup_goes_on_after_nats_restarts(tmp_path: Path) -> None:
    """kill -9 of nats-server: the rollup reconnects, subscribes again and writes
    blocks of what comes after; the blocks read back what the raw history holds."""
    server = NatsServer(store_dir=tmp_path / "js").start()
    proc = None
    try:
        nc = await connect(server.url, name="test-restart")
        history = HistoryConfig(storage="file")
        await ensure_store(nc, StoreConfig(storage="file"))
        await ensure_history(nc, history)
        await ensure_rollup(nc, history)
        proc = start_rollup(server.url, "--span", "1", "--tick", "0.2")
        uris = ["ca://RESTART:A"]
        await publish(nc, uris, 50)
        await nc.close()
        server.kill()
        server.start()
        proc.wait_for(r"NATS reconnected", timeout=30)
        nc = await connect(server.url, name="test-restart")
        try:
            await rolling(nc, "ca://RESTART:PROBE")  # subscribed again
            t_first, t_last = await publish(nc, uris, 300, seq0=50)
            await blocks_hold(nc, uris, t_last)
            by_blocks, by_raw, block_msgs, raw_msgs = await read_both(
                server.url, request(uris, t_first, t_last + MS)
            )
        finally:
            await nc.close()
        got, want = by_blocks[uris[0]].cols, by_raw[uris[0]].cols
        assert got is not None and want is not None and len(want) == 300
        np.testing.assert_array_equal(got.t, want.t)
        np.testing.assert_array_equal(got.v, want.v)
        assert block_msgs < raw_msgs / 2  # written as blocks after the restart
    finally:
        if proc is not None:
            proc.stop()
        server.close()
