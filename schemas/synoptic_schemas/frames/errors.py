"""Errors answering a request: the ``err`` frame, its codes, and
:class:`FrameError`, which carries one from where it is found to the socket."""

from __future__ import annotations

from typing import Any

from synoptic_schemas.errors import ContractError
from synoptic_schemas.frames.codes import Op


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
    # per channel in an ``at`` answer only
    NOT_KEPT = "not_kept"  # no value of the channel kept from that moment


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


def err(req_id: Any, code: str, msg: str, *, ch: str | None = None) -> dict[str, Any]:
    """An error answering a request (``req_id`` None when not tied to one)."""
    frame: dict[str, Any] = {"op": Op.ERR, "id": req_id, "code": code, "msg": msg}
    if ch is not None:
        frame["ch"] = ch
    return frame
