"""Gateway ⇄ browser WebSocket frames (protocol version 1): op names, error and
close codes, builders and validators. Pure functions, no I/O.

``docs/protocol.md`` describes every frame in words and
``json/frames.schema.json`` as JSON Schema; this module is the code of record.
Frames are maps with an ``op`` key, msgpack by default (typed arrays as ext type 1)
or JSON text (typed arrays as ``{"dtype", "shape", "b64"}``).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgpack
import numpy as np

from synoptic_schemas.codec import _ext_hook, encode, to_json_view
from synoptic_schemas.errors import ContractError, DecodeError, VersionError
from synoptic_schemas.messages import SCHEMA_VERSION
from synoptic_schemas.screens import NAME as SCREEN_NAME

PROTOCOL_VERSION: Final = 1
MAX_ID_CHARS: Final = 64
#: Integer ids, like every integer a browser reads, stay within JavaScript's safe range.
MAX_SAFE_INT: Final = 2**53 - 1
#: The widest plot a history request may ask for, in pixels.
MAX_HIST_PX: Final = 10_000
#: The point counts a subscription's ``pts`` are rounded up to: viewers of plots of
#: similar widths share one reduced array (and one group); more than the largest
#: is refused (leave the channel out of ``pts`` for its full array).
POINT_SIZES: Final = (256, 512, 1024, 2048, 4096, 8192, 16384)


class Op:
    """Frame op names."""

    # client → server
    SUB = "sub"
    UNSUB = "unsub"
    PUT = "put"
    CMD = "cmd"  # both ways: a Tango command request and its answer
    PING = "ping"
    HIST = "hist"  # both ways: the request and its answer
    WATCH = "watch"  # both ways: the request and its acknowledgement
    SCREEN = "screen"  # server: a watched screen has a new revision
    AUTH = "auth"  # both ways: a renewed token, and what the socket may now do
    # server → client
    HELLO = "hello"
    SNAP = "snap"
    UPD = "upd"
    META = "meta"
    STATS = "stats"
    ERR = "err"
    PONG = "pong"
    BUS = "bus"
    SRC = "src"


CLIENT_OPS: Final = frozenset(
    {Op.SUB, Op.UNSUB, Op.PUT, Op.CMD, Op.PING, Op.HIST, Op.WATCH, Op.AUTH}
)
#: The longest token an ``auth`` frame may carry (characters).
MAX_TOKEN_CHARS: Final = 16 * 1024
#: The most screen names one ``watch`` may name.
MAX_WATCH_SCREENS: Final = 64


class ErrorCode:
    """``err.code`` values."""

    BAD_FRAME = "bad_frame"
    BAD_CHANNEL = "bad_channel"
    TOO_MANY_CHANNELS = "too_many_channels"
    TOO_MANY_SUBS = "too_many_subscriptions"
    FRAME_TOO_BIG = "frame_too_big"
    RATE_LIMITED = "rate_limited"
    UNKNOWN_SID = "unknown_sid"
    FORBIDDEN = "forbidden"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"
    UNAUTHORIZED = "unauthorized"  # just before close 4401
    BAD_RANGE = "bad_range"  # a history request's times or width
    # per channel in a ``hist`` answer only
    TRUNCATED = "truncated"  # more values in the range than a request may read
    TIMEOUT = "timeout"  # a history backend did not answer in time


class CloseCode:
    """WebSocket close codes the gateway uses."""

    NORMAL = 1000
    GOING_AWAY = 4000  # gateway shutting down: reconnect at once, elsewhere
    SLOW_CONSUMER = 4001  # stalled past the limit: reconnect with backoff
    UNAUTHORIZED = 4401  # missing/invalid/expired token: do not retry blindly
    INTERNAL = 4500  # unexpected error: reconnect with backoff


#: Close codes after which a client should reconnect (all but auth failures).
RECONNECT_CODES: Final = frozenset(
    {1001, 1006, 1011, 1012, 1013, CloseCode.GOING_AWAY, CloseCode.SLOW_CONSUMER,
     CloseCode.INTERNAL}
)  # fmt: skip


class FrameError(ContractError):
    """A client frame that cannot be served; ``code`` is an :class:`ErrorCode`."""

    def __init__(
        self, code: str, msg: str, *, req_id: Any = None, ch: str | None = None
    ) -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.req_id = req_id
        self.ch = ch

    def frame(self) -> dict[str, Any]:
        """The ``err`` frame that answers this error."""
        return err(self.req_id, self.code, self.msg, ch=self.ch)


# ---------------------------------------------------------------- encoding


def pack(frame: Mapping[str, Any]) -> bytes:
    """Encode a frame as msgpack (numpy arrays as ext type 1)."""
    return encode(frame)


def unpack(data: bytes) -> Any:
    """Decode a msgpack frame (ext type 1 → read-only numpy arrays).

    Raises :class:`FrameError` (``bad_frame``) on malformed input.
    """
    try:
        return msgpack.unpackb(
            data, ext_hook=_ext_hook, raw=False, strict_map_key=False
        )
    except Exception as exc:  # msgpack raises a zoo of types for bad input
        raise FrameError(ErrorCode.BAD_FRAME, f"malformed msgpack: {exc}") from None


def to_json(frame: Mapping[str, Any]) -> str:
    """Encode a frame as JSON text (typed arrays as ``{"dtype","shape","b64"}``)."""
    return json.dumps(to_json_view(dict(frame)), separators=(",", ":"))


def from_json(text: str | bytes) -> Any:
    """Decode a JSON frame; :class:`FrameError` (``bad_frame``) if malformed."""
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise FrameError(ErrorCode.BAD_FRAME, f"malformed JSON: {exc}") from None


# ---------------------------------------------------------------- client frames


def _req_id(frame: Mapping[str, Any]) -> Any:
    req_id = frame.get("id")
    if req_id is None:
        return None
    if isinstance(req_id, int) and not isinstance(req_id, bool):
        if abs(req_id) <= MAX_SAFE_INT:
            return req_id
    elif isinstance(req_id, str) and len(req_id) <= MAX_ID_CHARS:
        return req_id
    raise FrameError(
        ErrorCode.BAD_FRAME,
        f"'id' must be an integer of at most 2^53-1 in magnitude or a string of at "
        f"most {MAX_ID_CHARS} characters",
    )


def validate_client_frame(frame: Any) -> dict[str, Any]:
    """Check a decoded client frame's shape (not its channel names).

    Returns the frame; raises :class:`FrameError` with code ``bad_frame`` and the
    request id when it can be read.
    """
    if not isinstance(frame, dict):
        raise FrameError(
            ErrorCode.BAD_FRAME, f"a frame must be a map, not {type(frame).__name__}"
        )
    req_id = _req_id(frame)
    op = frame.get("op")
    if op not in CLIENT_OPS:
        raise FrameError(
            ErrorCode.BAD_FRAME,
            f"unknown op {str(op)[:40]!r} (expected one of {sorted(CLIENT_OPS)})",
            req_id=req_id,
        )
    if op != Op.PING and req_id is None:
        raise FrameError(ErrorCode.BAD_FRAME, f"'{op}' needs an 'id'")
    if op == Op.SUB:
        _validate_channels(frame, op, req_id)
        _validate_points(frame, req_id)
        if not isinstance(frame.get("shift", False), bool):
            raise FrameError(
                ErrorCode.BAD_FRAME, "'sub.shift' must be true or false", req_id=req_id
            )
    elif op == Op.UNSUB:
        sid = frame.get("sid")
        if not isinstance(sid, int) or isinstance(sid, bool) or abs(sid) > MAX_SAFE_INT:
            raise FrameError(
                ErrorCode.BAD_FRAME, "'unsub.sid' must be an integer", req_id=req_id
            )
    elif op == Op.HIST:
        _validate_hist(frame, req_id)
    elif op == Op.WATCH:
        _validate_watch(frame, req_id)
    elif op == Op.PUT:
        if not isinstance(frame.get("ch"), str):
            raise FrameError(
                ErrorCode.BAD_FRAME, "'put.ch' must be a channel URI", req_id=req_id
            )
        if "v" not in frame:
            raise FrameError(ErrorCode.BAD_FRAME, "'put' needs 'v'", req_id=req_id)
    elif op == Op.AUTH:
        token = frame.get("token")
        if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'auth.token' must be a token of 1..{MAX_TOKEN_CHARS} characters",
                req_id=req_id,
            )
    elif op == Op.CMD and not isinstance(frame.get("ch"), str):
        raise FrameError(
            ErrorCode.BAD_FRAME, "'cmd.ch' must be a command URI", req_id=req_id
        )
    return frame


def round_points(n: int) -> int:
    """The size of :data:`POINT_SIZES` a request for at most ``n`` points gets
    (the smallest not below it)."""
    for size in POINT_SIZES:
        if n <= size:
            return size
    raise ValueError(f"more than {POINT_SIZES[-1]} points")


def _validate_points(frame: Mapping[str, Any], req_id: Any) -> None:
    """``sub.pts`` (optional): a map of some of ``ch``'s URIs to the most points
    the client draws of that channel's array (an image: the most pixels across)."""
    pts = frame.get("pts")
    if pts is None:
        return
    if not isinstance(pts, dict):
        raise FrameError(
            ErrorCode.BAD_FRAME,
            "'sub.pts' must be a map of channel URI to a number of points",
            req_id=req_id,
        )
    named = set(frame["ch"])
    for uri, n in pts.items():
        if not isinstance(uri, str) or uri not in named:
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'sub.pts' names {str(uri)[:200]!r}, which is not in 'sub.ch'",
                req_id=req_id,
            )
        if (
            not isinstance(n, int)
            or isinstance(n, bool)
            or not 1 <= n <= POINT_SIZES[-1]
        ):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'sub.pts' of {uri[:200]!r} must be an integer from 1 to "
                f"{POINT_SIZES[-1]}, not {str(n)[:40]!r} (leave the channel out of "
                "'pts' for its full array)",
                req_id=req_id,
                ch=uri[:200],
            )


