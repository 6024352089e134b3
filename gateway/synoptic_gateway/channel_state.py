"""One watched channel's state in the gateway: its subjects, NATS subscriptions,
latest value and metadata (raw bus payloads) and the groups that show it."""

from __future__ import annotations

from typing import Protocol

from synoptic_gateway.decimate import reduce_value
from synoptic_schemas.channels import Channel
from synoptic_schemas.subjects import subject_tail


class Listener(Protocol):
    """A group showing the channel: given each newer value and metadata."""

    def push_value(self, index: int, raw: bytes, t: int) -> None: ...
    def push_meta(self, index: int, raw: bytes) -> None: ...


class ChannelState:
    """One watched channel: its NATS subscription, latest value and metadata (raw
    msgpack bus payloads) and the groups that show it."""

    __slots__ = (
        "channel", "key", "listeners", "meta", "meta_key", "meta_subject", "reduced",
        "refs", "subs", "uri", "val_subject", "value",
    )  # fmt: skip

    def __init__(self, channel: Channel, prefix: str) -> None:
        self.channel = channel
        self.uri = channel.uri
        # Subjects.val/meta of the channel (one escaping of its name for the three)
        tail = subject_tail(channel)
        self.val_subject = f"{prefix}.val.{tail}"
        self.meta_subject = f"{prefix}.meta.{tail}"
        self.value: bytes | None = None
        self.key: tuple[int, int] | None = None  # (ep, seq) of value
        self.meta: bytes | None = None
        self.meta_key: tuple[int, int] | None = None  # (ep, t) of meta
        self.listeners: dict[Listener, int] = {}  # group -> its index in the group
        self.refs = 0
        #: live subscription ids (value, metadata): two literal subjects, not one
        #: ``<prefix>.*.<tail>`` wildcard, whose insert and removal make nats-server
        #: walk its whole subject cache (a 1000-channel screen's wildcard SUBs held
        #: the next store barrier 40-180 ms; literal ones 5-6 ms)
        self.subs: tuple[int, int] | None = None
        #: points -> (a value, that value reduced to them): one reduction per
        #: (channel, points) and value, whatever the groups that ask for it
        self.reduced: dict[int, tuple[bytes, bytes]] = {}

    def reduced_to(self, raw: bytes, points: int) -> bytes:
        """``raw`` (a value of this channel) reduced to ``points`` (decimate)."""
        hit = self.reduced.get(points)
        if hit is not None and hit[0] is raw:
            return hit[1]
        out = reduce_value(raw, points)
        self.reduced[points] = (raw, out)
        return out
