"""What the hub and its groups need of one socket (:class:`Member`); the
WebSocket session (:mod:`synoptic_gateway.session`, whose outgoing half is
:mod:`synoptic_gateway.mailbox`) is one. Frames only go this way: the hub never
awaits a member."""

from __future__ import annotations

from typing import Protocol

from synoptic_gateway.batch import Batch


class Member(Protocol):
    """One socket as the hub sees it."""

    #: JSON text frames (else msgpack binary frames)
    json: bool
    #: loop time since which a send has been in progress, or None
    sending_since: float | None

    @property
    def conflating(self) -> bool:
        """Whether it is behind (latest value per channel for some group)."""
        ...

    def deliver(self, batch: Batch) -> None:
        """Queue a group's batch (or conflate it); never awaits."""
        ...

    def push_control(self, frame: bytes | str) -> None:
        """Queue a frame that must not be dropped (snapshots, bus, src)."""
        ...

    def close_slow(self) -> None:
        """Close it as too slow (a send blocked too long)."""
        ...
