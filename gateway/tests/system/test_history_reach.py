"""Each channel's history is split where its sources really end: the bus answers
for as far back as its blocks reach, even where the raw history (a small byte
budget here, filled many times over) has long forgotten the values, and the
archive (a real PostgreSQL with HDB++ tables) answers only for what the bus does
not hold of that channel."""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

from synoptic_bus import hdbpp
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process
from synoptic_bus.rollup import ensure_rollup, start_rollup
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, encode, parse_channel
from synoptic_schemas.blocks import decode_block

S = 1_000_000_000
#: the raw history's byte budget: ~1 200 scalar messages
RAW_BYTES = 300_000


@pytest.fixture(scope="module")
def rollup(nats_server: NatsServer) -> Iterator[Process]:
    asyncio.run(streams_at(nats_server.url))  # it reads what the raw history stores
    proc = start_rollup(nats_server.url, "--span", "1", "--tick", "0.2")
    try:
        yield proc
    finally:
        proc.stop()


async def streams_at(url: str) -> None:
    nc = await connect(url, name="test-streams")
    try:
        await ensure_store(nc, StoreConfig())
        await ensure_history(nc, HistoryConfig(max_bytes=RAW_BYTES))
        await ensure_rollup(nc, HistoryConfig())
    finally:
        await nc.close()


async def publish(nc: NatsClient, uris: list[str], n: int) -> dict[str, np.ndarray]:
    """``n`` values per channel at ~100 Hz, stamped when published; returns each
    channel's (t, v) once the rollup's growing blocks hold the last."""
    subjects = Subjects()
    sent: dict[str, list[tuple[int, float]]] = {u: [] for u in uris}
    for i in range(n):
        t = time.time_ns()
        for k, uri in enumerate(uris):
            v = math.sin(i / 40) + k
            msg = {"ver": 1, "v": v, "t": t, "sev": 0, "st": "", "seq": i + 1,
                   "ep": 5, "c": True}  # fmt: skip
            await nc.publish(subjects.val(parse_channel(uri)), encode(msg))
            sent[uri].append((t, v))
        await asyncio.sleep(0.01)
    js = nc.jetstream()
    last = sent[uris[-1]][-1][0]
    async with asyncio.timeout(60):
        for uri in uris:
            subject = subjects.block(parse_channel(uri), "open")
            while True:
                try:
                    msg = await js.get_last_msg("CS_ROLL_OPEN", subject)
                    if decode_block(msg.data).b > last:
                        break
                except Exception:
                    pass
                await asyncio.sleep(0.1)
    return {u: np.array(s, dtype=[("t", "i8"), ("v", "f8")]) for u, s in sent.items()}


def archive(dsn: str, uri: str, times_ns: list[int], value: float) -> None:
    """HDB++ rows of ``uri`` at ``times_ns``, all ``value``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(hdbpp.schema_sql())  # type: ignore[arg-type]
        conn.execute(
            """INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id,
                   att_conf_write_id, table_name)
               SELECT %s, t.att_conf_type_id, 1, 1, 'att_scalar_devdouble'
               FROM att_conf_type t WHERE t.type = 'DEV_DOUBLE'
               ON CONFLICT DO NOTHING""",
            (uri,),
        )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO att_scalar_devdouble (att_conf_id, data_time, value_r, "
                "quality) SELECT att_conf_id, %s, %s, 0 FROM att_conf "
                "WHERE att_name = %s",
                [(hdbpp.data_time(t), value, uri) for t in times_ns],
            )


async def test_blocks_answer_beyond_the_raw_history_and_the_archive_the_rest(
    nats_server: NatsServer, nc: NatsClient, rollup: Process, postgres: PostgresServer
) -> None:
    tag = secrets.token_hex(3).upper()
    uris = [f"ca://RCH{tag}:{k}" for k in range(12)] + [f"pva://RCH{tag}:P"]
    sent = await publish(nc, uris, 300)  # 3 900 messages: the raw budget 3 times
    js = nc.jetstream()
    raw = await js.stream_info("CS_HIST")
    assert raw.state.messages < len(uris) * 300 / 2  # most were pushed out
    t_first = int(min(s["t"][0] for s in sent.values()))
    t_last = int(max(s["t"][-1] for s in sent.values()))
    # the archive holds one of the channels from a minute before (value 1000) and
    # over the bus's time too (value 2000: never drawn, the bus holds it)
    old = [t_first - (60 - k) * S for k in range(59)]  # until 2 s before
    during = list(range(t_first, t_last, S // 10))
    archive(postgres.dsn, uris[0], old, 1000.0)
    archive(postgres.dsn, uris[0], during, 2000.0)
    t0_ms, t1_ms = (t_first - 61 * S) / 1e6, (t_last + S // 1000) / 1e6
    for args in ((), ("--archive-dsn", postgres.dsn)):
        gw = start_gateway(nats_server.url, *args)
        try:
            async with GatewayClient([gw.ws_url]) as client:
                traces = await client.history(uris, t0_ms, t1_ms, px=2000)
        finally:
            gw.stop()
        for uri in uris:
            trace, want = traces[uri], sent[uri]
            assert trace.err is None, (uri, trace.err)
            assert trace.t is not None and trace.v is not None
            from_bus = trace.v < 1000
            # every value published is there: blocks reach back where raw does not
            np.testing.assert_array_equal(trace.v[from_bus], want["v"])
            np.testing.assert_allclose(trace.t[from_bus], want["t"] / 1e6, atol=1e-3)
            if uri == uris[0] and args:
                assert trace.src == "archive+bus"
                assert trace.v[~from_bus].tolist() == [1000.0] * len(old)
            else:
                assert not (~from_bus).any()
                assert trace.src in ("bus", "archive+bus")
