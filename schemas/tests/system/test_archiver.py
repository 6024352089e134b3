"""The HDB++ archiver: bus values into HDB++ tables on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import sys
import time

import psycopg

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process
from synoptic_schemas import Subjects, encode, parse_channel

SUBJECTS = Subjects()


def value(v: object, t: int, sev: int = 0, c: bool = True, st: str = "") -> bytes:
    return encode({"ver": 1, "v": v, "t": t, "sev": sev, "st": st, "seq": 1, "ep": 1,
                   "c": c})  # fmt: skip


async def rows(dsn: str, sql: str) -> list[tuple]:
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        return await (await conn.execute(sql)).fetchall()  # type: ignore[arg-type]


async def row_count(dsn: str, table: str) -> int:
    return len(await rows(dsn, f"SELECT 1 FROM {table}"))


async def test_archiver_writes_hdbpp_rows(
    nats_server: NatsServer, postgres: PostgresServer, nc: NatsClient
) -> None:
    archiver = Process(
        "archiver",
        [sys.executable, "-m", "synoptic_bus.cli", "archiver", "--dsn", postgres.dsn,
         "--nats", nats_server.url, "--flush", "0.2"],
    )  # fmt: skip
    try:
        archiver.wait_for(r"archiver ready", timeout=60)
        double = parse_channel("tango://h:10000/sys/tg/1/double_scalar")
        count = parse_channel("tango://h:10000/sys/tg/1/long_scalar")
        t = time.time_ns()
        await nc.publish(SUBJECTS.val(double), value(1.5, t))
        await nc.publish(SUBJECTS.val(double), value(1.5, t))  # a duplicate
        await nc.publish(SUBJECTS.val(double), value(9.5, t + 1000, sev=2))
        await nc.publish(
            SUBJECTS.val(double), value(None, t + 2000, 3, False, "device gone")
        )
        await nc.publish(SUBJECTS.val(count), value(7, t))
        await nc.publish(SUBJECTS.val(count), value(2**63, t + 1000))  # beyond bigint
        await nc.publish(SUBJECTS.val(parse_channel("ca://NOT:TANGO")), value(1.0, t))
        await nc.flush()
        try:
            async with asyncio.timeout(90):
                while await row_count(postgres.dsn, "att_scalar_devdouble") < 3:  # noqa: ASYNC110 - the database has no event for it
                    await asyncio.sleep(0.1)
        except TimeoutError:
            raise AssertionError(
                f"rows not archived in 90 s; archiver output:\n{archiver.output()}"
            ) from None
        conf = await rows(
            postgres.dsn,
            "SELECT att_name, table_name, cs_name, domain, family, member, name "
            "FROM att_conf ORDER BY att_name",
        )
        assert conf == [
            ("tango://h:10000/sys/tg/1/double_scalar", "att_scalar_devdouble",
             "h:10000", "sys", "tg", "1", "double_scalar"),
            ("tango://h:10000/sys/tg/1/long_scalar", "att_scalar_devlong64",
             "h:10000", "sys", "tg", "1", "long_scalar"),
        ]  # fmt: skip
        data = await rows(
            postgres.dsn,
            "SELECT value_r, quality, e.error_desc FROM att_scalar_devdouble d "
            "LEFT JOIN att_error_desc e USING (att_error_desc_id) ORDER BY data_time",
        )
        assert data == [(1.5, 0, None), (9.5, 2, None), (None, 1, "device gone")]
        async with asyncio.timeout(90):
            while await row_count(postgres.dsn, "att_scalar_devlong64") < 2:  # noqa: ASYNC110 - the database has no event for it
                await asyncio.sleep(0.1)
        longs = await rows(
            postgres.dsn, "SELECT value_r, att_error_desc_id IS NOT NULL "
            "FROM att_scalar_devlong64 ORDER BY data_time",
        )  # fmt: skip
        assert longs == [(7, False), (None, True)]  # kept, the batch not lost
    except BaseException:
        print(archiver.output())  # the archiver's log beside the failure
        raise
    finally:
        archiver.stop()
