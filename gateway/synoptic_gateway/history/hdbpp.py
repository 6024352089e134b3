"""Older history from an HDB++ archive on PostgreSQL (psycopg 3): Tango's, and
the channels ``synoptic archiver`` writes (CA, PVA and Tango alike).

Each channel is looked up in ``att_conf`` by its URI (HDB++'s full attribute
name) and read from its data table, time-ordered, with Tango quality mapped to
severity. A read is bounded: at most ``max_points`` rows per request come back
raw; a channel with more rows in the range is aggregated by the database
(minimum and maximum per bucket, ``4 * px`` buckets) so a ten-year range costs
the gateway no more than a plot's worth of rows.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import numpy as np
import psycopg

from synoptic_bus.hdbpp import SEV_OF_QUALITY, data_time
from synoptic_gateway.history.backend import ArchiveError, ChannelHistory, HistoryRead
from synoptic_schemas.frames import ErrorCode
from synoptic_schemas.series import Columns

log = logging.getLogger(__name__)

_SEV = (
    "CASE quality "
    + " ".join(f"WHEN {q} THEN {s}" for q, s in SEV_OF_QUALITY.items())
    + " ELSE 0 END"
)
_NS = "(extract(epoch FROM data_time) * 1000000)::bigint * 1000"


def _columns(rows: list[tuple[Any, ...]]) -> Columns:
    if not rows:
        return Columns.empty()
    t, v, sev = zip(*rows, strict=True)
    return Columns(
        np.array(t, np.int64),
        np.array([np.nan if x is None else float(x) for x in v], np.float64),
        np.array(sev, np.uint8),
    )


class HdbppArchive:
    """An HDB++ PostgreSQL database as a :class:`HistoryBackend`."""

    name = "archive"
    #: its times are to the microsecond (PostgreSQL's timestamp): a row stands for
    #: that whole microsecond
    resolution_ns = 1000

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._lock = asyncio.Lock()  # one connection, one query at a time
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def start(self) -> None:
        """Nothing: the database is reached on the first read (and again after
        it was down)."""

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def _connection(self, timeout: float) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = await psycopg.AsyncConnection.connect(
                self._dsn, autocommit=True, connect_timeout=max(int(timeout), 1)
            )
        return self._conn

    async def read(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        try:
            async with asyncio.timeout(q.timeout), self._lock:
                return await self._read(q)
        except TimeoutError:
            error = (ErrorCode.TIMEOUT, f"the archive took over {q.timeout:g} s")
        except psycopg.Error as exc:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
            error = (ErrorCode.UNAVAILABLE, f"the archive: {str(exc).strip()[:200]}")
        return {c.uri: ChannelHistory(error=error) for c in q.channels}

    async def _read(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        conn = await self._connection(q.timeout)
        uris = [c.uri for c in q.channels]
        confs = await (
            await conn.execute(
                "SELECT att_name, att_conf_id, table_name FROM att_conf "
                "WHERE att_name = ANY(%s)",
                (uris,),
            )
        ).fetchall()
        known = {str(name): (int(cid), str(table)) for name, cid, table in confs}
        out = {uri: ChannelHistory(Columns.empty()) for uri in uris}
        share = max(q.max_points // max(len(known), 1), 1)
        bounds = (q.t0_ns / 1e9, q.t1_ns / 1e9)
        for uri, (conf_id, table) in known.items():
            if not table.replace("_", "").isalnum():
                continue  # never put a name that is not one into SQL
            raw = await (
                await conn.execute(
                    f"SELECT {_NS}, value_r, {_SEV} FROM {table} "
                    "WHERE att_conf_id = %s AND data_time >= to_timestamp(%s) "
                    "AND data_time <= to_timestamp(%s) ORDER BY data_time LIMIT %s",
                    (conf_id, *bounds, share + 1),
                )
            ).fetchall()
            if len(raw) <= share:
                out[uri] = ChannelHistory(_columns(raw))
                continue
            out[uri] = ChannelHistory(
                await self._buckets(conn, table, conf_id, bounds, 4 * q.px)
            )
        return out

    async def last_at(
        self, uris: list[str], at_ns: int, timeout: float
    ) -> dict[str, tuple[int, float, int]]:
        """Each channel's last row at or before ``at_ns``: ``(t_ns, value,
        severity)`` by URI (value NaN where the row has none); none for a channel
        the archive holds nothing of by then. One query per data table. Raises
        :class:`TimeoutError` and :class:`ArchiveError`."""
        if not uris:
            return {}
        async with asyncio.timeout(timeout), self._lock:
            try:
                return await self._last_at(uris, at_ns, timeout)
            except psycopg.Error as exc:
                if self._conn is not None:
                    await self._conn.close()
                    self._conn = None
                raise ArchiveError(str(exc).strip()) from exc

    async def _last_at(
        self, uris: list[str], at_ns: int, timeout: float
    ) -> dict[str, tuple[int, float, int]]:
        conn = await self._connection(timeout)
        confs = await (
            await conn.execute(
                "SELECT att_conf_id, table_name FROM att_conf WHERE att_name = ANY(%s)",
                (uris,),
            )
        ).fetchall()
        by_table: dict[str, list[int]] = {}
        for conf_id, table in confs:
            if str(table).replace("_", "").isalnum():  # never put a non-name in SQL
                by_table.setdefault(str(table), []).append(int(conf_id))
        out: dict[str, tuple[int, float, int]] = {}
        when = data_time(at_ns)
        for table, ids in by_table.items():
            rows = await (
                await conn.execute(
                    f"SELECT c.att_name, d.t, d.v, d.s FROM att_conf c "
                    f"CROSS JOIN LATERAL (SELECT {_NS} AS t, "
                    f"value_r AS v, {_SEV} AS s FROM {table} "
                    "WHERE att_conf_id = c.att_conf_id AND data_time <= %s "
                    "ORDER BY data_time DESC LIMIT 1) d "
                    "WHERE c.att_conf_id = ANY(%s)",
                    (when, ids),
                )
            ).fetchall()
            for name, t, v, sev in rows:
                out[str(name)] = (int(t), math.nan if v is None else float(v), int(sev))
        return out

    async def _buckets(
        self,
        conn: psycopg.AsyncConnection[Any],
        table: str,
        conf_id: int,
        bounds: tuple[float, float],
        buckets: int,
    ) -> Columns:
        """The first row at each bucket's minimum and at its maximum, and each
        bucket's worst severity on both, computed by the database."""
        rows = await (
            await conn.execute(
                f"""WITH d AS (
                    SELECT {_NS} AS t, value_r::double precision AS v, {_SEV} AS s,
                        width_bucket(extract(epoch FROM data_time), %s, %s, %s) AS b
                    FROM {table}
                    WHERE att_conf_id = %s AND data_time >= to_timestamp(%s)
                        AND data_time <= to_timestamp(%s))
                SELECT t, v, worst FROM (
                    SELECT DISTINCT ON (b) b, t, v, max(s) OVER (PARTITION BY b) worst
                        FROM d ORDER BY b, v ASC NULLS LAST, t) lo
                UNION
                SELECT t, v, worst FROM (
                    SELECT DISTINCT ON (b) b, t, v, max(s) OVER (PARTITION BY b) worst
                        FROM d ORDER BY b, v DESC NULLS LAST, t) hi
                ORDER BY t""",
                (*bounds, buckets, conf_id, *bounds),
            )
        ).fetchall()
        return _columns(rows)
