"""From Tango's event threads to the asyncio loop, in batches.

Tango calls event callbacks on its own threads. A callback converts the event
there (cheap, no loop objects touched) and posts a small item to an
:class:`EventInbox`; the inbox wakes the loop once per batch, not once per event,
and the loop hands every item to its attribute's device link.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

import tango

from synoptic_adapters.tango.convert import ValueOf, metadata, reading, value_reader

#: Tango error reasons that mean "this attribute sends no events": poll it.
NO_EVENT_REASONS = frozenset(
    {"API_AttributePollingNotStarted", "API_EventPropertiesNotSet"}
)


class EventItem(NamedTuple):
    """One event, converted. ``kind``: ``value`` (payload: Reading), ``live``
    (subscription confirmed, no data), ``meta`` (payload: dict), ``no_events``,
    ``error`` (payload: text). A tuple: one is built per event."""

    target: Any  # the attribute state the subscription belongs to
    generation: int
    kind: str
    payload: Any = None


class EventInbox:
    """A thread-safe queue drained on the loop by ``handle(item)``, in batches.

    The first item after a quiet spell wakes the loop (one cross-thread call);
    while items keep coming the loop drains them every ``batch_window`` seconds
    without being woken per event (a wake-up per event cost more than the rest of
    an event's handling put together). Bounded: when the loop falls ``max_items``
    behind, new value events are dropped and counted in ``dropped`` (consumers see
    the gap in the values); other items (confirmations, errors, metadata) are
    always kept."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        handle: Callable[[EventItem], None],
        max_items: int = 100_000,
        batch_window: float = 0.004,
    ) -> None:
        self._loop = loop
        self._handle = handle
        self._items: deque[EventItem] = deque()
        # set by a poster (under the GIL; a race only costs one extra drain),
        # cleared by the loop once a drain finds nothing more to do
        self._scheduled = False
        self.max_items = max_items
        self.batch_window = batch_window
        self.received = 0
        self.dropped = 0

    def post(self, item: EventItem) -> None:
        """Queue one item (any thread)."""
        if item.kind == "value" and len(self._items) >= self.max_items:
            self.dropped += 1
            return
        self._items.append(item)
        if self._scheduled:
            return
        self._scheduled = True
        with contextlib.suppress(RuntimeError):  # loop closed, Tango still calls
            self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        items, handle = self._items, self._handle
        count = 0
        while items:
            count += 1
            handle(items.popleft())
        self.received += count
        if count:  # busy: look again after the window, no wake-up needed
            self._loop.call_later(self.batch_window, self._drain)
            return
        self._scheduled = False
        if items:  # posted between the last look and the flag
            self._scheduled = True
            self._loop.call_soon(self._drain)


def call_directly(proxy: Any, event_id: int, callback: Callable[[Any], None]) -> bool:
    """Have Tango call ``callback`` itself for subscription ``event_id`` of
    ``proxy`` (a synchronous DeviceProxy); True when done.

    pytango hands each event to the callback through its green-mode executor and
    a tracing wrapper that it builds again for every event (``functools.wraps``,
    ``inspect.unwrap``): ~14 µs per event here, a third of what a bare counting
    callback costs. The callback object pytango registered with cppTango keeps
    the callable in ``push_event``; pointing that at ``callback`` removes the
    detour (events that came before simply went the long way). Relies on a pytango
    internal (checked by the system tests): when it is not there, nothing changes.
    """
    entry = proxy.__dict__.get("_subscribed_events", {}).get(event_id)
    holder = entry[0] if isinstance(entry, tuple) and entry else None
    if holder is None or not callable(getattr(holder, "push_event", None)):
        return False
    holder.push_event = callback
    return True


class ChangeCallback:
    """Tango change-event callback of one attribute subscription."""

    __slots__ = ("generation", "inbox", "target", "value_of")

    def __init__(self, inbox: EventInbox, target: Any, generation: int) -> None:
        self.inbox = inbox
        self.target = target
        self.generation = generation
        self.value_of: ValueOf | None = None  # chosen at the first value

    def __call__(self, event: tango.EventData) -> None:
        try:
            if event.err:
                self.inbox.post(self._error(event))
                return
            attr_value = event.attr_value
            if attr_value is None:
                self.inbox.post(EventItem(self.target, self.generation, "live"))
            elif attr_value.has_failed:
                self.inbox.post(self._error(event))
            else:
                value_of = self.value_of
                if value_of is None:
                    value_of = self.value_of = value_reader(attr_value)
                self.inbox.post(
                    EventItem(
                        self.target,
                        self.generation,
                        "value",
                        reading(attr_value, value_of),
                    )
                )
        except Exception as exc:  # never let an exception into Tango's thread
            self.inbox.post(EventItem(self.target, self.generation, "error", repr(exc)))

    def _error(self, event: Any) -> EventItem:
        errors = event.errors or (
            event.attr_value.get_err_stack() if event.attr_value else ()
        )
        reason = errors[0].reason if errors else "unknown"
        if reason in NO_EVENT_REASONS:
            return EventItem(self.target, self.generation, "no_events", reason)
        desc = errors[0].desc.strip() if errors else ""
        return EventItem(self.target, self.generation, "error", f"{reason}: {desc}")


class ConfigCallback(ChangeCallback):
    """Tango attribute-configuration event callback (metadata)."""

    __slots__ = ()

    def __call__(self, event: tango.AttrConfEventData) -> None:
        try:
            if event.err or event.attr_conf is None:
                return  # metadata errors matter less than value errors: keep the last
            meta = metadata(event.attr_conf)
            self.inbox.post(EventItem(self.target, self.generation, "meta", meta))
        except Exception as exc:
            self.inbox.post(EventItem(self.target, self.generation, "error", repr(exc)))
