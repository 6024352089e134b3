"""Large values in history: arrays and images, kept thinned in a stream of their own.

The raw history (``CS_HIST``, :mod:`synoptic_bus.history`) keeps values up to its
``max_value_bytes`` (4 KiB with headers). A larger value (a waveform, a spectrum,
an image) would fill its byte budget in seconds and push every scalar out, so that
stream refuses them, and the rollup keeps them here instead: stream ``CS_ARRAYS``,
subjects ``cs.hist.arr.<tail>``, each message the value payload exactly as the
adapter published it.

Thinning: every channel with large values gets an equal share of the stream's
bytes over its window (:class:`ArrayThinner`); a value is kept when the channel's
share accrued since its last kept value pays for it. So every such channel reaches
back the whole window, a small waveform at its full rate and a 2 MB image every
minute or so, and no channel pushes another out.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nats.aio.client import Client as NatsClient
from nats.js.api import DiscardPolicy, StorageType, StreamConfig

from synoptic_bus.history import HistoryConfig
from synoptic_bus.store import ensure_stream, stream_name

log = logging.getLogger(__name__)

#: Bytes of large values kept by default.
DEFAULT_ARRAY_BYTES = 1 << 30
#: Share of the stream's bytes the thinning plans to fill (the rest is headroom,
#: so the byte limit never discards what the window still holds).
FILL = 0.9


def arrays_stream_name(prefix: str) -> str:
    """``cs`` → ``CS_ARRAYS``."""
    return stream_name(prefix).removesuffix("_LAST") + "_ARRAYS"


@dataclass(frozen=True)
class ArraysConfig:
    """The large-value stream beside ``history``'s raw stream: its window, storage
    and replicas; ``max_bytes`` in all (default :data:`DEFAULT_ARRAY_BYTES`)."""

    history: HistoryConfig
    max_bytes: int | None = None

    @property
    def stream(self) -> str:
        return arrays_stream_name(self.history.prefix)

    @property
    def budget(self) -> int:
        return DEFAULT_ARRAY_BYTES if self.max_bytes is None else self.max_bytes

    def stream_config(self) -> StreamConfig:
        h = self.history
        return StreamConfig(
            name=self.stream,
            description="Synoptic history of large values (arrays, images), thinned",
            subjects=[f"{h.prefix}.hist.arr.>"],
            storage=StorageType.MEMORY if h.storage == "memory" else StorageType.FILE,
            num_replicas=h.replicas,
            max_age=h.window_s,
            max_bytes=self.budget,
            max_msg_size=-1,
            discard=DiscardPolicy.OLD,
            allow_direct=True,
        )


async def ensure_arrays(
    nc: NatsClient, config: ArraysConfig, *, update: bool = True
) -> None:
    """Create the large-value stream or (``update``) apply ``config``'s limits
    (idempotent; storage is kept as it is)."""
    await ensure_stream(
        nc, config.stream_config(), "large-value", update=update, storage_asked=False
    )


@dataclass
class _Share:
    credit: float
    last: float


class ArrayThinner:
    """Which large values to keep: each channel seen within the window earns
    ``FILL × budget / window / channels`` bytes per second; a value is kept when the
    channel's credit covers its size (a channel's first value always is). Credit
    never exceeds the size of the value asked about, so a quiet channel does not
    save up a burst."""

    def __init__(self, budget: int, window_s: float) -> None:
        self.budget = budget
        self.window_s = window_s
        self._shares: dict[str, _Share] = {}
        self._counted_at = float("-inf")
        self._active = 1
        self.kept = 0
        self.thinned = 0

    def rate(self) -> float:
        """Bytes per second each channel may keep now."""
        return FILL * self.budget / self.window_s / max(self._active, 1)

    def _recount(self, now: float) -> None:
        """Channels seen within the window (and forget the others): once a second."""
        if now - self._counted_at < 1.0:
            return
        self._counted_at = now
        horizon = now - self.window_s
        for key in [k for k, s in self._shares.items() if s.last < horizon]:
            del self._shares[key]
        self._active = max(len(self._shares), 1)

    def keep(self, key: str, size: int, now: float) -> bool:
        """Whether to keep a value of ``size`` bytes of channel ``key`` arriving at
        ``now`` (monotonic seconds)."""
        self._recount(now)
        share = self._shares.get(key)
        if share is None:  # new, or back after longer than the window
            self._shares[key] = _Share(0.0, now)
            self._active = len(self._shares)
            self.kept += 1
            return True
        share.credit = min(share.credit + (now - share.last) * self.rate(), size)
        share.last = now
        if share.credit >= size:
            share.credit -= size
            self.kept += 1
            return True
        self.thinned += 1
        return False
