"""A screen at a moment older than the raw history, through a real gateway: a
real nats-server whose raw history keeps 64 KiB and whose history blocks keep
16 KiB (the test's own publishing overflows both), the real rollup (blocks of
1 s) and the real HDB++ archiver on a real PostgreSQL. A subscriber records
every value published. An ``at`` of a moment the raw history no longer holds
answers the value the subscriber recorded then (number, source time and
severity) from the blocks (``src`` ``blocks``), and, before the oldest block
kept, from the archive (``archive``); a playback starting in the blocks' reach
gets its start from them and its first frames too, then the raw history's."""

from __future__ import annotations

import asyncio
import sys
import time
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from nats.js.errors import NotFoundError

from synoptic_bus.archiver import start_archiver
from synoptic_bus.connect import NatsClient
from synoptic_bus.moment import first_kept
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process
from synoptic_bus.rollup import start_rollup
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas import Subjects, decode, encode, parse_channel
from synoptic_schemas.blocks import decode_block
from synoptic_schemas.subjects import subject_tail

pytestmark = [pytest.mark.system, pytest.mark.timeout(300)]

URIS = [f"ca://OLDER:C{i}" for i in range(3)]
RATE = 20.0  # Hz per channel
SECONDS = 24.0  # of publishing: well over what the raw history and blocks keep
#: Moments this close to where a store's reach ends are not checked (ns).
EDGE = 1_000_000_000
_S = Subjects()


@pytest.fixture(scope="module")
def small_history(nats_server: NatsServer) -> Iterator[Process]:
    """The bus's streams with a small raw history and small blocks, the rollup
    cutting 1 s blocks."""
    init = Process(
        "bus-init",
        [sys.executable, "-m", "synoptic_bus.cli", "bus", "init", "--nats",
         nats_server.url, "--history-storage", "memory", "--history-bytes", "65536",
         "--history-blocks-bytes", "16384"],
    )  # fmt: skip
    try:
        assert init.popen.wait(60) == 0, init.output()
    finally:
        init.stop()
    rollup = start_rollup(nats_server.url, "--span", "1")
    try:
        yield rollup
    finally:
        rollup.stop()


@pytest.fixture(scope="module")
def archiver(nats_server: NatsServer, postgres: PostgresServer) -> Iterator[Process]:
    proc = start_archiver(nats_server.url, postgres.dsn)
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def archive_gateway(
    nats_server: NatsServer, postgres: PostgresServer
) -> Iterator[GatewayProc]:
    gw = start_gateway(nats_server.url, "--archive-dsn", postgres.dsn)
    try:
        yield gw
    finally:
        gw.stop()


