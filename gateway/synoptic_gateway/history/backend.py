"""The seam between the history service and where history is stored.

A backend answers one question: the values of some channels between two times,
per channel either columns or an error, and which parts of the range it does not
hold. Two exist: the recent history on the bus (:mod:`.busbackend`) and HDB++ on
PostgreSQL (:mod:`.hdbpp`); an EPICS Archiver Appliance backend (its
``getData.json`` retrieval API) fits the same three methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from synoptic_schemas.channels import Channel
from synoptic_schemas.series import Columns


class ArchiveError(Exception):
    """The archive could not be read (its server's error, in words)."""


@dataclass
class ChannelHistory:
    """One channel's answer: columns in time order, and/or an error
    ``(code, message)`` (``truncated`` comes with the columns read so far), and
    the parts ``[start, end)`` (ns) of the range asked that this backend does not
    hold for the channel (another backend may)."""

    cols: Columns | None = None
    error: tuple[str, str] | None = None
    missing: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryRead:
    """One read asked of a backend: ``channels`` from ``t0_ns`` to ``t1_ns`` (ns
    since the epoch) for a plot ``px`` pixels wide, at most ``max_points`` values
    in all, within ``timeout`` seconds."""

    channels: Sequence[Channel]
    t0_ns: int
    t1_ns: int
    px: int
    max_points: int
    timeout: float


class HistoryBackend(Protocol):
    """Where history is read from. Guarantees: ``read`` returns an entry for every
    channel asked for, raises nothing for a channel's failure (that is its entry's
    error), keeps within ``max_points`` values per request in all and within the
    ``timeout`` it is given."""

    #: ``bus`` or ``archive``: named in the answer's ``src``
    name: str
    #: the step of its times (ns): a value stands for that whole step
    resolution_ns: int

    async def start(self) -> None:
        """Connect (may return before the store is reachable)."""

    async def close(self) -> None:
        """Release connections; ``read`` is not called afterwards."""

    async def read(self, q: HistoryRead) -> dict[str, ChannelHistory]:
        """Values of ``q.channels`` (by URI) from ``q.t0_ns`` to ``q.t1_ns``; a
        backend may reduce them already for a plot ``q.px`` pixels wide."""