def _number(frame: Mapping[str, Any], key: str, req_id: Any) -> float:
    value = frame.get(key)
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
    ):
        raise FrameError(
            ErrorCode.BAD_RANGE,
            f"'hist.{key}' must be a finite number (ms since the epoch), not "
            f"{str(value)[:40]!r}",
            req_id=req_id,
        )
    return float(value)


def _validate_watch(frame: Mapping[str, Any], req_id: Any) -> None:
    names = frame.get("screens")
    if not isinstance(names, list) or len(names) > MAX_WATCH_SCREENS:
        raise FrameError(
            ErrorCode.BAD_FRAME,
            f"'watch.screens' must be a list of at most {MAX_WATCH_SCREENS} screen "
            "names",
            req_id=req_id,
        )
    for name in names:
        if not isinstance(name, str) or not SCREEN_NAME.match(name):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"invalid screen name {str(name)[:80]!r} in 'watch.screens'",
                req_id=req_id,
            )


def _validate_channels(frame: Mapping[str, Any], op: str, req_id: Any) -> None:
    """``<op>.ch``: a non-empty list of channel URIs (strings)."""
    ch = frame.get("ch")
    if not isinstance(ch, list) or not ch:
        raise FrameError(
            ErrorCode.BAD_FRAME,
            f"'{op}.ch' must be a non-empty list of channel URIs",
            req_id=req_id,
        )
    for uri in ch:
        if not isinstance(uri, str):
            raise FrameError(
                ErrorCode.BAD_CHANNEL,
                f"channel URIs must be strings, not {type(uri).__name__}",
                req_id=req_id,
            )


