"""Every read the adapter makes of one Tango device, one at a time.

A standard device serialises requests, so reads of ours that overlap only queue
on the device, and the time one spends queued would be taken for its own
slowness. Here the reads of a device form one lane (decision 0016):

- while the subscriptions are made, the attributes Tango polls are read once
  from its polling buffer, and those known to read fast (recalled from an
  earlier start: :mod:`~synoptic_adapters.tango.memory`) in one group
  (:meth:`Reads.first_reads`); the lane starts once
  their subscriptions are confirmed (or after :data:`FIRST_EVENTS_WAIT`): a
  subscription's own first read would queue behind a slow read of ours; event
  attributes are never read while their events come (one read from the polling
  buffer after a data-less confirmation aside);
- each period it reads the attributes without events: those Tango polls from its
  polling buffer (chunks of ``first_read_chunk``), those that read fast alone in
  one group, each new one alone (so its time is its own), and last, when due and
  the device's budget allows, those in backoff, cheapest first;
- a read is judged only when no read of ours may still hold the device: after a
  timeout the device may go on with the read for long (a 3 s client timeout, a
  10 s read), so the lane counts it busy until some read of ours that needs the
  device answers again (not one from the polling buffer, which Tango serves
  without waiting for the device; when nothing else is due, a read of ``State``
  every ``poll_period`` asks), and that whole time is the timed-out read's cost;
  reads queued behind it are not judged, nor is their time their cost;
- a slow group is split (its members are read alone from then on); a slow or
  timed-out attribute backs off (:func:`~.policy.backoff_wait`), published invalid
  with what happened and when the next try is, and comes back to the normal
  period once it reads fast again; the fast group's period stretches when it alone
  would take more than the budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

import tango

from synoptic_adapters.tango.attr import AttrState
from synoptic_adapters.tango.policy import (
    DeviceTime,
    backoff_wait,
    slow_status,
    timeout_status,
)

if TYPE_CHECKING:
    from synoptic_adapters.tango.settings import TangoSettings


class Device(Protocol):
    """What the lane needs of its device link."""

    url: str
    settings: TangoSettings
    attrs: dict[str, AttrState]
    names: dict[str, str]  # lower case -> the device's attribute name
    polled: dict[str, float]  # attributes Tango polls -> period, s
    proxy: Any

    def polls(self, state: AttrState) -> bool: ...
    def awaits_subscription(self, state: AttrState) -> bool: ...
    async def read_meta(self) -> None: ...
    def remember(self) -> None: ...
    def take(self, state: AttrState, result: Any, invalid: str = "") -> None: ...
    def invalid(self, state: AttrState, status: str) -> None: ...


log = logging.getLogger(__name__)

#: Longest wait, after a connection, for the event subscriptions to be
#: confirmed before the lane starts reading, seconds.
FIRST_EVENTS_WAIT = 5.0


def is_timeout(exc: BaseException, took: float, timeout: float) -> bool:
    """Whether a failed read timed out (rather than answered with an error)."""
    if isinstance(exc, TimeoutError) or took >= 0.9 * timeout:
        return True
    if isinstance(exc, tango.DevFailed) and exc.args:
        text = f"{exc.args[0].reason} {exc.args[0].desc}".lower().replace(" ", "")
        return "timedout" in text or "timeout" in text
    return False


def describe(exc: BaseException) -> str:
    """``REASON: description`` of a DevFailed (first line), else the repr."""
    if isinstance(exc, tango.DevFailed) and exc.args:
        first = exc.args[0]
        return f"{first.reason}: {first.desc.strip().splitlines()[0]}"
    if isinstance(exc, TimeoutError):
        return str(exc) or "timed out"
    return repr(exc)


#: Errors that are no answer of the attribute's (the device is not reachable).
_NO_ANSWER = (tango.ConnectionFailed, tango.CommunicationFailed)


class Reads:
    """The read lane of one device link (see the module docstring)."""

    def __init__(self, link: Device, device_time: DeviceTime) -> None:
        self.link = link
        self.settings = link.settings
        self.time = device_time
        #: start (monotonic) of the read in flight, if any
        self.in_flight: float | None = None
        #: a timed-out read the device may still be running: (start, attribute
        #: or None for a group)
        self.stall: tuple[float, AttrState | None] | None = None
        self.wake = asyncio.Event()
        self._busy_said: tuple[float, AttrState | None] | None = None
        self._cache_due = 0.0
        self._group_due = 0.0
        self._probe_due = 0.0
        self._meta_due = time.monotonic() + self.settings.meta_period

    @property
    def busy(self) -> bool:
        """Whether a read of ours holds (or may still hold) the device."""
        return self.in_flight is not None or self.stall is not None

    @property
    def busy_since(self) -> float | None:
        """Since when (monotonic) a read of ours holds the device, if it does."""
        starts = [t for t in (self.in_flight, self.stall and self.stall[0]) if t]
        return min(starts) if starts else None

    def busy_ping(self) -> None:
        """A ping timed out while a read of ours holds the device: the attribute
        whose timed-out read the device still runs says it is busy (once per
        such read)."""
        stall = self.stall
        if stall is None or stall is self._busy_said:
            return
        self._busy_said = stall
        state = stall[1]
        if state is not None and state.strikes:
            wait = self._next_try(state, time.monotonic())
            status = timeout_status(self.settings.read_timeout, wait, busy_now=True)
            self.link.invalid(state, status)

    def _next_try(self, state: AttrState, now: float) -> float:
        """Seconds until a backed-off attribute is read again: its backoff, or
        longer while the device's budget is in debt."""
        return max(state.due - now, self.time.wait(now))

    async def first_reads(self, states: list[AttrState]) -> None:
        """First values, while the subscriptions of ``states`` are made (the
        lane itself waits for their confirmation): of the attributes Tango polls,
        from its polling buffer in chunks (cheap for the device: no hardware
        read, and thousands of subscriptions take seconds); then of those known
        to read fast (an earlier start's reads, recalled), in one group read."""
        link = self.link
        await self._cached(
            [s for s in states if s.name in link.polled and s.last is None]
        )
        group = [
            s for s in states
            if s.proven and not s.strikes and s.name not in link.polled
            and link.polls(s) and s.last is None
        ]  # fmt: skip
        if group and self.stall is None:
            await self._group(group)

    # -- the loop ---------------------------------------------------------------------

    async def run(self) -> None:
        """Read until cancelled."""
        await self._first_events()
        while True:
            if not await self._step():
                await self._sleep()

    async def _first_events(self) -> None:
        deadline = time.monotonic() + FIRST_EVENTS_WAIT
        while time.monotonic() < deadline and any(
            self.link.awaits_subscription(s) for s in self.link.attrs.values()
        ):
            self.wake.clear()
            await _woken(self.wake, 0.05)

    async def _sleep(self) -> None:
        """Until the next read is due (or something wakes the lane)."""
        now = time.monotonic()
        dues = [now + self.settings.confirm_period]
        polled = [s for s in self.link.attrs.values() if self.link.polls(s)]
        if any(s.name in self.link.polled for s in polled):
            dues.append(self._cache_due)
        if any(s.proven and not s.strikes for s in polled):
            dues.append(self._group_due)
        if self.stall is not None:  # only the probe and the cheap reads meanwhile
            dues.append(self._probe_due)
        else:
            dues.append(self._meta_due)
            for state in polled:
                if not state.proven or state.strikes:
                    due = state.due
                    if state.strikes:
                        due = max(due, now + self.time.wait(now))
                    dues.append(due)
        self.wake.clear()
        await _woken(self.wake, max(0.01, min(dues) - now))

    async def _step(self) -> bool:
        """Do the most urgent due read; False when nothing was due."""
        link, now = self.link, time.monotonic()
        attrs = [s for s in link.attrs.values() if s.exists]
        confirm = [s for s in attrs if s.confirm_read]
        if confirm:
            for state in confirm:
                state.confirm_read = False
            await self._cached(confirm)
            return True
        polled = [s for s in attrs if link.polls(s)]
        cached = [s for s in polled if s.name in link.polled]
        if cached and self._cache_due <= now:
            self._cache_due = now + self.settings.poll_period
            await self._cached(cached)
            return True
        direct = [s for s in polled if s.name not in link.polled]
        group = [s for s in direct if s.proven and not s.strikes]
        if group and self._group_due <= now:
            await self._group(group)
            return True
        if self.stall is not None:  # busy with our read: nothing else yet
            if self._probe_due > now:
                return False
            # the cheapest call that waits for the device: tells when it is free
            self._probe_due = now + self.settings.poll_period
            await self._timed(self.link.proxy.read_attribute("State"))
            return True
        alone = [s for s in direct if not s.proven and not s.strikes and s.due <= now]
        if alone:
            await self._alone(alone[0])
            return True
        if self._meta_due <= now:
            self._meta_due = now + self.settings.meta_period
            await self._timed(link.read_meta())
            return True
        backoff = [s for s in direct if s.strikes and s.due <= now]
        if backoff and self.time.allows(now):
            await self._alone(min(backoff, key=lambda s: s.cost))
            return True
        return False

    # -- reads ----------------------------------------------------------------------

    async def _timed(
        self, call: Any, *, proves_free: bool = True
    ) -> tuple[Any, BaseException | None, float]:
        """Run one device call of ours: (result, exception, seconds). An answer
        ends a stall unless ``proves_free`` is false (a read the polling buffer
        serves does not wait for the device)."""
        start = self.in_flight = time.monotonic()
        result: Any = None
        error: BaseException | None = None
        try:
            async with asyncio.timeout(self.settings.read_timeout + 1):
                result = await call  # (not wait_for: see _woken)
        except (TimeoutError, tango.DevFailed) as exc:
            error = exc
        finally:
            self.in_flight = None
        end = time.monotonic()
        took = end - start
        self.time.spent(start, end)
        answered = error is None or not is_timeout(
            error, took, self.settings.read_timeout
        )
        if answered and proves_free:
            self._freed(end)
        return result, error, took

    def _freed(self, now: float) -> None:
        """A read of ours answered: the device is free; a stall ends here."""
        if self.stall is None:
            return
        start, state = self.stall
        self.stall = None
        busy = now - start
        if state is None or state.strikes == 0:
            return
        state.cost = max(state.cost, busy)
        wait = backoff_wait(
            state.cost, state.strikes, self.settings.busy_fraction,
            self.settings.backoff_max,
        )  # fmt: skip
        state.due = max(state.due, now + wait)
        self.link.invalid(
            state,
            timeout_status(
                self.settings.read_timeout, self._next_try(state, now), busy
            ),
        )
        self.link.remember()

    async def _cached(self, states: list[AttrState]) -> None:
        """Read attributes Tango polls, from its polling buffer (never judged).
        A failed read of attributes whose subscription has brought nothing yet
        leaves them to the lane (:attr:`AttrState.unconfirmed`): read again
        every ``poll_period`` until their first event."""
        size = self.settings.first_read_chunk
        for first in range(0, len(states), size):
            chunk = states[first : first + size]
            names = [self.link.names[s.name] for s in chunk]
            result, error, _ = await self._timed(
                self.link.proxy.read_attributes(names), proves_free=False
            )
            if error is None:
                for state, one in zip(chunk, result, strict=True):
                    self.link.take(state, one)
                continue
            waiting = [s for s in chunk if self.link.awaits_subscription(s)]
            for state in waiting:
                state.unconfirmed = True
            if waiting:
                log.info(
                    "%s: a read of %d attributes from the polling buffer failed "
                    "before their first events (%s): read until those come",
                    self.link.url, len(waiting), describe(error),
                )  # fmt: skip

    async def _group(self, states: list[AttrState]) -> None:
        """One read of every attribute that read fast alone; split when slow."""
        judged = self.stall is None
        names = [self.link.names[s.name] for s in states]
        result, error, took = await self._timed(self.link.proxy.read_attributes(names))
        settings = self.settings
        # its own cost stretches its period; time queued behind our timed-out
        # read is not its own
        cost = took if judged else 0.0
        self._group_due = time.monotonic() + max(
            settings.poll_period, cost / settings.busy_fraction
        )
        timed_out = error is not None and is_timeout(error, took, settings.read_timeout)
        if timed_out and judged:
            self.stall = (time.monotonic() - took, None)
        if error is None:
            for state, one in zip(states, result, strict=True):
                self.link.take(state, one)
        elif not timed_out:
            for state in states:
                self.link.invalid(state, f"read failed: {describe(error)}")
        if judged and (timed_out or took > settings.slow_after):
            log.info(
                "%s: a read of %d attributes took %.1f s: reading them alone",
                self.link.url, len(states), took,
            )  # fmt: skip
            for state in states:
                state.proven = False
            self.link.remember()

    async def _alone(self, state: AttrState) -> None:
        """Read one attribute alone and judge it by its own time."""
        judged = self.stall is None
        name = self.link.names[state.name]
        result, error, took = await self._timed(self.link.proxy.read_attribute(name))
        settings, now = self.settings, time.monotonic()
        timed_out = error is not None and is_timeout(error, took, settings.read_timeout)
        if not timed_out and isinstance(error, _NO_ANSWER):
            # the device did not answer (gone, restarting): nothing learned
            state.due = now + settings.poll_period
            self._publish(state, result, error)
            return
        if not judged:  # queued behind our own timed-out read: not its time
            state.due = now + settings.poll_period
            if not timed_out:
                self._publish(state, result, error)
            return
        if timed_out:
            self.stall = (now - took, state)
        slow = timed_out or took > settings.slow_after
        if not slow:
            if state.strikes:
                log.info("%s/%s reads fast again (%.2f s)", self.link.url,
                         state.name, took)  # fmt: skip
            state.strikes, state.proven, state.cost = 0, True, took
            state.due = now + settings.poll_period
            self._publish(state, result, error)
            self.link.remember()
            return
        state.strikes += 1
        state.cost = max(took, state.cost) if state.strikes > 1 else took
        wait = backoff_wait(
            state.cost, state.strikes, settings.busy_fraction, settings.backoff_max
        )
        state.due = now + wait
        wait = self._next_try(state, now)
        if state.strikes == 1:
            log.info("%s/%s: read %s; backing off", self.link.url, state.name,
                     "timed out" if timed_out else f"took {took:.1f} s")  # fmt: skip
        if timed_out:
            self.link.invalid(state, timeout_status(settings.read_timeout, wait))
        elif error is not None:
            self.link.invalid(
                state, f"read failed: {describe(error)}; next try in {wait:.0f} s"
            )
        else:
            self.link.take(
                state, result, invalid=slow_status(took, settings.slow_after, wait)
            )
        self.link.remember()

    def _publish(self, state: AttrState, result: Any, error: Any) -> None:
        if error is None:
            self.link.take(state, result)
        else:
            self.link.invalid(state, f"read failed: {describe(error)}")


async def _woken(wake: asyncio.Event, seconds: float) -> None:
    """Until ``wake`` is set or ``seconds`` pass. Not ``asyncio.wait_for``: on
    Python 3.11 it returns the inner result when the event is set in the same
    turn as the task is cancelled, losing the cancellation (a link closing sets
    the event as it cancels the lane, which then read on forever)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await wake.wait()
