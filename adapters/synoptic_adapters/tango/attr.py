"""One monitored Tango attribute as a device link keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from synoptic_adapters.tango.convert import Reading
from synoptic_schemas import Channel


class Events(Enum):
    """Where an attribute's values come from."""

    PENDING = "pending"  # subscribed, not confirmed yet
    LIVE = "live"  # change events confirmed
    NONE = "none"  # the attribute sends no events: the read lane polls it


@dataclass(eq=False)
class AttrState:
    """One monitored attribute of a device."""

    channel: Channel
    name: str  # lower case
    events: Events = Events.PENDING
    generation: int = 0  # bumped at each (re)connection; stale events are dropped
    exists: bool = False
    confirm_read: bool = False  # read once more: subscription just confirmed
    #: its subscription failed before its first event (an error event, or a
    #: failed first read): the read lane reads it until an event comes
    unconfirmed: bool = False
    proven: bool = False  # read fast on its own: may join the device's group
    strikes: int = 0  # slow or timed-out reads in a row (> 0: backing off)
    cost: float = 0.0  # seconds the device spent on its last read alone
    due: float = 0.0  # monotonic time of its next read alone
    meta: dict[str, Any] | None = None
    last: Reading | None = None
    status: str = ""  # last disconnected reason published
    change_id: int | None = None  # event subscription ids
    conf_id: int | None = None
    link: Any = None  # the DeviceLink it belongs to