def _validate_hist(frame: Mapping[str, Any], req_id: Any) -> None:
    _validate_channels(frame, Op.HIST, req_id)
    t0, t1 = _number(frame, "t0", req_id), _number(frame, "t1", req_id)
    if not 0 <= t0 < t1 <= MAX_SAFE_INT:
        raise FrameError(
            ErrorCode.BAD_RANGE,
            f"'hist' needs 0 <= t0 < t1 (ms since the epoch), got {t0:g} .. {t1:g}",
            req_id=req_id,
        )
    px = frame.get("px")
    if not isinstance(px, int) or isinstance(px, bool) or not 1 <= px <= MAX_HIST_PX:
        raise FrameError(
            ErrorCode.BAD_RANGE,
            f"'hist.px' must be an integer from 1 to {MAX_HIST_PX}",
            req_id=req_id,
        )


def sub(
    req_id: Any,
    channels: Sequence[str],
    pts: Mapping[str, int] | None = None,
    shift: bool = False,
) -> dict[str, Any]:
    """A ``sub`` request; ``pts`` maps channels whose arrays the client draws to
    the most points it draws of them (the gateway sends reduced arrays); ``shift``
    accepts updates of arrays in the shift form (:func:`unshift`)."""
    frame: dict[str, Any] = {"op": Op.SUB, "id": req_id, "ch": list(channels)}
    if pts:
        frame["pts"] = dict(pts)
    if shift:
        frame["shift"] = True
    return frame


