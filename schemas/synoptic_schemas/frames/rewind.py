"""Rewind frames: a screen's channels as they were at a moment (``at``), played
back from a moment at a speed (``play``, answered by ``at`` then ``pb`` frames,
stopped by ``halt``), and the time of a channel's previous or next change
(``step``). Builders for both sides and the checks of the requests.

A past value is a value map (``value.schema.json``) whose ``st``, ``seq`` and
``ep`` may be absent (where the history kept the value and its severity but not
its status: history blocks, the archive), with two optional keys: ``nk`` (true:
the value itself was not kept, an array or image the history thinned away or a
string older than the raw history; ``v`` is nil) and ``kt`` (ns: when the nearest
earlier value that was kept is from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from synoptic_schemas.frames.codes import MAX_SAFE_INT, Op
from synoptic_schemas.frames.errors import ErrorCode, FrameError

#: The fastest playback a ``play`` may ask for (times real time).
MAX_PLAY_SPEED: Final = 600.0
#: Why a playback ended (``pb.end``).
END_NOW: Final = "now"  # it reached the present: the screen may go live
END_HALT: Final = "halt"  # the client stopped it (or started another)
END_ERROR: Final = "error"  # the history could not be read (``msg`` says why)


def _moment(frame: Mapping[str, Any], req_id: Any) -> float:
    t = frame.get("t")
    if (
        not isinstance(t, int | float)
        or isinstance(t, bool)
        or not 0 <= t <= MAX_SAFE_INT
    ):
        raise FrameError(
            ErrorCode.BAD_RANGE,
            f"'{frame['op']}.t' must be a moment in ms since the epoch, not "
            f"{str(t)[:40]!r}",
            req_id=req_id,
        )
    return float(t)


def validate_rewind(frame: Mapping[str, Any], req_id: Any) -> None:
    """The shape of an ``at``, ``play``, ``halt`` or ``step`` request (the
    channels of ``at`` and ``play`` are checked like a ``sub``'s by the caller)."""
    op = frame["op"]
    if op == Op.HALT:
        play = frame.get("play")
        if not isinstance(play, int | str) or isinstance(play, bool):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                "'halt.play' must be the id of a play request",
                req_id=req_id,
            )
        return
    _moment(frame, req_id)
    if op == Op.STEP:
        if not isinstance(frame.get("ch"), str):
            raise FrameError(
                ErrorCode.BAD_FRAME, "'step.ch' must be a channel URI", req_id=req_id
            )
        if frame.get("dir") not in (-1, 1) or isinstance(frame.get("dir"), bool):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                "'step.dir' must be -1 (the previous change) or 1 (the next)",
                req_id=req_id,
            )
    if op == Op.PLAY:
        speed = frame.get("speed")
        if (
            not isinstance(speed, int | float)
            or isinstance(speed, bool)
            or not 0 < speed <= MAX_PLAY_SPEED
        ):
            raise FrameError(
                ErrorCode.BAD_FRAME,
                f"'play.speed' must be a number above 0 and at most "
                f"{MAX_PLAY_SPEED:g} (times real time)",
                req_id=req_id,
            )


# ---------------------------------------------------------------- client


def at(
    req_id: Any, channels: Sequence[str], t: float, pts: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """The values and metadata of ``channels`` at the moment ``t`` (ms)."""
    frame: dict[str, Any] = {"op": Op.AT, "id": req_id, "ch": list(channels), "t": t}
    if pts:
        frame["pts"] = dict(pts)
    return frame


def play(
    req_id: Any,
    channels: Sequence[str],
    t: float,
    speed: float,
    pts: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Play ``channels`` back from ``t`` (ms) at ``speed`` times real time."""
    frame = at(req_id, channels, t, pts)
    frame["op"] = Op.PLAY
    frame["speed"] = speed
    return frame


def halt(req_id: Any, play_id: Any) -> dict[str, Any]:
    """Stop the playback started by the ``play`` request ``play_id``."""
    return {"op": Op.HALT, "id": req_id, "play": play_id}


def step(req_id: Any, channel: str, t: float, direction: int) -> dict[str, Any]:
    """When ``channel`` changed last before ``t`` (``direction`` -1) or first
    after it (1)."""
    return {"op": Op.STEP, "id": req_id, "ch": channel, "t": t, "dir": direction}


# ---------------------------------------------------------------- server


def at_reply(
    req_id: Any,
    t: float,
    channels: Sequence[str],
    values: Sequence[Any],
    metas: Sequence[Any],
    sources: Sequence[str | None],
    errors: Sequence[Mapping[str, Any] | None],
    *,
    meta_later: Sequence[int] = (),
) -> dict[str, Any]:
    """The answer to ``at`` (and the first answer to ``play``): per channel, in
    the order asked, its past value (or nil), its metadata then (or nil), where
    the value came from (``last``, ``raw``, ``blocks``, ``arrays``, ``archive``)
    and an error (``not_kept`` with ``since``, ``bad_channel``, ``forbidden``,
    ``unavailable``, ``timeout``) or nil; ``mlate``: channels whose metadata is
    the oldest kept, later than ``t`` (none was kept from then)."""
    frame: dict[str, Any] = {
        "op": Op.AT, "id": req_id, "t": t, "ch": list(channels), "val": list(values),
        "meta": list(metas), "src": list(sources), "err": list(errors),
    }  # fmt: skip
    if meta_later:
        frame["mlate"] = list(meta_later)
    return frame


def pb(
    req_id: Any,
    t: float,
    indexes: Sequence[int],
    values: Sequence[Any],
    *,
    meta_indexes: Sequence[int] = (),
    metas: Sequence[Any] = (),
    end: str | None = None,
    msg: str | None = None,
) -> dict[str, Any]:
    """One frame of a playback: the moment it shows (ms), the channels (indexes
    into the ``at`` answer's ``ch``) whose value changed since the previous frame
    and their values then, metadata that changed; ``end`` on the last frame."""
    frame: dict[str, Any] = {"op": Op.PB, "id": req_id, "t": t, "i": list(indexes),
                             "val": list(values)}  # fmt: skip
    if meta_indexes:
        frame["mi"] = list(meta_indexes)
        frame["meta"] = list(metas)
    if end is not None:
        frame["end"] = end
        if msg:
            frame["msg"] = msg
    return frame


def halt_ack(req_id: Any, play_id: Any) -> dict[str, Any]:
    """``halt`` done (also for a playback that had ended already)."""
    return {"op": Op.HALT, "id": req_id, "play": play_id}


def step_reply(req_id: Any, channel: str, t: float | None) -> dict[str, Any]:
    """The time (ms) of the change a ``step`` asked for, or nil: none kept."""
    return {"op": Op.STEP, "id": req_id, "ch": channel, "t": t}
