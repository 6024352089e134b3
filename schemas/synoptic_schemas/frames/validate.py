"""Checks of a decoded client frame's shape (its channel names are parsed by the
gateway), and the point sizes ``sub.pts`` are rounded up to."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from synoptic_schemas.frames.codes import (
    CLIENT_OPS,
    MAX_HIST_PX,
    MAX_ID_CHARS,
    MAX_SAFE_INT,
    MAX_TOKEN_CHARS,
    MAX_WATCH_SCREENS,
    POINT_SIZES,
    Op,
)
from synoptic_schemas.frames.errors import ErrorCode, FrameError
from synoptic_schemas.frames.rewind import validate_rewind
from synoptic_schemas.screens import NAME as SCREEN_NAME


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
        _validate_points(frame, op, req_id)
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
    elif op in (Op.AT, Op.PLAY):
        _validate_channels(frame, op, req_id)
        _validate_points(frame, op, req_id)
        validate_rewind(frame, req_id)
    elif op in (Op.HALT, Op.STEP):
        validate_rewind(frame, req_id)
    elif op == Op.WATCH:
        _validate_watch(frame, req_id)
    elif op == Op.ALARMS:
        for key in ("full", "off"):
            if not isinstance(frame.get(key, False), bool):
                raise FrameError(
                    ErrorCode.BAD_FRAME,
                    f"'alarms.{key}' must be true or false",
                    req_id=req_id,
                )
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


def _validate_points(frame: Mapping[str, Any], op: str, req_id: Any) -> None:
    """``<op>.pts`` (optional, ``sub``, ``at`` and ``play``): a map of some of
    ``ch``'s URIs to the most points the client draws of that channel's array (an
    image: the most pixels across)."""
    pts = frame.get("pts")
    if pts is None:
        return
    if not isinstance(pts, dict):
        raise FrameError(
            ErrorCode.BAD_FRAME,
            f"'{op}.pts' must be a map of channel URI to a number of points",
            req_id=req_id,
        )
    named = set(frame["ch"])
    for uri, n in pts.items():
        if not isinstance(uri, str) or uri not in named:
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'{op}.pts' names {str(uri)[:200]!r}, which is not in '{op}.ch'",
                req_id=req_id,
            )
        if (
            not isinstance(n, int)
            or isinstance(n, bool)
            or not 1 <= n <= POINT_SIZES[-1]
        ):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'{op}.pts' of {uri[:200]!r} must be an integer from 1 to "
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
