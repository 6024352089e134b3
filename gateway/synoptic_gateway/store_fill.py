"""Snapshot fill: read the last-value store for channels a group needs, after a
barrier, and merge what it holds into their states.

Guarantees: a value published before the channel's subscription reached the
server is either in the store's answer or delivered live (the barrier, ADR 0009);
values merge by ``(ep, seq)`` like live ones (a newer one goes to the channel's
groups as an update); a failed read of part of the channels is logged and those
values arrive live.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from synoptic_bus.store import MAX_SUBJECTS_PER_REQUEST, Snapshot, StoreError
from synoptic_gateway.bus import Bus
from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.metrics import Stats
from synoptic_gateway.settings import Settings

log = logging.getLogger(__name__)

#: Reads of a store replica that answered short of the barrier before giving up.
BARRIER_RETRIES = 8
#: Seconds a barrier may take (normally < 1 ms; a NATS user not allowed to publish
#: it gets no answer at all), and before one is tried again after a failure.
BARRIER_TIMEOUT = 1.0
BARRIER_RETRY_AFTER = 60.0

Merge = Callable[[ChannelState, bytes, bytes], None]


class FillTimes:
    """How long the stages of one store read took (seconds), and how many values
    it brought that were newer than known."""

    __slots__ = ("barrier", "fetch", "merge", "newer")

    def __init__(self) -> None:
        self.barrier = self.fetch = self.merge = 0.0
        self.newer = 0


class StoreFill:
    """Reads of the last-value store for channel states; ``on_value`` and
    ``on_meta`` merge what it answers (with an empty subject: not live)."""

    def __init__(
        self,
        bus: Bus,
        settings: Settings,
        stats: Stats,
        on_value: Merge,
        on_meta: Merge,
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.stats = stats
        self._on_value = on_value
        self._on_meta = on_meta
        self._barrier_after = 0.0  # no barrier tried before (a failure backs off)

    async def fill(self, states: list[ChannelState]) -> FillTimes:
        """Read the store for ``states`` (after a barrier); newer-than-known
        values win (and go to the channels' groups as updates)."""
        subjects = [s for st in states for s in (st.val_subject, st.meta_subject)]
        times = FillTimes()
        clock = time.perf_counter
        began = clock()
        barrier = await self._store_barrier()
        started = clock()
        times.barrier = started - began
        # Requests of at most 1024 subjects, each consistent by itself, all at once:
        # merging by (ep, seq) per channel needs no consistency across requests.
        # Each also asks for the barrier's subject (never an empty 404 answer, which
        # says nothing of how far the answering replica is).
        size = MAX_SUBJECTS_PER_REQUEST - (1 if barrier else 0)
        chunks = [subjects[i : i + size] for i in range(0, len(subjects), size)]
        timeout = self.settings.snapshot_timeout
        results = await asyncio.gather(
            *(self._fetch_after(chunk, barrier, timeout) for chunk in chunks),
            return_exceptions=True,
        )
        messages: dict[str, bytes] = {}
        for result in results:
            if isinstance(result, BaseException):  # those values then arrive live
                log.warning("last-value read failed: %s", result)
            else:
                messages.update(result.messages)
        merging = clock()
        times.fetch = merging - started
        self.stats.snapshot_seconds.observe(merging - started)
        on_value, on_meta = self._on_value, self._on_meta
        get = messages.get
        newer = 0
        for state in states:
            raw = get(state.val_subject)
            if raw is not None:
                known = state.key
                on_value(state, b"", raw)
                newer += state.key is not known
            raw = get(state.meta_subject)
            if raw is not None:
                on_meta(state, b"", raw)
        times.newer = newer
        times.merge = clock() - merging
        return times

    async def _store_barrier(self) -> int:
        """Make sure the store holds every message published before the
        subscriptions sent so far; return the barrier's stream sequence (0 when
        the stream takes no barriers: then only a round trip, as before).

        A value published just before a new SUB reaches the stream but not the
        SUB; the stream's ingest may still hold it when a Direct Get answers, and
        it would then be neither in the snapshot nor live (a one-update gap). An
        acknowledged publish into the stream after the SUB is stored after it."""
        timeout = self.settings.snapshot_timeout
        if self.settings.snapshot_barrier and time.monotonic() >= self._barrier_after:
            try:
                return await self.bus.barrier(min(timeout, BARRIER_TIMEOUT))
            except StoreError as exc:  # an older stream layout, or permissions
                self._barrier_after = time.monotonic() + BARRIER_RETRY_AFTER
                log.warning(
                    "no store barrier for %.0f s (snapshots may miss one update; "
                    "does the stream take %s, may this user publish it?): %s",
                    BARRIER_RETRY_AFTER, self.bus.barrier_subject, exc,
                )  # fmt: skip
        await self.bus.flush(timeout)
        return 0

    async def _fetch_after(
        self, subjects: list[str], barrier: int, timeout: float
    ) -> Snapshot:
        """One batched read from a replica that has stored the barrier: a
        follower answering Direct Get may lag the leader; its reply says up to
        which sequence it answered (``Nats-UpTo-Sequence``), read again if short."""
        if barrier:
            subjects = [*subjects, self.bus.barrier_subject]
        snapshot = await self.bus.fetch(subjects, timeout)
        for attempt in range(BARRIER_RETRIES):
            if snapshot.up_to_seq >= barrier:
                break
            self.stats.snapshot_rereads += 1
            await asyncio.sleep(0.001 * 2**attempt)
            snapshot = await self.bus.fetch(subjects, timeout)
        else:
            if snapshot.up_to_seq < barrier:
                log.warning(
                    "store replica behind the barrier (%d < %d): snapshot may miss "
                    "an update", snapshot.up_to_seq, barrier,
                )  # fmt: skip
        return snapshot
