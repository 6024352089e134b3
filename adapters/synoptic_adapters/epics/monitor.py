"""Value monitors of CA channels, delivered to the event loop in fair batches.

aioca's ``camonitor`` calls back once per update through a loop callback that runs
until its queue is empty: when updates arrive faster than the loop handles them,
that callback never returns and starves every other task (the publisher
included), so an overloaded adapter publishes nothing at all. Each monitor here is
a :class:`~synoptic_adapters.dispatch.Mailbox` instead: per-channel coalescing
(counted in ``merged``) and batched delivery, never starvation or unbounded memory.

Uses aioca's channel cache and CA bindings (pinned ``aioca==2.1``), so connection
handling stays aioca's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import time as _time
from collections.abc import Callable
from typing import Any

from aioca import _catools
from epicscorelibs.ca import cadef, dbr

from synoptic_adapters.dispatch import Dispatcher, Mailbox

_DISCONNECTED = object()

#: Native scalar types read straight from the TIME structure (no aioca value object).
_SCALAR_TIME_TYPES = {
    1: dbr.dbr_time_short, 2: dbr.dbr_time_float, 3: dbr.dbr_time_enum,
    4: dbr.dbr_time_char, 5: dbr.dbr_time_long, 6: dbr.dbr_time_double,
}  # fmt: skip
_EPOCH_NS = dbr.EPICS_epoch * 1_000_000_000

#: What a monitor delivers: (value, timestamp ns since 1970, severity, status code).
TimeValue = tuple[Any, int, int, int]
_now_ns = _time.time_ns


def time_converter(channel: Any) -> tuple[int, Callable[[Any, int, int], TimeValue]]:
    """The DBR code to subscribe with and a CA-thread converter to ``TimeValue``.

    Scalars of numeric and enum types are read field by field from the TIME
    structure (the cheapest path, taken by nearly every update); strings and
    arrays go through aioca's conversion (arrays become numpy arrays).

    A time stamp of 0 (the EPICS epoch, 1990-01-01: a record not processed since
    the IOC started, whose value is undefined) is no time at all: such a value
    gets its time of arrival, as a PVA value without a time stamp does, so it is
    never kept and ordered as if it were from 1990."""
    native = cadef.ca_field_type(channel)
    count = cadef.ca_element_count(channel)
    struct_type = _SCALAR_TIME_TYPES.get(native)
    if struct_type is not None and count == 1:
        pointer, cast = ctypes.POINTER(struct_type), ctypes.cast

        def scalar(raw_dbr: Any, _type: int, _count: int) -> TimeValue:
            time = cast(raw_dbr, pointer)[0]
            stamp = time.raw_stamp
            secs = stamp.secs
            return (
                time.raw_value[0],
                _EPOCH_NS + secs * 1_000_000_000 + stamp.nsec if secs else _now_ns(),
                time.severity, time.status,
            )  # fmt: skip

        return native + dbr.DBR_TIME_STRING, scalar
    dbrcode, to_value = dbr.type_to_dbr(channel, None, dbr.FORMAT_TIME)

    def general(raw_dbr: Any, type_: int, count_: int) -> TimeValue:
        value = to_value(raw_dbr, type_, count_)
        secs, nsec = value.raw_stamp  # seconds since 1970 here
        t = secs * 1_000_000_000 + nsec if secs != dbr.EPICS_epoch else _now_ns()
        return value, t, value.severity, value.status

    return dbrcode, general


@cadef.event_handler
def _on_event(args: Any) -> None:  # pragma: no cover - runs in the CA thread
    monitor: ValueMonitor = args.usr
    if args.status != cadef.ECA_NORMAL or monitor.dbr_to_value is None:
        return
    try:
        value = monitor.dbr_to_value(args.raw_dbr, args.type, args.count)
    except Exception:  # a conversion failure must not kill the CA thread
        monitor.failures += 1
        return
    monitor.put(value)


class ValueMonitor(Mailbox):
    """One FORMAT_TIME subscription (``DBE_VALUE | DBE_ALARM``) of one PV.

    ``on_value(value)`` gets a :data:`TimeValue` tuple; ``on_disconnect()`` a lost connection; ``on_timeout()`` a PV no
    server answered within ``connect_timeout`` (it keeps being searched for).
    """

    def __init__(
        self,
        name: str,
        dispatcher: Dispatcher,
        *,
        on_value: Callable[[Any], None],
        on_disconnect: Callable[[], None],
        on_timeout: Callable[[], None],
        connect_timeout: float,
        events: int = cadef.DBE_VALUE | cadef.DBE_ALARM,
    ) -> None:
        super().__init__(dispatcher)
        self.name = name
        self.on_value, self.on_disconnect, self.on_timeout = (
            on_value,
            on_disconnect,
            on_timeout,
        )
        self.failures = 0
        self.dbr_to_value: Callable[..., Any] | None = None
        self._as_parameter_: int | None = None
        self._closed = False
        self.channel = _catools.get_channel(name)
        self._task = asyncio.ensure_future(self._open(events, connect_timeout))

    async def _open(self, events: int, connect_timeout: float) -> None:
        try:
            await asyncio.wait_for(self.channel.wait(), connect_timeout)
        except TimeoutError:
            self.on_timeout()
            await self.channel.wait()
        if self._closed:
            return
        self.channel._add_subscription(self)
        dbrcode, self.dbr_to_value = time_converter(self.channel)
        event_id = ctypes.c_void_p()
        cadef.ca_create_subscription(
            dbrcode, 0, self.channel, events, _on_event, ctypes.py_object(self),
            ctypes.byref(event_id),
        )  # fmt: skip
        _catools._flush_io()
        self._as_parameter_ = event_id.value

    def _on_connect(self, connected: bool) -> None:
        """aioca's channel calls this (in the loop) on every connection change."""
        if not connected:
            self.put(_DISCONNECTED)

    def deliver(self, value: Any) -> None:
        if value is _DISCONNECTED:
            self.on_disconnect()
        else:
            self.on_value(value)

    def close(self) -> None:
        """Stop the subscription; no callback follows."""
        if self._closed:
            return
        self._closed = True
        self._task.cancel()
        if self._as_parameter_ is not None:
            with contextlib.suppress(Exception):
                self.channel._remove_subscription(self)
            cadef.ca_clear_subscription(self)
            _catools._flush_io()
            self._as_parameter_ = None
        self.box.clear()
        self.on_value = self.on_disconnect = self.on_timeout = _ignore  # type: ignore[method-assign]


def _ignore(*_args: Any) -> None:
    pass
