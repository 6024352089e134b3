"""One subscribed channel set as the client holds it: the latest values and
metadata, which channels are stale, and the counters of what was missed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from synoptic_schemas import frames, parse_channel

UpdateCallback = Callable[["Subscription", list[int], list[Any]], None]

#: Seconds between two fresh snapshots asked for shift updates whose base is not held.
RESYNC_S = 3.0


class Client(Protocol):
    """What a subscription needs of its client
    (:class:`~synoptic_gateway.client.GatewayClient`)."""

    #: wall-clock ns at which the frame being dispatched reached this process
    received_ns: int

    async def _send_sub(self, sub: Subscription, timeout: float = ...) -> None: ...

    async def unsubscribe(self, sub: Subscription, timeout: float = ...) -> None: ...


class Subscription:
    """The live state of one subscribed channel set.

    ``channels`` is the gateway's group order (sorted normalised URIs); ``values``
    and ``metas`` hold the latest payload of each (``None`` until known);
    ``stale`` the indexes of channels with no live source (their adapter stopped
    beating: from ``src`` up false or ``snap.stale`` until an update of the
    channel or ``src`` up true).
    """

    def __init__(
        self, client: Client, uris: list[str], on_update: UpdateCallback | None
    ) -> None:
        self.client = client
        self.requested = uris
        #: channel -> most points drawn (``sub.pts``; empty: full arrays)
        self.points: dict[str, int] = {}
        #: whether it accepts array updates in the shift form (``sub.shift``)
        self.shift = False
        #: shift-form updates whose base it did not hold (each asks a snapshot)
        self.shift_misses = 0
        self._resync_at = float("-inf")
        self._resync: asyncio.Task[None] | None = None
        self.on_update = on_update
        self.sid: int | None = None
        self.channels: list[str] = []
        self.index: dict[str, int] = {}
        self.values: list[Any] = []
        self.metas: list[Any] = []
        self.stale: set[int] = set()
        #: indexes whose large values the last snapshot said follow (``snap.more``)
        self.following: set[int] = set()
        self.snapshots = 0  # snapshots received (a reconnect adds one)
        self.updates = 0
        self.missed = 0
        self.conflated = 0
        self._changed = asyncio.Event()

    def value(self, uri: str) -> Any:
        """The latest value payload of a channel (``None`` if none yet)."""
        return self.values[self.index[parse_channel(uri).uri]]

    def meta(self, uri: str) -> Any:
        return self.metas[self.index[parse_channel(uri).uri]]

    def is_stale(self, uri: str) -> bool:
        """Whether a channel's value has no live source now."""
        return self.index[parse_channel(uri).uri] in self.stale

    @property
    def stale_channels(self) -> list[str]:
        """URIs of the channels with no live source now (group order)."""
        return [self.channels[i] for i in sorted(self.stale)]

    async def wait_snapshot(self, count: int = 1, timeout: float = 10.0) -> None:
        """Wait until ``count`` snapshots have arrived."""
        async with asyncio.timeout(timeout):
            while self.snapshots < count:
                self._changed.clear()
                await self._changed.wait()

    async def wait_for(
        self, predicate: Callable[[Subscription], bool], timeout: float = 10.0
    ) -> None:
        """Wait until ``predicate(self)`` holds (checked after each frame)."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                self._changed.clear()
                await self._changed.wait()

    def _apply_snap(self, frame: dict[str, Any]) -> None:
        self.sid = frame["sid"]
        self.channels = frame["ch"]
        self.index = {uri: i for i, uri in enumerate(self.channels)}
        self.values = list(frame["val"])
        self.metas = list(frame["meta"])
        self.stale = set(frame.get("stale") or ())
        self.following = set(frame.get("more") or ())
        self.snapshots += 1
        self._changed.set()

    def _apply_upd(self, frame: dict[str, Any]) -> None:
        indexes, values = frame["i"], frame["val"]
        if self.following:
            self.following.difference_update(indexes)
        if self.shift:  # the full values, of those to apply only, in order
            kept_i, kept_v = [], []
            for i, v in zip(indexes, values, strict=False):
                full = self._unshifted(i, v)
                if full is not None:
                    self.values[i] = full
                    kept_i.append(i)
                    kept_v.append(full)
            indexes, values = kept_i, kept_v
        for i, v in zip(indexes, values, strict=False):
            self.values[i] = v
        if self.stale:  # a value clears the mark
            self.stale.difference_update(indexes)
        self.updates += len(indexes)
        if self.on_update is not None:
            self.on_update(self, indexes, values)
        self._changed.set()

    def _unshifted(self, i: int, value: dict[str, Any]) -> dict[str, Any] | None:
        """The full value of an update (``None``: not to apply): an update not
        newer in (ep, seq) than the one held is ignored; a shift form applies to
        its base only, else it is counted and a fresh snapshot asked (at most
        once per :data:`RESYNC_S`)."""
        held = self.values[i]
        if held is not None and (held["ep"], held["seq"]) >= (
            value["ep"],
            value["seq"],
        ):
            return None
        if not frames.is_shifted(value):
            return value
        full = frames.unshift(held, value)
        if full is None:
            self.shift_misses += 1
            now = time.monotonic()
            if now - self._resync_at >= RESYNC_S:
                self._resync_at = now
                self._resync = asyncio.get_running_loop().create_task(
                    self.client._send_sub(self)
                )
        return full

    def _apply_src(self, frame: dict[str, Any]) -> None:
        if frame["up"]:
            self.stale.difference_update(frame["i"])
        else:
            self.stale.update(frame["i"])
        self._changed.set()

    def _apply_meta(self, frame: dict[str, Any]) -> None:
        for i, m in zip(frame["i"], frame["meta"], strict=False):
            self.metas[i] = m
        self._changed.set()

    async def close(self) -> None:
        """Unsubscribe."""
        await self.client.unsubscribe(self)
