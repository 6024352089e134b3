"""One alarm's state and the rules that change it (pure: no I/O, no clock).

The rules, after the EPICS alarm handler and Phoebus:

- ``lat``, the alarm's severity, latches: while unacknowledged it is the highest
  severity the source had since the alarm began, so an alarm whose source cleared
  stays listed until someone acknowledges it (a channel with ``latch`` off follows
  its source instead).
- Acknowledging sets ``lat`` to the source's current severity: an alarm whose
  source has cleared is then gone; one still in alarm stays listed, acknowledged,
  and follows its source down. A source rising above the acknowledged severity
  makes the alarm unacknowledged again.
- ``lat`` is never below the source's severity; the alarm is active while
  ``lat`` > 0 and began (``since``) when ``lat`` rose from 0.
- A source without data (disconnected, or its adapter gone) has severity 3
  (INVALID): an alarm, never a cleared one.
- Shelving hides an alarm from the unacknowledged count and the sound until a
  time; the state goes on changing underneath.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synoptic_schemas.alarms import AckInfo, AlarmFailure, AlarmMsg, ShelfInfo

INVALID = 3
NO_DATA = "no data"


@dataclass(slots=True)
class Alarm:
    """The state of one alarm (one channel of the tree)."""

    ch: str
    area: str
    latch: bool = True
    desc: str = ""
    n: int = 0  # revision of the last state published (0: none yet)
    sev: int = 0
    st: str = ""
    c: bool = True
    v: Any = None
    lat: int = 0
    ackd: bool = False
    since: int = 0
    t: int = 0
    ack: AckInfo | None = None
    shelf: ShelfInfo | None = None
    gone: bool = False
    #: a source state has been applied (from the feed, the store or a reload)
    known: bool = False
    #: the source transition applied last: its adapter epoch and seq, and its
    #: sequence in the transition stream (0: not from the stream)
    ep: int = 0
    seq: int = 0
    sseq: int = 0
    #: the source's own last state (sev, st, c, t, v): what a no-data spell hides
    src: tuple[int, str, bool, int, Any] | None = None
    #: shown as no data because its adapter stopped beating
    no_data_shown: bool = False
    #: the alarm's state subject (made once, when first needed)
    subject: str = ""
    #: what the last published state said (None: nothing published yet)
    published: tuple[Any, ...] | None = field(default=None, repr=False)

    # -- what consumers see ---------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.lat > 0 and not self.gone

    def visible(self) -> tuple[Any, ...]:
        """What a consumer of the state can tell apart: a change here is published."""
        return (self.sev, self.st, self.c, self.lat, self.ackd, self.since,
                self.ack, self.shelf, self.gone, self.area, self.desc)  # fmt: skip

    def worth_publishing(self) -> bool:
        """Whether the state differs from the last one published in a way that
        matters: an alarm that was and is quiet (never published, or published as
        cleared) changes nothing for a consumer whatever its status text does."""
        if self.published is None:
            return self.active or self.shelf is not None
        return self.visible() != self.published

    def message(self, ev: str, at: int, who: str = "", why: str = "") -> AlarmMsg:
        """The state as published (``n`` is the next revision; call
        :meth:`mark_published` once it is stored)."""
        msg: dict[str, Any] = {
            "ver": 1, "ch": self.ch, "area": self.area, "n": self.n + 1, "ev": ev,
            "sev": self.sev, "st": self.st, "c": self.c, "lat": self.lat,
            "ackd": self.ackd, "since": self.since, "t": self.t, "at": at,
        }  # fmt: skip
        if self.v is not None:
            msg["v"] = self.v
        if self.desc:
            msg["desc"] = self.desc
        if self.ack is not None:
            msg["ack"] = self.ack
        if self.shelf is not None:
            msg["shelf"] = self.shelf
        if who:
            msg["who"] = who
        if why:
            msg["why"] = why
        if self.gone:
            msg["gone"] = True
        return msg  # type: ignore[return-value]

    def mark_published(self, n: int) -> None:
        self.n = n
        self.published = self.visible()

    # -- the source ------------------------------------------------------------------

    def source(self, sev: int, st: str, c: bool, t: int, v: Any = None) -> None:
        """Apply the source's new severity, status and connection."""
        self.known = True
        self.src = (sev, st, c, t, v)
        self.no_data_shown = False
        self._apply(sev, st, c, t, v)

    def _apply(self, sev: int, st: str, c: bool, t: int, v: Any) -> None:
        self.sev, self.st, self.c, self.t, self.v = sev, st, c, t, v
        if self.lat == 0 and sev > 0:
            self.since = t
        if self.ackd:
            if sev > self.lat:  # worse than what was acknowledged: alarm again
                self.lat, self.ackd, self.ack = sev, False, None
            else:
                self.lat = sev
        elif self.latch:
            self.lat = max(self.lat, sev)
        else:
            self.lat = sev
        self._settle()

    def no_data(self, t: int) -> None:
        """Nothing is known of the source now (its adapter stopped beating, or
        nothing ever published it): severity INVALID, status "no data". The
        source's own last state is kept for :meth:`revive`."""
        self.no_data_shown = True
        self._apply(INVALID, NO_DATA, False, t, None)

    def revive(self) -> bool:
        """The source's adapter beats again: back to the source's own last state
        (latching what the spell raised). False when there is none to go back to."""
        if not self.no_data_shown or self.src is None:
            return False
        self.source(*self.src)
        return True

    def _settle(self) -> None:
        if self.lat == 0:
            self.since, self.ackd, self.ack = 0, False, None

    # -- people ----------------------------------------------------------------------

    def acknowledge(self, who: str, now: int) -> str | None:
        """Acknowledge; a failure code, or None (already acknowledged: no change)."""
        if not self.active:
            return AlarmFailure.NOT_ACTIVE
        if not self.ackd:
            self.ackd, self.ack = True, {"by": who, "t": now}
            self.lat = self.sev
            self._settle()
        return None

    def unacknowledge(self) -> str | None:
        if not self.active:
            return AlarmFailure.NOT_ACTIVE
        if not self.ackd:
            return AlarmFailure.NOT_ACKED
        self.ackd, self.ack = False, None
        return None

    def shelve(self, who: str, now: int, until: int, why: str) -> str | None:
        self.shelf = {"by": who, "t": now, "until": until, "why": why}
        return None

    def unshelve(self) -> str | None:
        if self.shelf is None:
            return AlarmFailure.NOT_SHELVED
        self.shelf = None
        return None

    # -- restored from the store ---------------------------------------------------------

    @classmethod
    def restore(cls, msg: dict[str, Any], ep: int, seq: int, sseq: int) -> Alarm:
        """The alarm as its last stored state says (``ep``/``seq``/``sseq``: the
        source transition it reflects, kept in the stored message's headers)."""
        alarm = cls(
            ch=msg["ch"], area=msg["area"], desc=msg.get("desc", ""), n=msg["n"],
            sev=msg["sev"], st=msg["st"], c=msg["c"], v=msg.get("v"),
            lat=msg["lat"], ackd=msg["ackd"], since=msg["since"], t=msg["t"],
            ack=msg.get("ack"), shelf=msg.get("shelf"), gone=bool(msg.get("gone")),
            known=True, ep=ep, seq=seq, sseq=sseq,
        )  # fmt: skip
        if alarm.st == NO_DATA and not alarm.c:
            alarm.no_data_shown = True  # its source's own state comes again
        else:
            alarm.src = (alarm.sev, alarm.st, alarm.c, alarm.t, alarm.v)
        alarm.published = alarm.visible()
        return alarm
