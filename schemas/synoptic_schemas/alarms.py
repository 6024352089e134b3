"""Alarms on the bus: the state of each alarm, requests to acknowledge and shelve
them, the alarm service's heartbeat and the audit of every request.

Pure types and decoders, no I/O (docs/bus.md, "Alarms"). An alarm is a channel
of the alarm tree (:mod:`synoptic_schemas.alarmtree`); its state is published on
``cs.alarm.st.<tail>`` at each change and the ``CS_ALARM`` stream keeps the
latest ones. Every state carries ``n``, the alarm's revision: 1, 2, 3 … for the
life of the alarm, whatever restarts; a consumer drops a state whose ``n`` is not
newer than the one it holds (the service may publish the same state twice after
losing its connection, never two different states under one ``n``).
"""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, TypedDict, cast

from synoptic_schemas.codec import decode
from synoptic_schemas.errors import DecodeError

#: What made the service publish a state.
Event = Literal["sev", "ack", "unack", "shelve", "unshelve", "nodata", "tree"]
EVENTS: Final = ("sev", "ack", "unack", "shelve", "unshelve", "nodata", "tree")
#: What a request may ask.
Op = Literal["ack", "unack", "shelve", "unshelve"]
OPS: Final = ("ack", "unack", "shelve", "unshelve")
#: Most alarms one request names.
MAX_REQUEST_CHANNELS: Final = 10_000
#: Longest reason text (shelve), user name and status text kept.
MAX_WHY_CHARS: Final = 500
MAX_WHO_CHARS: Final = 200
#: Longest a shelve may last (30 days), ns.
MAX_SHELVE_NS: Final = 30 * 86_400 * 1_000_000_000
#: The user name the service gives to what it does by itself (shelves expiring).
SYSTEM: Final = "system"


class AckInfo(TypedDict):
    by: str  # the end user who acknowledged
    t: int  # when, ns since the Unix epoch


class ShelfInfo(TypedDict):
    by: str
    t: int  # when it was shelved
    until: int  # when the shelve ends by itself, ns since the Unix epoch
    why: str


class AlarmMsg(TypedDict):
    """``cs.alarm.st.<tail>``: the state of one alarm after a change."""

    ver: int
    ch: str  # the channel URI
    area: str  # the path of its node in the alarm tree ("Plant/Vacuum")
    n: int  # the alarm's revision: +1 per published state, never restarts
    ev: str  # Event: what changed
    sev: int  # the source's current severity (3 when it has no data)
    st: str  # the source's status text ("no data" when its adapter is gone)
    c: bool  # the source is connected and its adapter alive
    lat: int  # the alarm's severity: the highest one not yet acknowledged while
    #           unacknowledged (latching), the current one once acknowledged; 0:
    #           no alarm (cleared). Never below sev.
    ackd: bool  # lat is acknowledged
    since: int  # when the alarm began (lat rose from 0), ns; 0 when cleared
    t: int  # source time of the latest transition, ns
    at: int  # when the service made this state, ns
    v: NotRequired[Any]  # the value at the latest transition (numbers, short text)
    desc: NotRequired[str]  # what the alarm means (from the tree)
    ack: NotRequired[AckInfo]  # present while ackd
    shelf: NotRequired[ShelfInfo]  # present while shelved
    who: NotRequired[str]  # the end user of an ack/unack/shelve/unshelve event
    why: NotRequired[str]  # the reason given with a shelve
    gone: NotRequired[bool]  # true: no longer an alarm (left the tree, disabled)


class AlarmRequestMsg(TypedDict):
    """``cs.alarm.req``: acknowledge, unacknowledge, shelve or unshelve alarms on
    behalf of an end user (NATS request/reply, answered by the alarm service)."""

    ver: int
    op: str  # Op
    ch: list[str]  # channel URIs, 1 .. MAX_REQUEST_CHANNELS
    who: str  # the end user
    by: str  # the requesting gateway (or tool)
    why: NotRequired[str]  # shelve: the reason (required there)
    until: NotRequired[int]  # shelve: when it ends, ns (required there)


class AlarmReplyMsg(TypedDict):
    """The answer to a request: ``ok`` when every alarm named was handled;
    ``fail`` names the others with a code (``unknown``: not an alarm of the tree;
    ``not_active``: nothing to acknowledge; ``not_acked``: nothing to
    unacknowledge; ``not_shelved``), ``err``/``msg`` a request refused whole
    (``bad_request``, ``unavailable``)."""

    ver: int
    ok: bool
    n: int  # alarms whose state changed (and was stored) by this request
    fail: NotRequired[dict[str, str]]
    err: NotRequired[str]
    msg: NotRequired[str]


class AlarmHeartbeatMsg(TypedDict):
    """``cs.alarm.hb``: the alarm service is alive and following the tree."""

    ver: int
    id: str
    t: int
    period: float
    n: int  # channels the tree holds (listed, or matched by a pattern so far)
    act: int  # active alarms (lat > 0)
    tree: int  # the tree's revision in use (0: none)


class AlarmAuditMsg(TypedDict):
    """``cs.audit.alarms``: one request that passed through a gateway, refused
    ones included (no grant, unknown alarms)."""

    ver: int
    who: str
    op: str
    ch: list[str]
    ok: bool
    t: int
    by: str
    fail: NotRequired[dict[str, str]]
    err: NotRequired[str]
    msg: NotRequired[str]
    why: NotRequired[str]
    until: NotRequired[int]


