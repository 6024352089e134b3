"""Builders of the frames a gateway sends (``err`` is in
:mod:`synoptic_schemas.frames.errors`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synoptic_schemas.frames.codes import PROTOCOL_VERSION, Op


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


def pong(req_id: Any) -> dict[str, Any]:
    """The answer to a ``ping``."""
    return {"op": Op.PONG, "id": req_id}


def unsub_ack(req_id: Any, sid: int) -> dict[str, Any]:
    """The answer to an ``unsub``."""
    return {"op": Op.UNSUB, "id": req_id, "sid": sid}


def bus(up: bool) -> dict[str, Any]:
    """The bus (NATS) went down or came back."""
    return {"op": Op.BUS, "up": up}


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
