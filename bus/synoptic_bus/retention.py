"""How far back the bus's history reaches, per kind of value: the raw history
(values up to its message limit), the history blocks and the large values
(``synoptic bus status``, the gateway's ``/metrics``)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from nats.aio.client import Client as NatsClient
from nats.js.errors import NotFoundError

from synoptic_bus.arrays import arrays_stream_name
from synoptic_bus.history import history_stream_name, oldest
from synoptic_bus.metahistory import meta_stream_name
from synoptic_bus.rollup import rollup_stream_name


@dataclass(frozen=True)
class Retention:
    """One stream: what it keeps and how much of its window it holds now."""

    #: ``raw``, ``blocks``, ``arrays`` or ``meta``
    kind: str
    stream: str
    what: str
    storage: str
    #: the window (s; 0: no age limit)
    window_s: float
    #: seconds from the oldest message kept to now (0 when empty)
    kept_s: float
    messages: int
    bytes: int
    max_bytes: int
    #: the largest message kept (-1: no limit)
    max_msg_size: int

    @property
    def full(self) -> bool:
        """The byte budget is what limits it (not the window)."""
        return self.max_bytes > 0 and self.bytes >= 0.95 * self.max_bytes

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "full": self.full}


def _streams(prefix: str) -> list[tuple[str, str, str]]:
    return [
        ("raw", history_stream_name(prefix), "every value up to its message limit"),
        (
            "blocks",
            rollup_stream_name(prefix),
            "history blocks (many values a message)",
        ),
        (
            "arrays",
            arrays_stream_name(prefix),
            "large values (arrays, images), thinned",
        ),
        ("meta", meta_stream_name(prefix), "metadata (units, limits, labels)"),
    ]


async def retention(nc: NatsClient, prefix: str) -> list[Retention]:
    """Each history stream that exists, as it stands now."""
    js = nc.jetstream()
    now = time.time_ns()
    out: list[Retention] = []
    for kind, name, what in _streams(prefix):
        try:
            info = await js.stream_info(name)
        except NotFoundError:
            continue
        state, config = info.state, info.config
        first = await oldest(nc, name) if state.messages else None
        kept = max(now - first, 0) / 1e9 if first is not None else 0.0
        storage = getattr(config.storage, "value", str(config.storage))
        out.append(
            Retention(
                kind=kind, stream=name, what=what, storage=str(storage),
                window_s=float(config.max_age or 0), kept_s=kept,
                messages=int(state.messages), bytes=int(state.bytes),
                max_bytes=int(config.max_bytes or -1),
                max_msg_size=int(config.max_msg_size or -1),
            )
        )  # fmt: skip
    return out


def describe(r: Retention) -> str:
    """One line for people."""

    def span(s: float) -> str:
        m, sec = divmod(int(s), 60)
        h, m = divmod(m, 60)
        if h >= 48:
            return f"{h // 24} days {h % 24} h"
        return f"{h} h {m:02d} min" if h else f"{m} min {sec:02d} s"

    reach = (
        f"reaches back {span(r.kept_s)}"
        + (f" of {span(r.window_s)}" if r.window_s else "")
        + (" (byte budget full)" if r.full else "")
    )
    limit = f", messages up to {r.max_msg_size} B" if r.max_msg_size > 0 else ""
    budget = f" of {r.max_bytes / 2**20:.0f} MiB" if r.max_bytes > 0 else ""
    return (
        f"{r.stream:<10} {r.what}{limit}: {reach}; {r.messages} messages, "
        f"{r.bytes / 2**20:.1f} MiB{budget}, {r.storage} storage"
    )