#: Keys of an ``upd`` value in the shift form (``sub.shift``): it has no ``v``;
#: ``v`` is the value of seq ``base`` (same ``ep``) without its first ``sh``
#: elements, followed by ``tail``.
SHIFT: Final = "sh"
SHIFT_TAIL: Final = "tail"
SHIFT_BASE: Final = "base"


def is_shifted(value: Mapping[str, Any]) -> bool:
    """Whether an ``upd`` value is in the shift form."""
    return SHIFT in value


def unshift(held: Mapping[str, Any] | None, value: Mapping[str, Any]) -> Any:
    """The full value payload of the shift-form ``value``, given the payload the
    client holds for that channel; ``None`` when ``held`` is not its base (another
    ``ep`` or ``seq``, or not an array): the client then asks a fresh snapshot."""
    if (
        held is None
        or held.get("ep") != value.get("ep")
        or held.get("seq") != value.get(SHIFT_BASE)
    ):
        return None
    prev = held.get("v")
    tail = value[SHIFT_TAIL]
    json_view = isinstance(prev, Mapping)
    if json_view:  # the JSON view of typed arrays
        prev, tail = _typed_array(prev), _typed_array(tail)
    k = value[SHIFT]
    if (
        not isinstance(prev, np.ndarray)
        or not isinstance(tail, np.ndarray)
        or prev.ndim != 1
        or prev.dtype != tail.dtype
        or not isinstance(k, int)
        or not 0 <= k <= len(prev)
    ):
        return None
    full = {key: v for key, v in value.items() if key not in _SHIFT_KEYS}
    v = np.concatenate((prev[k:], tail))
    full["v"] = to_json_view(v) if json_view else v
    return full


def _typed_array(view: Any) -> np.ndarray | None:
    """The numpy array of a typed array's JSON view (``{"dtype", "shape", "b64"}``)."""
    try:
        dtype = np.dtype(view["dtype"]).newbyteorder("<")
        data = base64.b64decode(view["b64"])
        return np.frombuffer(data, dtype).reshape(view["shape"])
    except (KeyError, TypeError, ValueError):
        return None


_SHIFT_KEYS = frozenset({SHIFT, SHIFT_TAIL, SHIFT_BASE})


