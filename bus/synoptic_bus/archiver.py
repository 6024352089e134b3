"""``synoptic archiver``: a small bus consumer that writes values into HDB++
tables on PostgreSQL (the demo's archive; a facility runs its own HDB++).

It reads the raw history stream ``CS_HIST`` through a durable consumer
(``synoptic-archiver``; default every channel, ``cs.val.>``: Channel Access, PV
Access and Tango alike), registers each new channel in ``att_conf`` (``att_name``
is the channel URI) and writes its numeric scalar values (numbers, enum indexes,
booleans), severity as Tango quality and disconnections as rows without a value,
in one transaction per ``--flush`` seconds, acknowledging what it wrote. Reading
the stream rather than the live subjects, it never takes the arrays and images
(``CS_HIST`` keeps values up to 4 KiB: a process taking megabytes a second of
images it does not archive would fall behind and be cut off), and it loses
nothing while it or the database is down: it goes on from its last
acknowledgement (as far back as the stream reaches). Strings are not archived.
Rows of the same channel and time (a duplicate, a redelivery) are written once.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections import deque
from typing import Any

import psycopg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import Error as JetStreamError
from nats.js.errors import NotFoundError

from synoptic_bus import hdbpp
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.demo import DemoContext, DemoProcess
from synoptic_bus.history import history_stream_name
from synoptic_bus.procs import Process
from synoptic_schemas import ContractError, Subjects, decode_value

log = logging.getLogger(__name__)

#: Rows kept waiting at most; beyond it the oldest are dropped and counted.
MAX_PENDING = 200_000
#: Payloads larger than this are arrays or images: skipped without decoding.
MAX_SCALAR_BYTES = 4096
#: The durable consumer's name on the raw history stream.
DURABLE = "synoptic-archiver"
#: Messages fetched at most per write.
BATCH = 20_000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("archiver", help="write bus values into HDB++ tables")
    p.add_argument("--nats", help="NATS URL (default $SYNOPTIC_NATS_URL)")
    p.add_argument("--prefix", default="cs", help="subject prefix")
    p.add_argument("--dsn", default=os.environ.get("SYNOPTIC_ARCHIVE_DSN"),
                   help="PostgreSQL connection string (default $SYNOPTIC_ARCHIVE_DSN)")  # fmt: skip
    p.add_argument("--subject", action="append", default=[],
                   help="value subjects to archive (repeat; default PREFIX.val.>)")  # fmt: skip
    p.add_argument("--flush", type=float, default=1.0, help="seconds between writes")
    p.add_argument("--schema-only", action="store_true",
                   help="create the HDB++ tables (idempotent) and exit")  # fmt: skip
    p.set_defaults(func=run)


class Archiver:
    """Values in, HDB++ rows out, batched."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], prefix: str) -> None:
        self._conn = conn
        self._subjects = Subjects(prefix)
        self._hist_head, self._val_head = f"{prefix}.hist.val.", f"{prefix}.val."
        self._ids: dict[str, tuple[int, str]] = {}  # uri -> (att_conf_id, table)
        self._errors: dict[str, int] = {}
        self._pending: deque[tuple[str, dict[str, Any]]] = deque()
        self.written = 0
        self.dropped = 0

    def add(self, subject: str, data: bytes) -> None:
        """A value message (its ``val`` subject, or its copy's in the raw history)."""
        if len(data) > MAX_SCALAR_BYTES:
            return
        subject = subject.replace(self._hist_head, self._val_head, 1)
        try:
            _, channel = self._subjects.parse(subject)
            value = decode_value(data)
        except ContractError as exc:
            log.debug("skipping %s: %s", subject, exc)
            return
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            self.dropped += 1
        self._pending.append((channel.uri, dict(value)))

    async def _conf(self, uri: str, value: Any) -> tuple[int, str] | None:
        known = self._ids.get(uri)
        if known is not None:
            return known
        table = hdbpp.table_for(value)
        if table is None:
            return None
        cs, domain, family, member, name = hdbpp.name_parts(uri)
        row = await (
            await self._conn.execute(
                """INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id,
                       att_conf_write_id, table_name, cs_name, domain, family, member,
                       name)
                   SELECT %s, t.att_conf_type_id, f.att_conf_format_id,
                       w.att_conf_write_id, %s, %s, %s, %s, %s, %s
                   FROM att_conf_type t, att_conf_format f, att_conf_write w
                   WHERE t.type = %s AND f.format = 'SCALAR' AND w.write = 'READ'
                   ON CONFLICT (att_name) DO UPDATE SET att_name = EXCLUDED.att_name
                   RETURNING att_conf_id, table_name""",
                (
                    uri,
                    table,
                    cs,
                    domain,
                    family,
                    member,
                    name,
                    hdbpp.type_of_table(table),
                ),
            )
        ).fetchone()
        assert row is not None
        self._ids[uri] = (int(row[0]), str(row[1]))
        return self._ids[uri]

    async def _error_id(self, text: str) -> int:
        known = self._errors.get(text)
        if known is None:
            row = await (
                await self._conn.execute(
                    """INSERT INTO att_error_desc (error_desc) VALUES (%s)
                       ON CONFLICT (error_desc) DO UPDATE SET error_desc = EXCLUDED.error_desc
                       RETURNING att_error_desc_id""",
                    (text,),
                )
            ).fetchone()
            assert row is not None
            known = self._errors[text] = int(row[0])
        return known

    async def flush(self) -> int:
        """Write what arrived since the last flush; returns the rows written.

        A write that fails puts its values back in front of what arrived meanwhile
        (still bounded by :data:`MAX_PENDING`), so the next flush retries them."""
        pending, self._pending = self._pending, deque()
        try:
            return await self._write(pending)
        except BaseException:
            self._pending.extendleft(reversed(pending))
            while len(self._pending) > MAX_PENDING:
                self._pending.popleft()
                self.dropped += 1
            raise

    async def _write(self, pending: deque[tuple[str, dict[str, Any]]]) -> int:
        rows: dict[str, list[tuple[Any, ...]]] = {}
        for uri, value in pending:
            v = value["v"]
            conf = await self._conf(uri, v if value["c"] else None) or (
                self._ids.get(uri)
            )
            if conf is None:
                continue
            conf_id, table = conf
            when = hdbpp.data_time(value["t"])
            quality = hdbpp.QUALITY_OF_SEV[min(max(int(value["sev"]), 0), 3)]
            number = v if value["c"] and isinstance(v, bool | int | float) else None
            reason = value["st"] if not value["c"] else None
            if number is not None and not hdbpp.fits(table, number):
                number, reason = None, f"value out of range of {table}"
            error = await self._error_id(reason) if reason else None
            rows.setdefault(table, []).append((conf_id, when, number, quality, error))
        async with self._conn.transaction():
            for table, batch in rows.items():
                async with self._conn.cursor() as cur:
                    await cur.executemany(
                        f"INSERT INTO {table} (att_conf_id, data_time, value_r, quality, "
                        "att_error_desc_id) VALUES (%s, %s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        batch,
                    )
        written = sum(len(b) for b in rows.values())
        self.written += written
        return written


