"""The Tango HDB++ archive layout on PostgreSQL (the ``hdb_timescale`` schema,
without TimescaleDB: Debian has no package for it, so plain tables with the same
primary keys and ``(att_conf_id, data_time DESC)`` indexes).

``att_conf`` names each archived attribute (``att_name``, the full Tango name;
here any channel URI) and the data table its values live in
(``att_scalar_dev<type>``: ``data_time``, ``value_r``, ``value_w``, ``quality``,
``att_error_desc_id``, ``details``). Quality is Tango's: 0 VALID, 1 INVALID,
2 ALARM, 3 CHANGING, 4 WARNING. Only the scalar numeric tables are made: strings
and arrays are not archived here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

#: Tango type names (the ``att_conf_type`` table) and their numbers.
TYPES: dict[str, int] = {
    "DEV_BOOLEAN": 1, "DEV_SHORT": 2, "DEV_LONG": 3, "DEV_FLOAT": 4,
    "DEV_DOUBLE": 5, "DEV_USHORT": 6, "DEV_ULONG": 7, "DEV_STRING": 8,
    "DEV_STATE": 19, "DEV_UCHAR": 22, "DEV_LONG64": 23, "DEV_ULONG64": 24,
    "DEV_ENUM": 29,
}  # fmt: skip
#: Scalar data tables: suffix → SQL type of ``value_r``/``value_w``.
SCALAR_TABLES: dict[str, str] = {
    "devboolean": "boolean", "devuchar": "uchar", "devshort": "smallint",
    "devushort": "ushort", "devlong": "integer", "devulong": "ulong",
    "devlong64": "bigint", "devulong64": "ulong64", "devfloat": "real",
    "devdouble": "double precision", "devstate": "integer", "devenum": "smallint",
}  # fmt: skip
#: Our metadata ``dt`` → HDB++ table suffix.
DT_TABLE: dict[str, str] = {
    "f8": "devdouble", "f4": "devfloat", "i1": "devshort", "i2": "devshort",
    "u1": "devuchar", "u2": "devushort", "i4": "devlong", "u4": "devulong",
    "i8": "devlong64", "u8": "devulong64", "bool": "devboolean",
    "enum": "devenum", "state": "devstate",
}  # fmt: skip
#: Alarm severity (0-3) → Tango quality, and back (CHANGING reads as no alarm).
QUALITY_OF_SEV = (0, 4, 2, 1)
SEV_OF_QUALITY = {0: 0, 1: 3, 2: 2, 3: 0, 4: 1}


def data_time(ns: int) -> datetime:
    """The ``data_time`` of a value stamped ``ns`` nanoseconds after the epoch:
    exact integer arithmetic, truncated to the column's microseconds (through a
    float, two values 1 µs apart could round to the same instant and the second
    be dropped as a duplicate row)."""
    secs, rest = divmod(int(ns), 1_000_000_000)
    return datetime.fromtimestamp(secs, UTC) + timedelta(microseconds=rest // 1000)


def table_name(suffix: str) -> str:
    return f"att_scalar_{suffix}"


def table_for(value: Any, dt: str | None = None) -> str | None:
    """The data table of a value (its metadata type first), or None when it is
    not archived (strings, arrays)."""
    if dt in DT_TABLE:
        return table_name(DT_TABLE[dt])
    if isinstance(value, bool):
        return table_name("devboolean")
    if isinstance(value, int):
        return table_name("devulong64" if value >= 2**63 else "devlong64")
    if isinstance(value, float):
        return table_name("devdouble")
    return None


def schema_sql() -> str:
    """The DDL, idempotent (``IF NOT EXISTS``; seeds only empty lookup tables)."""
    domains = {
        "uchar": "numeric(3) CHECK (VALUE >= 0 AND VALUE <= 255)",
        "ushort": "numeric(5) CHECK (VALUE >= 0 AND VALUE <= 65535)",
        "ulong": "numeric(10) CHECK (VALUE >= 0 AND VALUE <= 4294967295)",
        "ulong64": "numeric(20) CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615)",
    }
    parts = [
        f"DO $$ BEGIN CREATE DOMAIN {name} AS {body}; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
        for name, body in domains.items()
    ]
    parts.append("""