def unsub(req_id: Any, sid: int) -> dict[str, Any]:
    """An ``unsub`` request."""
    return {"op": Op.UNSUB, "id": req_id, "sid": sid}


def put(req_id: Any, channel: str, value: Any) -> dict[str, Any]:
    """A ``put`` request."""
    return {"op": Op.PUT, "id": req_id, "ch": channel, "v": value}


def watch(req_id: Any, names: Sequence[str]) -> dict[str, Any]:
    """A ``watch`` request: this socket's watched screens become ``names``."""
    return {"op": Op.WATCH, "id": req_id, "screens": list(names)}


def watch_ack(req_id: Any) -> dict[str, Any]:
    """The answer to a ``watch``."""
    return {"op": Op.WATCH, "id": req_id}


def screen(
    name: str, rev: int, by: str, at: str, deleted: bool = False
) -> dict[str, Any]:
    """A watched screen has revision ``rev`` (saved or deleted by ``by`` at ``at``);
    the client re-fetches ``GET /api/screens/{name}``."""
    return {"op": Op.SCREEN, "name": name, "rev": rev, "by": by, "at": at,
            "deleted": deleted}  # fmt: skip


def hist(
    req_id: Any, channels: Sequence[str], t0: float, t1: float, px: int
) -> dict[str, Any]:
    """A history request: ``channels`` from ``t0`` to ``t1`` (ms since the epoch),
    reduced for a plot ``px`` pixels wide."""
    return {"op": Op.HIST, "id": req_id, "ch": list(channels), "t0": t0, "t1": t1,
            "px": px}  # fmt: skip


def hist_reply(
    req_id: Any,
    t0: float,
    t1: float,
    px: int,
    channels: Sequence[str],
    series: Sequence[tuple[Any, Any, Any] | None],
    errors: Sequence[tuple[str, str] | None],
    sources: Sequence[str | None],
) -> dict[str, Any]:
    """The answer to ``hist``: per channel (in request order) the time (float64
    ms since the epoch), value (float64) and severity (uint8) typed arrays, or nil;
    an error ``{"code", "msg"}`` or nil (a channel can have both: ``truncated``
    data); where the data came from (``bus``, ``archive``, ``archive+bus``)."""
    return {
        "op": Op.HIST, "id": req_id, "t0": t0, "t1": t1, "px": px,
        "ch": list(channels),
        "t": [s[0] if s is not None else None for s in series],
        "v": [s[1] if s is not None else None for s in series],
        "sev": [s[2] if s is not None else None for s in series],
        "err": [{"code": e[0], "msg": e[1]} if e else None for e in errors],
        "src": list(sources),
    }  # fmt: skip


def ping(req_id: Any = None) -> dict[str, Any]:
    """A ``ping`` request."""
    return {"op": Op.PING, "id": req_id}


def auth(req_id: Any, token: str) -> dict[str, Any]:
    """An ``auth`` request: the socket's renewed token (same user)."""
    return {"op": Op.AUTH, "id": req_id, "token": token}


# ---------------------------------------------------------------- server frames


def hello(
    gateway_id: str,
    user: str,
    write: bool,
    limits: Mapping[str, Any],
    exp: float | None = None,
) -> dict[str, Any]:
    """The first frame after accept; ``exp``: when the token ends (Unix s)."""
    frame = {
        "op": Op.HELLO,
        "ver": PROTOCOL_VERSION,
        "gw": gateway_id,
        "user": user,
        "write": write,
        "limits": dict(limits),
    }
    if exp is not None:
        frame["exp"] = exp
    return frame