async def ensure_schema(conn: psycopg.AsyncConnection[Any]) -> None:
    """Create the HDB++ tables if they are missing (idempotent)."""
    async with conn.transaction():
        await conn.execute(hdbpp.schema_sql())  # type: ignore[arg-type]


async def run(args: argparse.Namespace) -> int:
    if not args.dsn:
        print("synoptic archiver: give --dsn or $SYNOPTIC_ARCHIVE_DSN", file=sys.stderr)
        return 2
    try:
        conn = await psycopg.AsyncConnection.connect(
            args.dsn, autocommit=True, connect_timeout=10
        )
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split())[:300]
        print(
            f"synoptic archiver: cannot reach the database ({reason}): check --dsn "
            f"(or $SYNOPTIC_ARCHIVE_DSN) and that PostgreSQL runs",
            file=sys.stderr, flush=True,
        )  # fmt: skip
        return 2
    await ensure_schema(conn)
    if args.schema_only:
        await conn.close()
        print("HDB++ tables ready", flush=True)
        return 0
    archiver = Archiver(conn, args.prefix)
    nc = await connect(args.nats, name="synoptic-archiver")
    subjects = args.subject or [f"{args.prefix}.val.>"]
    try:
        feed = await history_feed(nc, args.prefix, subjects)
    except JetStreamError as exc:
        print(
            f"synoptic archiver: cannot read the raw history stream "
            f"{history_stream_name(args.prefix)} ({exc}): run `synoptic bus init` "
            f"with a history window",
            file=sys.stderr, flush=True,
        )  # fmt: skip
        await nc.close()
        await conn.close()
        return 2
    print(f"archiver ready: {', '.join(subjects)} into HDB++ tables", flush=True)
    last_report = time.monotonic()
    try:
        while True:
            try:
                msgs = await feed.fetch(BATCH, timeout=args.flush)
            except TimeoutError:  # nats-py's own, or asyncio's from a batch cut short
                msgs = []
            for msg in msgs:
                archiver.add(msg.subject, msg.data)
            try:
                await archiver.flush()
            except psycopg.Error as exc:
                log.warning("archive write failed: %s", exc)
            else:
                if msgs:  # AckAll: what was written, and everything before it
                    await msgs[-1].ack()
            if time.monotonic() - last_report > 60:
                last_report = time.monotonic()
                log.info("archived %d rows (%d dropped)", archiver.written,
                         archiver.dropped)  # fmt: skip
    finally:
        await nc.close()
        await conn.close()


