"""The HDB++ archiver: bus values into HDB++ tables on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import numpy as np
import psycopg

from synoptic_bus.archiver import start_archiver
from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.store import StoreConfig, ensure_store
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
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    archiver = start_archiver(nats_server.url, postgres.dsn)
    try:
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
        # EPICS channels are archived too (numbers, enum indexes); strings and
        # arrays are not
        await nc.publish(SUBJECTS.val(parse_channel("ca://SR:DCCT")), value(1.0, t))
        await nc.publish(SUBJECTS.val(parse_channel("pva://SR:MODE")), value(2, t))
        await nc.publish(SUBJECTS.val(parse_channel("ca://SR:MSG")), value("hi", t))
        wave = np.arange(1000, dtype="<f8")
        await nc.publish(SUBJECTS.val(parse_channel("ca://SR:WF")), value(wave, t))
        await nc.flush()
        try:
            async with asyncio.timeout(90):
                while await row_count(postgres.dsn, "att_scalar_devdouble") < 4:  # noqa: ASYNC110 - the database has no event for it
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
            ("ca://SR:DCCT", "att_scalar_devdouble", "", "", "", "", "ca://SR:DCCT"),
            ("pva://SR:MODE", "att_scalar_devlong64", "", "", "", "", "pva://SR:MODE"),
            ("tango://h:10000/sys/tg/1/double_scalar", "att_scalar_devdouble",
             "h:10000", "sys", "tg", "1", "double_scalar"),
            ("tango://h:10000/sys/tg/1/long_scalar", "att_scalar_devlong64",
             "h:10000", "sys", "tg", "1", "long_scalar"),
        ]  # fmt: skip
        data = await rows(
            postgres.dsn,
            "SELECT value_r, quality, e.error_desc FROM att_scalar_devdouble d "
            "LEFT JOIN att_error_desc e USING (att_error_desc_id) JOIN att_conf c "
            "USING (att_conf_id) WHERE c.att_name LIKE 'tango:%' ORDER BY data_time",
        )
        assert data == [(1.5, 0, None), (9.5, 2, None), (None, 1, "device gone")]
        async with asyncio.timeout(90):
            while await row_count(postgres.dsn, "att_scalar_devlong64") < 3:  # noqa: ASYNC110 - the database has no event for it
                await asyncio.sleep(0.1)
        longs = await rows(
            postgres.dsn, "SELECT value_r, att_error_desc_id IS NOT NULL "
            "FROM att_scalar_devlong64 JOIN att_conf c USING (att_conf_id) "
            "WHERE c.att_name LIKE 'tango:%' ORDER BY data_time",
        )  # fmt: skip
        assert longs == [(7, False), (None, True)]  # kept, the batch not lost
    except BaseException:
        print(archiver.output())  # the archiver's log beside the failure
        raise
    finally:
        archiver.stop()


async def test_what_arrives_while_the_archiver_is_down_is_archived_after(
    nats_server: NatsServer, postgres: PostgresServer, nc: NatsClient
) -> None:
    """It reads the raw history through a durable consumer: values published
    while it was stopped are written when it is back, each once."""
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())
    uri = parse_channel("ca://ARCH:RESTART")
    t = time.time_ns()
    archiver = start_archiver(nats_server.url, postgres.dsn)
    try:
        await nc.publish(SUBJECTS.val(uri), value(1.0, t))
        await nc.flush()
        sql = ("SELECT value_r FROM att_scalar_devdouble JOIN att_conf c "
               "USING (att_conf_id) WHERE c.att_name = 'ca://ARCH:RESTART' "
               "ORDER BY data_time")  # fmt: skip
        async with asyncio.timeout(90):
            while not await rows(postgres.dsn, sql):  # noqa: ASYNC110 - the database has no event for it
                await asyncio.sleep(0.1)
    finally:
        archiver.stop()
    for k in range(1, 4):  # while it is down
        await nc.publish(SUBJECTS.val(uri), value(1.0 + k, t + k * 1000))
    await nc.flush()
    archiver = start_archiver(nats_server.url, postgres.dsn)
    try:
        async with asyncio.timeout(90):
            while len(await rows(postgres.dsn, sql)) < 4:  # noqa: ASYNC110 - the database has no event for it
                await asyncio.sleep(0.1)
        assert await rows(postgres.dsn, sql) == [(1.0,), (2.0,), (3.0,), (4.0,)]
    finally:
        archiver.stop()


def test_schema_only_creates_the_tables_once_from_the_environment_dsn(
    postgres: PostgresServer,
) -> None:
    """What a deployment's init step runs before the archiver and the gateways:
    ``synoptic archiver --schema-only`` with the DSN in ``$SYNOPTIC_ARCHIVE_DSN``
    (a Secret), no NATS needed; again on every apply, changing nothing."""
    admin = f"host=127.0.0.1 port={postgres.port} user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE DATABASE hdb_init")
    dsn = f"host=127.0.0.1 port={postgres.port} user=postgres dbname=hdb_init"
    argv = [sys.executable, "-m", "synoptic_bus.cli", "archiver", "--schema-only"]
    env = {k: v for k, v in os.environ.items() if k != "SYNOPTIC_ARCHIVE_DSN"}

    def tables() -> set[str]:
        with psycopg.connect(dsn) as conn:
            found = conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public'"
            ).fetchall()
        return {name for (name,) in found}

    for _ in range(2):
        done = subprocess.run(
            argv, env={**env, "SYNOPTIC_ARCHIVE_DSN": dsn},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "HDB++ tables ready" in done.stdout
        assert {"att_conf", "att_error_desc", "att_scalar_devdouble"} <= tables()
    missing = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert missing.returncode == 2
    assert "SYNOPTIC_ARCHIVE_DSN" in missing.stderr