def auth_state(
    req_id: Any,
    user: str,
    *,
    write: bool,
    cmd: bool,
    screens: Sequence[str],
    exp: float | None,
    expired: bool = False,
    msg: str | None = None,
) -> dict[str, Any]:
    """What the socket may do now: the answer to an ``auth`` request (``id``),
    or unasked (``id`` null) when its token expired (``expired``, with ``msg``)."""
    frame: dict[str, Any] = {"op": Op.AUTH, "id": req_id, "user": user,
                             "write": write, "cmd": cmd, "screens": list(screens),
                             "exp": exp}  # fmt: skip
    if expired:
        frame["expired"] = True
    if msg:
        frame["msg"] = msg
    return frame


def snap(
    req_id: Any,
    sid: int,
    channels: Sequence[str],
    values: Sequence[Any],
    metas: Sequence[Any],
    stale: Sequence[int] = (),
    more: Sequence[int] = (),
) -> dict[str, Any]:
    """A snapshot (``req_id`` None when unsolicited); ``stale`` lists the indexes
    of channels with no live source, ``more`` those whose (large) values are left
    out here (``None``) and follow in ``upd`` frames of the same ``sid`` right after
    it (each key is left out when empty)."""
    frame: dict[str, Any] = {
        "op": Op.SNAP,
        "id": req_id,
        "sid": sid,
        "ch": list(channels),
        "val": list(values),
        "meta": list(metas),
    }
    if stale:
        frame["stale"] = list(stale)
    if more:
        frame["more"] = list(more)
    return frame


def upd(sid: int, indexes: Sequence[int], values: Sequence[Any]) -> dict[str, Any]:
    """A batch of value updates."""
    return {"op": Op.UPD, "sid": sid, "i": list(indexes), "val": list(values)}


def meta(sid: int, indexes: Sequence[int], metas: Sequence[Any]) -> dict[str, Any]:
    """A batch of metadata changes."""
    return {"op": Op.META, "sid": sid, "i": list(indexes), "meta": list(metas)}


def stats(sid: int, missed: int, conflated: int) -> dict[str, Any]:
    """Told to a socket that fell back to latest-value-per-channel."""
    return {"op": Op.STATS, "sid": sid, "missed": missed, "conflated": conflated}


def src(sid: int, indexes: Sequence[int], up: bool) -> dict[str, Any]:
    """These channels of group ``sid`` lost their live source (``up`` False: the
    adapter epoch of their latest value stopped beating) or have it again."""
    return {"op": Op.SRC, "sid": sid, "i": list(indexes), "up": up}


def cmd(req_id: Any, command: str, arg: Any = None) -> dict[str, Any]:
    """A ``cmd`` request: run a Tango command (``arg`` None: no argument)."""
    frame = {"op": Op.CMD, "id": req_id, "ch": command}
    return frame if arg is None else {**frame, "v": arg}


