"""Which subjects of a stream stored a message in a span, mostly without asking.

Each stretch of a playback asks which of its channels' metadata (``CS_META``) and
large values (``CS_ARRAYS``) changed in its span: a batched Direct Get per stream
of each subject's last message by the span's end. Those change seldom, and 20
viewers playing back ask it some 60 times a second, each a request the bus server
serves beside the live traffic. :class:`LatestStored` remembers when each
subject's newest message was stored, as of when it last asked: a subject whose
newest message then was stored at or before a span's start stored nothing in it,
for any span that ends before then.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import STREAM_LAG_NS
from synoptic_bus.moment import last_at

#: ``last_at`` of a moment this far ahead answers each subject's newest message.
_AHEAD_NS = 3600 * 10**9


class LatestStored:
    """Per stream and subject, when its newest message was stored (None: none
    kept), as of a moment (its horizon: when it was asked, less ``lag_ns`` for
    the hosts' clocks' difference); at most ``max_subjects`` kept, those asked
    least recently dropped first."""

    def __init__(self, max_subjects: int = 65_536, lag_ns: int = STREAM_LAG_NS) -> None:
        self.max_subjects = max_subjects
        self.lag_ns = lag_ns
        #: Direct Gets made (each a batch of subjects)
        self.asked = 0
        self._known: OrderedDict[tuple[str, str], tuple[int, int | None]] = (
            OrderedDict()
        )

    async def stored_in(
        self,
        nc: NatsClient,
        stream: str,
        subjects: Sequence[str],
        t0: int,
        t1: int,
        *,
        timeout: float,
    ) -> list[str]:
        """Those of ``subjects`` with a message stored in ``(t0, t1]`` (ns, ``t1``
        not after now). Raises :class:`~synoptic_bus.store.StoreError`."""
        changed: list[str] = []
        unsure: list[str] = []  # its newest message is after the span
        stale: list[str] = []  # not known up to the span's end

        def sort(subject: str, stored: int | None) -> None:
            if stored is None or stored <= t0:
                return
            (changed if stored <= t1 else unsure).append(subject)

        for subject in subjects:
            known = self._known.get((stream, subject))
            if known is None or t1 > known[0]:
                stale.append(subject)
            else:
                self._known.move_to_end((stream, subject))
                sort(subject, known[1])
        if stale:
            started = time.time_ns()
            self.asked += 1
            newest = await last_at(
                nc, stream, stale, started + _AHEAD_NS, timeout=timeout
            )
            # a message stored after this answer has a later store time (less
            # the hosts' clocks' difference)
            horizon = started - self.lag_ns
            for subject in stale:
                found = newest.get(subject)
                stored = None if found is None else found.stored_ns
                self._known[(stream, subject)] = (horizon, stored)
                self._known.move_to_end((stream, subject))
                sort(subject, stored)
            while len(self._known) > self.max_subjects:
                self._known.popitem(last=False)
        if unsure:
            self.asked += 1
            last = await last_at(nc, stream, unsure, t1, timeout=timeout)
            changed += [x for x, m in last.items() if m.stored_ns > t0]
        return changed