async def history_feed(nc: NatsClient, prefix: str, subjects: list[str]) -> Any:
    """A pull subscription on the archiver's durable consumer of the raw history,
    filtered on ``subjects`` (made, or remade where its filter differs)."""
    js = nc.jetstream()
    stream = history_stream_name(prefix)
    filters = [f"{prefix}.hist.{s.removeprefix(prefix + '.')}" for s in subjects]
    config = ConsumerConfig(
        durable_name=DURABLE,
        filter_subjects=filters,
        ack_policy=AckPolicy.ALL,
        deliver_policy=DeliverPolicy.ALL,
        ack_wait=60,
        max_ack_pending=-1,
        max_waiting=4,
    )
    try:
        info = await js.consumer_info(stream, DURABLE)
    except NotFoundError:
        info = None
    if info is not None and sorted(info.config.filter_subjects or []) != sorted(
        filters
    ):
        await js.delete_consumer(stream, DURABLE)
        info = None
    if info is None:
        await js.add_consumer(stream, config)
    return await js.pull_subscribe_bind(DURABLE, stream)


def demo_components(ctx: DemoContext) -> list[DemoProcess]:
    """The demo's archiver: every channel's numeric values into HDB++."""
    if not ctx.archive_dsn:
        return []
    argv = [sys.executable, "-m", "synoptic_bus.cli", "archiver", "--dsn",
            ctx.archive_dsn, "--nats", ctx.nats_url]  # fmt: skip
    return [
        DemoProcess(
            name="archiver",
            argv=argv,
            ready=r"archiver ready",
            order=30,
            banner="CA, PVA and Tango values into HDB++ tables (trends read them "
            "beyond the bus)",
        )
    ]


def start_archiver(nats_url: str, dsn: str, *args: str) -> Process:
    """``synoptic archiver`` as a child process (tests, benchmarks), writing every
    0.2 s; returns once it reads the bus. Stop it with ``.stop()``."""
    argv = [sys.executable, "-m", "synoptic_bus.cli", "archiver", "--dsn", dsn,
            "--nats", nats_url, "--flush", "0.2", *args]  # fmt: skip
    return Process.started(f"archiver-{time.monotonic_ns()}", argv, r"archiver ready")