def cmd_reply(
    req_id: Any, ok: bool, err: str | None = None, msg: str | None = None,
    v: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """The answer to a ``cmd``: a put reply plus the output ``v`` (if any)."""
    frame = {**put_reply(req_id, ok, err, msg), "op": Op.CMD}
    if ok and v is not None:
        frame["v"] = v
    return frame


def put_reply(
    req_id: Any, ok: bool, err: str | None = None, msg: str | None = None
) -> dict[str, Any]:
    """The answer to a ``put``."""
    frame: dict[str, Any] = {"op": Op.PUT, "id": req_id, "ok": ok}
    if not ok:
        frame["err"] = err or "failed"
        if msg:
            frame["msg"] = msg
    return frame


def err(req_id: Any, code: str, msg: str, *, ch: str | None = None) -> dict[str, Any]:
    """An error answering a request (``req_id`` None when not tied to one)."""
    frame: dict[str, Any] = {"op": Op.ERR, "id": req_id, "code": code, "msg": msg}
    if ch is not None:
        frame["ch"] = ch
    return frame


def pong(req_id: Any) -> dict[str, Any]:
    """The answer to a ``ping``."""
    return {"op": Op.PONG, "id": req_id}


def unsub_ack(req_id: Any, sid: int) -> dict[str, Any]:
    """The answer to an ``unsub``."""
    return {"op": Op.UNSUB, "id": req_id, "sid": sid}


def bus(up: bool) -> dict[str, Any]:
    """The bus (NATS) went down or came back."""
    return {"op": Op.BUS, "up": up}


# ------------------------------------------------- forwarding bus payloads


def _versioned_map(data: bytes) -> dict[str, Any]:
    """The map of a bus payload of this schema version (nothing else checked)."""
    try:
        msg = msgpack.unpackb(data, raw=False)
    except Exception as exc:  # msgpack raises a zoo of types for bad input
        raise DecodeError(f"malformed msgpack payload: {exc}") from None
    if type(msg) is not dict:
        raise DecodeError("payload is not a map")
    ver = msg.get("ver")
    if ver != SCHEMA_VERSION:
        if type(ver) is int:
            raise VersionError(ver, SCHEMA_VERSION)
        raise DecodeError(f"payload has no valid 'ver' (got {ver!r})")
    return msg


# The layout every adapter's ``encode`` gives a scalar ValueMsg (its keys in
# ``Publisher``'s order; ``t`` a uint64 of ns; ASCII strings of up to 31 bytes): a
# payload that matches is exactly that map, so its order key is read by one C-level
# match instead of building the map (~0.45 instead of ~1.2 µs per payload, half of
# what the gateway spends per update on a burst). Anything else takes the generic
# path, with the same result and the same errors.
_ASCII_FIXSTR = b"|".join(
    bytes((0xA0 + n,)) + (b"[\x00-\x7f]{%d}" % n if n else b"") for n in range(32)
)
_UINT = rb"[\x00-\x7f]|\xcc.|\xcd..|\xce.{4}|\xcf.{8}"
_SCALAR = (  # nil, bools, all ints, floats, ASCII fixstr
    rb"[\x00-\x7f\xc0\xc2\xc3\xe0-\xff]|\xca.{4}|\xcb.{8}|\xcc.|\xcd..|\xce.{4}"
    rb"|\xcf.{8}|\xd0.|\xd1..|\xd2.{4}|\xd3.{8}|" + _ASCII_FIXSTR
)
_CANONICAL_VALUE = re.compile(
    b"\x88\xa3ver" + bytes((SCHEMA_VERSION,)) + b"\xa1v(?:" + _SCALAR + b")"
    b"\xa1t\xcf(.{8})\xa3sev[\x00-\x7f]\xa2st(?:" + _ASCII_FIXSTR + b")"
    b"\xa3seq(" + _UINT + b")\xa2ep(" + _UINT + b")\xa1c[\xc2\xc3]",
    re.DOTALL,
)
_match_canonical_value = _CANONICAL_VALUE.fullmatch
_from_bytes = int.from_bytes  # big-endian (Python >= 3.11)


def value_order(data: bytes) -> tuple[int, int, int]:
    """``(ep, seq, t)`` of a ``ValueMsg`` payload, for a forwarder that orders
    payloads and passes their bytes on: checks the schema version and these keys
    only (about half the cost of :func:`synoptic_schemas.decode_value`; typed
    arrays are not unpacked; an adapter's scalar value is not unpacked at all).
    Raises :class:`DecodeError` (or :class:`VersionError`)."""
    match = _match_canonical_value(data)
    if match is not None:
        t, seq, ep = match.groups()  # uints: one fixint byte, or a type byte + BE
        return (
            _from_bytes(ep[1:]) if len(ep) > 1 else ep[0],
            _from_bytes(seq[1:]) if len(seq) > 1 else seq[0],
            _from_bytes(t),
        )
    msg = _versioned_map(data)
    ep, seq, t = msg.get("ep"), msg.get("seq"), msg.get("t")
    if type(ep) is not int or type(seq) is not int or type(t) is not int:
        raise DecodeError("value payload needs integer 'ep', 'seq' and 't'")
    return ep, seq, t


def meta_order(data: bytes) -> tuple[int, int]:
    """``(ep, t)`` of a ``MetaMsg`` payload (which of two is newer), checking the
    schema version and these keys only, like :func:`value_order`. Raises
    :class:`DecodeError` (or :class:`VersionError`)."""
    msg = _versioned_map(data)
    ep, t = msg.get("ep"), msg.get("t")
    if type(ep) is not int or type(t) is not int:
        raise DecodeError("metadata payload needs integer 'ep' and 't'")
    return ep, t


# ------------------------------------------------- raw msgpack batch assembly

_HEAD_UPD = msgpack.packb("op") + msgpack.packb(Op.UPD)
_HEAD_META = msgpack.packb("op") + msgpack.packb(Op.META)
_K_SID, _K_I = msgpack.packb("sid"), msgpack.packb("i")
_K_VAL, _K_META = msgpack.packb("val"), msgpack.packb("meta")


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    if n < 0x10000:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def pack_batch(
    kind: str, sid: int, indexes: Sequence[int], payloads: Sequence[bytes]
) -> bytes:
    """An ``upd`` (kind ``"upd"``) or ``meta`` msgpack frame built from bus payloads
    already msgpack-encoded, without decoding them: the same bytes
    :func:`pack` would give for the decoded payloads."""
    head, key = (_HEAD_UPD, _K_VAL) if kind == Op.UPD else (_HEAD_META, _K_META)
    return b"".join(
        (
            b"\x84",
            head,
            _K_SID,
            msgpack.packb(sid),
            _K_I,
            msgpack.packb(list(indexes)),
            key,
            _array_header(len(payloads)),
            *payloads,
        )
    )


def pack_snap(
    req_id: Any,
    sid: int,
    channels: Sequence[str],
    values: Sequence[bytes | None],
    metas: Sequence[bytes | None],
    stale: Sequence[int] = (),
    more: Sequence[int] = (),
) -> bytes:
    """A ``snap`` msgpack frame built from msgpack-encoded bus payloads (``None``
    for a channel with nothing stored, or whose value follows: ``more``): the same
    bytes :func:`pack` would give."""
    nil = b"\xc0"
    tail = (msgpack.packb("stale") + msgpack.packb(list(stale))) if stale else b""
    if more:
        tail += msgpack.packb("more") + msgpack.packb(list(more))
    return b"".join(
        (
            bytes((0x80 | (6 + bool(stale) + bool(more)),)),
            msgpack.packb("op"),
            msgpack.packb(Op.SNAP),
            msgpack.packb("id"),
            msgpack.packb(req_id),
            _K_SID,
            msgpack.packb(sid),
            msgpack.packb("ch"),
            msgpack.packb(list(channels)),
            _K_VAL,
            _array_header(len(values)),
            *(v if v is not None else nil for v in values),
            _K_META,
            _array_header(len(metas)),
            *(m if m is not None else nil for m in metas),
            tail,
        )
    )


__all__ = [
    "CLIENT_OPS",
    "POINT_SIZES",
    "PROTOCOL_VERSION",
    "RECONNECT_CODES",
    "SHIFT",
    "SHIFT_BASE",
    "SHIFT_TAIL",
    "CloseCode",
    "ErrorCode",
    "FrameError",
    "Op",
    "bus",
    "cmd",
    "cmd_reply",
    "err",
    "from_json",
    "hello",
    "hist",
    "hist_reply",
    "is_shifted",
    "meta",
    "meta_order",
    "pack",
    "pack_batch",
    "pack_snap",
    "ping",
    "pong",
    "put",
    "put_reply",
    "round_points",
    "screen",
    "snap",
    "src",
    "stats",
    "sub",
    "to_json",
    "unpack",
    "unshift",
    "unsub",
    "unsub_ack",
    "upd",
    "validate_client_frame",
    "value_order",
    "watch",
    "watch_ack",
]
