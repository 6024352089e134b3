"""Builders of the frames a client sends: ``sub``, ``unsub``, ``put``, ``cmd``,
``hist``, ``watch``, ``ping``, ``auth``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synoptic_schemas.frames.codes import Op


def sub(
    req_id: Any,
    channels: Sequence[str],
    pts: Mapping[str, int] | None = None,
    shift: bool = False,
) -> dict[str, Any]:
    """A ``sub`` request; ``pts`` maps channels whose arrays the client draws to
    the most points it draws of them (the gateway sends reduced arrays); ``shift``
    accepts updates of arrays in the shift form
    (:func:`~synoptic_schemas.frames.unshift`)."""
    frame: dict[str, Any] = {"op": Op.SUB, "id": req_id, "ch": list(channels)}
    if pts:
        frame["pts"] = dict(pts)
    if shift:
        frame["shift"] = True
    return frame


def unsub(req_id: Any, sid: int) -> dict[str, Any]:
    """An ``unsub`` request."""
    return {"op": Op.UNSUB, "id": req_id, "sid": sid}


def put(req_id: Any, channel: str, value: Any) -> dict[str, Any]:
    """A ``put`` request."""
    return {"op": Op.PUT, "id": req_id, "ch": channel, "v": value}


def watch(req_id: Any, names: Sequence[str]) -> dict[str, Any]:
    """A ``watch`` request: this socket's watched screens become ``names``."""
    return {"op": Op.WATCH, "id": req_id, "screens": list(names)}


def hist(
    req_id: Any, channels: Sequence[str], t0: float, t1: float, px: int
) -> dict[str, Any]:
    """A history request: ``channels`` from ``t0`` to ``t1`` (ms since the epoch),
    reduced for a plot ``px`` pixels wide."""
    return {"op": Op.HIST, "id": req_id, "ch": list(channels), "t0": t0, "t1": t1,
            "px": px}  # fmt: skip


def cmd(req_id: Any, command: str, arg: Any = None) -> dict[str, Any]:
    """A ``cmd`` request: run a Tango command (``arg`` None: no argument)."""
    frame = {"op": Op.CMD, "id": req_id, "ch": command}
    return frame if arg is None else {**frame, "v": arg}


def ping(req_id: Any = None) -> dict[str, Any]:
    """A ``ping`` request."""
    return {"op": Op.PING, "id": req_id}


def auth(req_id: Any, token: str) -> dict[str, Any]:
    """An ``auth`` request: the socket's renewed token (same user)."""
    return {"op": Op.AUTH, "id": req_id, "token": token}
