"""From Tango's event threads to the asyncio loop, in batches.

Tango calls event callbacks on its own threads. A callback converts the event
there (cheap, no loop objects touched) and posts a small item to an
:class:`EventInbox`; the inbox wakes the loop once per batch, not once per event,
and the loop hands every item to its attribute's device link.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tango

from synoptic_adapters.tango.convert import metadata, reading

#: Tango error reasons that mean "this attribute sends no events": poll it.
NO_EVENT_REASONS = frozenset(
    {"API_AttributePollingNotStarted", "API_EventPropertiesNotSet"}
)


@dataclass(frozen=True, slots=True)
class EventItem:
    """One event, converted. ``kind``: ``value`` (payload: Reading), ``live``
    (subscription confirmed, no data), ``meta`` (payload: dict), ``no_events``,
    ``error`` (payload: text)."""

    target: Any  # the attribute state the subscription belongs to
    generation: int
    kind: str
    payload: Any = None


class EventInbox:
    """A thread-safe queue drained on the loop by ``handle(item)``.

    Bounded: when the loop falls ``max_items`` behind, new value events are
    dropped and counted in ``dropped`` (consumers see the gap in the values);
    other items (confirmations, errors, metadata) are always kept."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        handle: Callable[[EventItem], None],
        max_items: int = 100_000,
    ) -> None:
        self._loop = loop
        self._handle = handle
        self._items: deque[EventItem] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self.max_items = max_items
        self.received = 0
        self.dropped = 0

    def post(self, item: EventItem) -> None:
        """Queue one item (any thread)."""
        if item.kind == "value" and len(self._items) >= self.max_items:
            self.dropped += 1
            return
        self._items.append(item)
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # loop closed, Tango still calls
            self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        items = self._items
        while items:
            self.received += 1
            self._handle(items.popleft())


class ChangeCallback:
    """Tango change-event callback of one attribute subscription."""

    __slots__ = ("generation", "inbox", "target")

    def __init__(self, inbox: EventInbox, target: Any, generation: int) -> None:
        self.inbox = inbox
        self.target = target
        self.generation = generation

    def __call__(self, event: tango.EventData) -> None:
        try:
            if event.err:
                self.inbox.post(self._error(event))
            elif event.attr_value is None:
                self.inbox.post(EventItem(self.target, self.generation, "live"))
            elif event.attr_value.has_failed:
                self.inbox.post(self._error(event))
            else:
                item = EventItem(
                    self.target, self.generation, "value", reading(event.attr_value)
                )
                self.inbox.post(item)
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