async def publish(nc: NatsClient) -> dict[str, list[dict[str, Any]]]:
    """Every channel at RATE for SECONDS (severity changing every few values);
    returns what a subscriber recorded, per channel, in order."""
    seen: dict[str, list[dict[str, Any]]] = {u: [] for u in URIS}
    total = int(SECONDS * RATE) * len(URIS)
    all_in = asyncio.Event()

    async def on_msg(msg: Any) -> None:
        _, channel = _S.parse(msg.subject)
        seen[channel.uri].append(decode(msg.data))
        if sum(map(len, seen.values())) >= total:
            all_in.set()

    sub = await nc.subscribe("cs.val.ca.>", cb=on_msg)
    await nc.flush()
    subjects = [_S.val(parse_channel(u)) for u in URIS]
    loop = asyncio.get_running_loop()
    start = loop.time()
    for k in range(int(SECONDS * RATE)):
        t = time.time_ns() // 1000 * 1000  # whole µs: the archive keeps µs
        for i, subject in enumerate(subjects):
            msg = {"ver": 1, "v": k * 10.0 + i + 0.25, "t": t, "sev": (k // 5) % 4,
                   "st": "", "seq": k + 1, "ep": 1, "c": True}  # fmt: skip
            await nc.publish(subject, encode(msg))
        await asyncio.sleep(max(start + (k + 1) / RATE - loop.time(), 0))
    await asyncio.wait_for(all_in.wait(), 60)
    await sub.unsubscribe()
    return seen


async def settled(nc: NatsClient, dsn: str, seen: dict[str, list[dict]]) -> None:
    """Until every channel's last block closed and the archive has every row."""
    last = {u: seen[u][-1]["t"] for u in URIS}
    wanted = sum(map(len, seen.values()))
    state: tuple[Any, ...] = ()
    try:
        async with asyncio.timeout(60):
            while True:
                closed = [
                    await closed_until(
                        nc, f"cs.roll.0.{subject_tail(parse_channel(u))}"
                    )
                    for u in URIS
                ]
                async with await psycopg.AsyncConnection.connect(dsn) as conn:
                    rows = await (
                        await conn.execute(
                            "SELECT count(*) FROM att_scalar_devdouble d JOIN "
                            "att_conf c USING (att_conf_id) "
                            "WHERE c.att_name LIKE 'ca://OLDER:%'"
                        )
                    ).fetchone()
                state = (closed, last, rows, wanted)
                done = all(
                    b is not None and b > last[u]
                    for u, b in zip(URIS, closed, strict=True)
                )
                if done and rows is not None and rows[0] >= wanted:
                    return
                # no event for a block closed or a row written: polled
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(f"not settled: {state}") from None


async def closed_until(nc: NatsClient, subject: str) -> int | None:
    """The end of the newest closed block of a subject, if any."""
    try:
        msg = await nc.jetstream().get_last_msg("CS_ROLL", subject)
    except NotFoundError:
        return None
    return decode_block(msg.data or b"").b


async def reach(nc: NatsClient, uri: str) -> tuple[int, int]:
    """Where the raw history (store time of its oldest value) and the blocks
    (source time of their oldest value) of a channel begin (ns)."""
    channel = parse_channel(uri)
    raw = await first_kept(nc, "CS_HIST", _S.hist(channel))
    block = await first_kept(nc, "CS_ROLL", f"cs.roll.0.{subject_tail(channel)}")
    assert raw is not None and block is not None
    return raw.stored_ns, int(decode_block(block.data).cols.t[0])


def recorded_then(book: list[dict[str, Any]], t_ns: int) -> dict[str, Any] | None:
    """The last value the subscriber recorded with a source time by ``t_ns``."""
    i = bisect_right([m["t"] for m in book], t_ns)
    return book[i - 1] if i else None


async def test_moments_older_than_the_raw_history_come_from_blocks_then_archive(
    small_history: Process,
    archiver: Process,
    archive_gateway: GatewayProc,
    postgres: PostgresServer,
    nc: NatsClient,
) -> None:
    seen = await publish(nc)
    try:
        await settled(nc, postgres.dsn, seen)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; archiver: {archiver.output()[-3000:]}") from None
    reaches = {u: await reach(nc, u) for u in URIS}
    first = min(m["t"] for u in URIS for m in seen[u])
    last = max(m["t"] for u in URIS for m in seen[u])
    by_src: dict[str, int] = {"blocks": 0, "archive": 0}
    sevs: set[int] = set()
    got_frames: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_frame(frame: dict[str, Any]) -> None:
        if frame["op"] == "pb":
            got_frames.append(frame)
            if "end" in frame:
                ended.set()

    async with GatewayClient([archive_gateway.ws_url], on_frame=on_frame) as client:
        for t_ns in range(first + 30_000_000, last, 173_000_000):
            answer = await client.at(URIS, t_ns / 1e6)
            for i, uri in enumerate(URIS):
                raw_from, blocks_from = reaches[uri]
                if t_ns >= raw_from - EDGE:
                    continue  # the raw history's (other tests)
                want = "blocks" if t_ns >= blocks_from + EDGE else "archive"
                if want == "archive" and t_ns >= blocks_from - EDGE:
                    continue
                expected = recorded_then(seen[uri], t_ns)
                assert expected is not None
                got = answer["val"][i]
                assert got is not None, (uri, t_ns, answer["err"][i])
                assert answer["src"][i] == want, (uri, t_ns, answer["src"][i])
                assert (got["t"], got["v"], got["sev"]) == (
                    expected["t"], expected["v"], expected["sev"],
                ), (uri, t_ns, want)  # fmt: skip
                assert got["c"] is True and answer["err"][i] is None
                by_src[want] += 1
                sevs.add(got["sev"])
        # a playback from a moment in the blocks' reach: its start and its
        # first frames from the blocks, then the raw history's values
        raw_from = min(r for r, _ in reaches.values())
        blocks_from = max(b for _, b in reaches.values())
        assert raw_from - blocks_from > 3 * EDGE, (raw_from, blocks_from)
        start_ns = blocks_from + EDGE
        answer = await client.play(URIS, start_ns / 1e6, 10.0)
        assert answer["src"] == ["blocks"] * len(URIS), answer["src"]
        state = {u: answer["val"][i] for i, u in enumerate(URIS)}
        await asyncio.wait_for(ended.wait(), 60)
        assert got_frames[-1]["end"] == "now", got_frames[-1]
    compared = 0
    for frame in got_frames[:-1]:
        for i, value in zip(frame["i"], frame["val"], strict=True):
            state[URIS[i]] = value
        t_ns = int(frame["t"] * 1e6)
        if t_ns >= raw_from - EDGE:
            continue
        for uri in URIS:
            expected = recorded_then(seen[uri], t_ns)
            assert expected is not None and state[uri] is not None
            assert (state[uri]["t"], state[uri]["v"], state[uri]["sev"]) == (
                expected["t"], expected["v"], expected["sev"],
            ), (uri, frame["t"])  # fmt: skip
            compared += 1
    assert compared >= 10 * len(URIS), compared
    assert by_src["blocks"] >= 10 and by_src["archive"] >= 10, by_src
    assert len(sevs) >= 3, sevs