class AlarmFailure:
    """Codes of :class:`AlarmReplyMsg` ``fail`` and ``err``."""

    UNKNOWN = "unknown"
    NOT_ACTIVE = "not_active"
    NOT_ACKED = "not_acked"
    NOT_SHELVED = "not_shelved"
    BAD_REQUEST = "bad_request"
    DENIED = "denied"  # refused by the gateway: no grant for this alarm
    UNAVAILABLE = "unavailable"  # no alarm service answered


def is_active(state: AlarmMsg | dict[str, Any]) -> bool:
    """Whether a state is an alarm to list: latched or current severity above 0."""
    return bool(state.get("lat", 0)) and not state.get("gone", False)


def is_unacknowledged(state: AlarmMsg | dict[str, Any]) -> bool:
    """An active alarm nobody acknowledged, not shelved: what the header counts
    and what sounds."""
    return is_active(state) and not state.get("ackd") and "shelf" not in state


#: A state's required fields and their types.
_ALARM_FIELDS = (("ch", str), ("area", str), ("n", int), ("ev", str), ("sev", int),
                 ("st", str), ("c", bool), ("lat", int), ("ackd", bool),
                 ("since", int), ("t", int), ("at", int))  # fmt: skip


def decode_alarm(data: bytes) -> AlarmMsg:
    """Decode a ``cs.alarm.st`` state."""
    msg = decode(data)
    # msgpack gives exact types: one look at each (a gateway reads a storm's states
    # behind which a person's acknowledgement waits); the field-by-field check, with
    # its message, when one is not
    get = msg.get
    if not (
        type(get("ch")) is str and type(get("area")) is str and type(get("n")) is int
        and type(get("ev")) is str and type(get("sev")) is int
        and type(get("st")) is str and type(get("c")) is bool
        and type(get("lat")) is int and type(get("ackd")) is bool
        and type(get("since")) is int and type(get("t")) is int
        and type(get("at")) is int
    ):  # fmt: skip
        for key, kind in _ALARM_FIELDS:
            _need(msg, "alarm", key, kind)
    if not 0 <= msg["lat"] <= 3 or not 0 <= msg["sev"] <= 3:
        raise DecodeError("alarm.sev and alarm.lat must be 0..3")
    return cast(AlarmMsg, msg)


def decode_alarm_request(data: bytes, now_ns: int) -> AlarmRequestMsg:
    """Decode and check a ``cs.alarm.req`` request (``now_ns`` bounds a shelve's
    ``until``); :class:`DecodeError` saying what is wrong otherwise."""
    msg = decode(data)
    for key, kind in (("op", str), ("ch", list), ("who", str), ("by", str)):
        _need(msg, "request", key, kind)
    if msg["op"] not in OPS:
        raise DecodeError(f"request.op must be one of {', '.join(OPS)}")
    channels = msg["ch"]
    if not channels or len(channels) > MAX_REQUEST_CHANNELS:
        raise DecodeError(f"request.ch must name 1 to {MAX_REQUEST_CHANNELS} alarms")
    if not all(isinstance(c, str) and 0 < len(c) <= 1010 for c in channels):
        raise DecodeError("request.ch must be channel URIs")
    if not msg["who"] or len(msg["who"]) > MAX_WHO_CHARS:
        raise DecodeError(f"request.who must be 1 to {MAX_WHO_CHARS} characters")
    why = msg.get("why", "")
    if not isinstance(why, str) or len(why) > MAX_WHY_CHARS:
        raise DecodeError(f"request.why must be text of at most {MAX_WHY_CHARS}")
    if msg["op"] == "shelve":
        until = msg.get("until")
        if isinstance(until, bool) or not isinstance(until, int):
            raise DecodeError("a shelve needs 'until' (ns since the Unix epoch)")
        if not now_ns < until <= now_ns + MAX_SHELVE_NS:
            raise DecodeError("a shelve's 'until' must be in the next 30 days")
        if not why.strip():
            raise DecodeError("a shelve needs a reason ('why')")
    return cast(AlarmRequestMsg, msg)


def decode_alarm_reply(data: bytes) -> AlarmReplyMsg:
    """Decode the answer to a request."""
    msg = decode(data)
    _need(msg, "reply", "ok", bool)
    _need(msg, "reply", "n", int)
    return cast(AlarmReplyMsg, msg)


def _need(msg: dict[str, Any], kind: str, key: str, of: type) -> None:
    value = msg.get(key)
    if value is None or (isinstance(value, bool) and of is not bool):
        raise DecodeError(f"{kind} payload lacks {key!r} or it is not {of.__name__}")
    if not isinstance(value, of):
        raise DecodeError(f"{kind}.{key} must be {of.__name__}")


__all__ = [
    "EVENTS",
    "MAX_REQUEST_CHANNELS",
    "MAX_SHELVE_NS",
    "OPS",
    "SYSTEM",
    "AckInfo",
    "AlarmAuditMsg",
    "AlarmFailure",
    "AlarmHeartbeatMsg",
    "AlarmMsg",
    "AlarmReplyMsg",
    "AlarmRequestMsg",
    "ShelfInfo",
    "decode_alarm",
    "decode_alarm_reply",
    "decode_alarm_request",
    "is_active",
    "is_unacknowledged",
]