CREATE TABLE IF NOT EXISTS att_conf_type (
    att_conf_type_id serial PRIMARY KEY, type text NOT NULL, type_num smallint NOT NULL);
CREATE TABLE IF NOT EXISTS att_conf_format (
    att_conf_format_id serial PRIMARY KEY, format text NOT NULL,
    format_num smallint NOT NULL);
CREATE TABLE IF NOT EXISTS att_conf_write (
    att_conf_write_id serial PRIMARY KEY, write text NOT NULL, write_num smallint NOT NULL);
CREATE TABLE IF NOT EXISTS att_conf (
    att_conf_id serial PRIMARY KEY,
    att_name text NOT NULL UNIQUE,
    att_conf_type_id smallint NOT NULL REFERENCES att_conf_type,
    att_conf_format_id smallint NOT NULL REFERENCES att_conf_format,
    att_conf_write_id smallint NOT NULL REFERENCES att_conf_write,
    table_name text NOT NULL,
    cs_name text NOT NULL DEFAULT '', domain text NOT NULL DEFAULT '',
    family text NOT NULL DEFAULT '', member text NOT NULL DEFAULT '',
    name text NOT NULL DEFAULT '', ttl int, hide boolean DEFAULT false);
CREATE TABLE IF NOT EXISTS att_error_desc (
    att_error_desc_id serial PRIMARY KEY, error_desc text NOT NULL UNIQUE);
""")
    types = ",".join(f"('{t}',{n})" for t, n in TYPES.items())
    parts.append(
        "INSERT INTO att_conf_type (type, type_num) SELECT * FROM (VALUES "
        f"{types}) v WHERE NOT EXISTS (SELECT 1 FROM att_conf_type);"
        "INSERT INTO att_conf_format (format, format_num) SELECT * FROM (VALUES "
        "('SCALAR',0),('SPECTRUM',1),('IMAGE',2)) v "
        "WHERE NOT EXISTS (SELECT 1 FROM att_conf_format);"
        "INSERT INTO att_conf_write (write, write_num) SELECT * FROM (VALUES "
        "('READ',0),('READ_WITH_WRITE',1),('WRITE',2),('READ_WRITE',3)) v "
        "WHERE NOT EXISTS (SELECT 1 FROM att_conf_write);"
    )
    for suffix, sql_type in SCALAR_TABLES.items():
        table = table_name(suffix)
        parts.append(f"""
CREATE TABLE IF NOT EXISTS {table} (
    att_conf_id integer NOT NULL REFERENCES att_conf,
    data_time timestamp with time zone NOT NULL,
    value_r {sql_type}, value_w {sql_type}, quality smallint,
    att_error_desc_id integer REFERENCES att_error_desc, details json,
    PRIMARY KEY (att_conf_id, data_time));
CREATE INDEX IF NOT EXISTS {table}_att_conf_id_data_time_idx
    ON {table} (att_conf_id, data_time DESC);""")
    return "\n".join(parts)


#: The integer range each integer table holds (a value outside it is stored as
#: no value, with an error description, instead of failing its batch).
INT_RANGES: dict[str, tuple[int, int]] = {
    table_name("devlong64"): (-(2**63), 2**63 - 1),
    table_name("devulong64"): (0, 2**64 - 1),
}


def fits(table: str, value: Any) -> bool:
    """Whether ``value`` can be stored in ``table``'s ``value_r``."""
    bounds = INT_RANGES.get(table)
    if bounds is None or isinstance(value, bool) or not isinstance(value, int):
        return True
    return bounds[0] <= value <= bounds[1]


def type_of_table(table: str) -> str:
    """``att_scalar_devdouble`` → ``DEV_DOUBLE``."""
    return "DEV_" + table.removeprefix("att_scalar_dev").upper()


def name_parts(uri: str) -> tuple[str, str, str, str, str]:
    """``cs_name, domain, family, member, name`` of an attribute's full name
    (``tango://host:port/d/f/m/a``); other channels keep the whole name in
    ``name``."""
    scheme, _, rest = uri.partition("://")
    if scheme == "tango":
        host, *path = rest.split("/")
        if len(path) == 4:
            return host, path[0], path[1], path[2], path[3]
    return "", "", "", "", uri
