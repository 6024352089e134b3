"""Bus payload shapes (msgpack maps with short keys), version 1.

Every payload carries ``ver``, the schema major version. Adding an optional key is a
compatible change and keeps ``ver``; removing or changing the meaning of a key bumps
it, and consumers reject a major version they do not know (:class:`VersionError`).
The JSON Schema files in ``schemas/json/`` describe the same shapes.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NotRequired, TypedDict

SCHEMA_VERSION = 1


class Severity(IntEnum):
    """Alarm severity, EPICS semantics; Tango quality is mapped onto it."""

    NONE = 0
    MINOR = 1
    MAJOR = 2
    INVALID = 3


class ValueMsg(TypedDict):
    """``cs.val.*``: one change of a channel's value."""

    ver: int
    v: Any  # scalar, str, enum index, list of str, numpy array (ext type 1), or a map
    # (table columns, structure fields); None when disconnected or not publishable
    t: int  # source timestamp, ns since the Unix epoch
    sev: int  # Severity
    st: str  # status text: EPICS alarm status, Tango quality, or why disconnected
    seq: int  # per-channel sequence number, starts at 1 for each adapter epoch
    ep: int  # adapter start epoch (ms since the Unix epoch), pairs with seq
    c: bool  # source connected; False comes with sev 3 and v None


class SevMsg(TypedDict):
    """``cs.sev.*``: a channel's severity, status or connection changed (published
    beside the value that changed it, with the same ``seq`` and ``ep``; the first
    value of a channel in an adapter epoch is a transition too)."""

    ver: int
    sev: int  # Severity
    st: str  # status text, as in the value
    c: bool  # source connected
    t: int  # source timestamp of the value, ns since the Unix epoch
    seq: int  # the value's seq
    ep: int  # the value's ep
    v: NotRequired[Any]  # the value when it is a number, bool or short string


class MetaMsg(TypedDict):
    """``cs.meta.*``: a channel's metadata, on connect and whenever it changes."""

    ver: int
    dt: str  # f8 f4 i1..i8 u1..u8 bool str enum state table struct
    shape: list[int]  # [] scalar, [n] spectrum/waveform (max length), [h, w(, 3)] image
    w: bool  # writable by the adapter's credentials
    t: int  # when the metadata was read, ns since the Unix epoch
    ep: int
    unit: NotRequired[str]
    prec: NotRequired[int]
    disp: NotRequired[list[float]]  # [lo, hi] display limits
    warn: NotRequired[list[float]]  # [lo, hi] warning (minor) limits
    alarm: NotRequired[list[float]]  # [lo, hi] alarm (major) limits
    ctrl: NotRequired[list[float]]  # [lo, hi] control (write) limits
    labels: NotRequired[list[str]]  # enum / DevState labels, index = value
    desc: NotRequired[str]
    native: NotRequired[str]  # the source's own type name (DBR_DOUBLE, DevDouble …)
    cols: NotRequired[list[dict[str, str]]]  # table columns: name, label, dt
    img: NotRequired[dict[str, str]]  # image: {"color": mono|bayer|rgb}


class PutMsg(TypedDict):
    """``cs.put.*`` request: write ``v`` to the channel."""

    ver: int
    v: Any
    who: NotRequired[str]  # the principal on whose behalf the write is made
    timeout: NotRequired[float]  # seconds the adapter may wait for completion


class PutReplyMsg(TypedDict):
    """Reply to a put request."""

    ver: int
    ok: bool
    err: NotRequired[str]  # PutError code when not ok
    msg: NotRequired[str]  # human-readable detail


class CmdMsg(TypedDict):
    """``cs.cmd.*`` request: run a Tango command, with argument ``v`` when the
    command takes one (converted to its declared argument type by the adapter)."""

    ver: int
    v: NotRequired[Any]
    who: NotRequired[str]
    timeout: NotRequired[float]


class CmdReplyMsg(TypedDict):
    """Reply to a command request: a put reply plus the command's output ``v``
    (encoded like values; absent for a command without output)."""

    ver: int
    ok: bool
    v: NotRequired[Any]
    err: NotRequired[str]  # PutError code when not ok
    msg: NotRequired[str]


class PutError:
    """Codes of ``PutReplyMsg.err`` and ``CmdReplyMsg.err``."""

    TYPE = "type"  # value cannot be converted to the channel's type
    ACCESS = "access"  # channel is read-only or write not permitted
    TIMEOUT = "timeout"  # the source did not complete in time
    DISCONNECTED = "disconnected"  # the source is not connected
    UNKNOWN = "unknown"  # no such channel
    DENIED = "denied"  # refused by the gateway's authorisation
    FAILED = "failed"  # the source refused it (Tango DevFailed …)
    BAD_REQUEST = "bad_request"  # the request could not be decoded


class WantMsg(TypedDict):
    """``cs.want.<proto>``: a consumer needs these channels for ``lease`` seconds."""

    ver: int
    ch: list[str]  # channel URIs
    lease: float
    by: str  # id of the announcing consumer (gateway instance)


class HeartbeatMsg(TypedDict):
    """``cs.hb.<adapter>``: an adapter instance is alive."""

    ver: int
    id: str
    proto: str
    ep: int
    t: int
    period: float  # seconds between heartbeats; consumers call an adapter gone after 3
    n: int  # channels monitored
    conn: int  # channels connected


class AuditMsg(TypedDict):
    """``cs.audit.<proto>``: one write (or command) that passed through a gateway."""

    ver: int
    who: str
    ch: str
    v: Any
    ok: bool
    op: NotRequired[str]  # "cmd" for a command (``ch`` names it); absent: a put
    err: NotRequired[str]
    msg: NotRequired[str]
    t: int
    by: str  # gateway instance id
