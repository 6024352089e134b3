"""One history request over the HDB++ archive (real PostgreSQL) for older ranges
and the bus's history stream (real nats-server) for recent ones."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import psycopg
import pytest

from synoptic_bus import hdbpp
from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import free_port
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import Subjects, encode, parse_channel

URI = "tango://h:10000/sys/tg/1/double_scalar"
DAY_MS = 86400e3


def archive_rows(dsn: str, start_s: float, end_s: float, step_s: float) -> int:
    """HDB++ rows of URI, value 100 + sin, from ``start_s`` to ``end_s``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(hdbpp.schema_sql())  # type: ignore[arg-type]
        conn.execute(
            """INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id,
                   att_conf_write_id, table_name)
               SELECT %s, t.att_conf_type_id, 1, 1, 'att_scalar_devdouble'
               FROM att_conf_type t WHERE t.type = 'DEV_DOUBLE'
               ON CONFLICT DO NOTHING""",
            (URI,),
        )
        cur = conn.execute(
            """INSERT INTO att_scalar_devdouble (att_conf_id, data_time, value_r, quality)
               SELECT c.att_conf_id, to_timestamp(s::float8), 100 + sin(s::float8 / 3600.0),
                   CASE WHEN sin(s::float8 / 3600.0) > 0.99 THEN 2 ELSE 0 END
               FROM att_conf c, generate_series(%s::numeric, %s::numeric, %s::numeric) s
               WHERE c.att_name = %s ON CONFLICT DO NOTHING""",
            (start_s, end_s, step_s, URI),
        )
        return cur.rowcount


async def bus_values(nc: NatsClient, n: int) -> None:
    """n recent values of URI on the bus (value -5 + i/n), 1 ms apart."""
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    subject = Subjects().val(parse_channel(URI))
    t = time.time_ns() - n * 1_000_000
    for i in range(n):
        msg = {"ver": 1, "v": -5 + i / n, "t": t + i * 1_000_000, "sev": 0, "st": "",
               "seq": i + 1, "ep": 1, "c": True}  # fmt: skip
        await nc.publish(subject, encode(msg))
    js = nc.jetstream()
    async with asyncio.timeout(30):
        while (await js.stream_info("CS_HIST")).state.messages < n:  # noqa: ASYNC110 - no event for a stream count
            await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def filled(nats_server: NatsServer, postgres: PostgresServer) -> tuple[float, int]:
    """Two days of archive (every 10 s) until an hour ago, and 500 bus values."""
    now = time.time()
    rows = archive_rows(postgres.dsn, now - 2 * 86400, now - 3600, 10.0)
    return now * 1e3, rows


async def test_one_request_spans_archive_and_bus(
    nats_server: NatsServer, postgres: PostgresServer, nc: NatsClient,
    filled: tuple[float, int],
) -> None:  # fmt: skip
    now_ms, rows = filled
    await bus_values(nc, 500)
    gw = start_gateway(nats_server.url, "--archive-dsn", postgres.dsn)
    try:
        async with GatewayClient([gw.ws_url]) as client:
            traces = await client.history([URI], now_ms - 2 * DAY_MS - 1e3,
                                          time.time() * 1e3 + 1e3, px=300)  # fmt: skip
            trace = traces[URI]
            assert trace.err is None and trace.src == "archive+bus"
            assert trace.t is not None and trace.v is not None and trace.sev is not None
            assert len(trace.t) <= 600 and np.all(np.diff(trace.t) >= 0)
            old, new = trace.v[trace.v > 50], trace.v[trace.v < 50]
            assert len(old) > 100 and len(new) >= 2  # both sources drawn (the bus's
            # half second is one bucket: its minimum and maximum)
            assert old.max() == pytest.approx(101, abs=1e-3)
            assert old.min() == pytest.approx(99, abs=1e-3)
            assert new.min() == -5 and new.max() == pytest.approx(-5 + 499 / 500)
            assert 2 in trace.sev.tolist()
            only_archive = await client.history(
                [URI], now_ms - 2 * DAY_MS, now_ms - DAY_MS, px=100
            )
            assert only_archive[URI].src == "archive" and rows > 10_000
    finally:
        gw.stop()


async def test_large_archive_ranges_are_aggregated_by_the_database(
    nats_server: NatsServer, postgres: PostgresServer, filled: tuple[float, int]
) -> None:
    now_ms, _rows = filled
    gw = start_gateway(
        nats_server.url, "--archive-dsn", postgres.dsn, "--hist-max-points", "1000"
    )
    try:
        async with GatewayClient([gw.ws_url]) as client:
            traces = await client.history(
                [URI], now_ms - 2 * DAY_MS - 1e3, now_ms - 3600e3, px=100
            )
            trace = traces[URI]
            assert trace.err is None  # not truncated: aggregated instead
            assert trace.v is not None and len(trace.v) <= 200
            assert trace.v.max() == pytest.approx(101, abs=1e-3)
            assert trace.v.min() == pytest.approx(99, abs=1e-3)
    finally:
        gw.stop()


async def test_archive_down_is_an_error_per_channel_and_the_bus_still_answers(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    await bus_values(nc, 50)
    dead = f"host=127.0.0.1 port={free_port()} user=postgres dbname=hdb"
    gw = start_gateway(nats_server.url, "--archive-dsn", dead)
    try:
        async with GatewayClient([gw.ws_url]) as client:
            now = time.time() * 1e3
            traces = await client.history([URI], now - 2 * DAY_MS, now + 1e3)
            trace = traces[URI]
            assert trace.err is not None and trace.err["code"] == "unavailable"
            assert "archive" in trace.err["msg"]
            assert trace.src == "bus" and trace.t is not None and len(trace.t) > 0
    finally:
        gw.stop()
