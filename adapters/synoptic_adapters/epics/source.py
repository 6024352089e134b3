"""The EPICS Channel Access source (aioca).

Per channel two subscriptions: FORMAT_TIME with ``DBE_VALUE | DBE_ALARM`` for the
value, severity, status and timestamp (the hot path: one cheap synchronous
callback per update), and FORMAT_CTRL with ``DBE_PROPERTY`` for the metadata
(on connect and on property change). A disconnect is reported as
``disconnected``; CA resubscribes on reconnect and the full state (metadata and
value) follows. A PV that no server answers within ``connect_timeout`` is
reported as never connected and keeps being searched for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aioca
from aioca import DBE_PROPERTY, FORMAT_CTRL

from synoptic_adapters.epics.monitor import Dispatcher, ValueMonitor
from synoptic_adapters.epics.repeater import start_repeater
from synoptic_adapters.epics.values import (
    NATIVE_TYPES,
    PutValueError,
    build_meta,
    put_value,
    status_text,
)
from synoptic_adapters.source import ChannelSink
from synoptic_schemas import SCHEMA_VERSION, Channel, PutError
from synoptic_schemas.messages import PutReplyMsg

log = logging.getLogger(__name__)

#: Status names indexed by any 6-bit code (one lookup on the hot path).
STATUS_NAMES = tuple(status_text(code) for code in range(64))

#: CA error codes aioca reports (cadef.ECA_*).
_ECA_TIMEOUT = 80
_ECA_NOWTACCESS = 376
_ECA_DISCONN = 192

#: Default EPICS_CA_MAX_ARRAY_BYTES: room for waveforms of 1M doubles.
DEFAULT_MAX_ARRAY_BYTES = 10_000_000

_ENV_KEYS = {
    "addr_list": "EPICS_CA_ADDR_LIST",
    "auto_addr_list": "EPICS_CA_AUTO_ADDR_LIST",
    "server_port": "EPICS_CA_SERVER_PORT",
    "repeater_port": "EPICS_CA_REPEATER_PORT",
    "max_array_bytes": "EPICS_CA_MAX_ARRAY_BYTES",
}


def apply_ca_environment(settings: dict[str, Any]) -> None:
    """Set EPICS_CA_* from a config ``epics:`` section (before the CA context
    exists); EPICS_CA_MAX_ARRAY_BYTES defaults to 10 MB."""
    for key, env in _ENV_KEYS.items():
        if key in settings:
            value = settings[key]
            os.environ[env] = (
                ("YES" if value else "NO") if isinstance(value, bool) else str(value)
            )
    os.environ.setdefault("EPICS_CA_MAX_ARRAY_BYTES", str(DEFAULT_MAX_ARRAY_BYTES))


@dataclass
class _Monitor:
    """The subscriptions and last-known type of one monitored channel."""

    value_sub: Any = None
    meta_sub: Any = None
    datatype: int | None = None
    count: int = 1
    labels: list[str] | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


def _reply(ok: bool, err: str | None = None, msg: str | None = None) -> PutReplyMsg:
    reply: dict[str, Any] = {"ver": SCHEMA_VERSION, "ok": ok}
    if err:
        reply["err"] = err
    if msg:
        reply["msg"] = msg
    return reply  # type: ignore[return-value]


class EpicsSource:
    """A :class:`~synoptic_adapters.source.Source` for ``ca://`` channels."""

    proto = "ca"

    def __init__(
        self, *, connect_timeout: float = 5.0, settings: dict[str, Any] | None = None
    ) -> None:
        self.connect_timeout = connect_timeout
        self.settings = settings or {}
        self.sink: ChannelSink | None = None
        self.monitors: dict[Channel, _Monitor] = {}
        self.dispatcher: Dispatcher | None = None
        self._closed_merged = 0

    @property
    def merged(self) -> int:
        """Updates replaced by a newer one before the loop delivered them."""
        live = sum(m.value_sub.merged for m in self.monitors.values() if m.value_sub)
        return live + self._closed_merged

    async def start(self, sink: ChannelSink) -> None:
        apply_ca_environment(self.settings)
        start_repeater()
        self.sink = sink
        self.dispatcher = Dispatcher.for_sink(sink)

    async def monitor(self, channels: Iterable[Channel]) -> None:
        for channel in channels:
            if channel in self.monitors or channel.proto != self.proto:
                continue
            monitor = _Monitor()
            self.monitors[channel] = monitor
            monitor.value_sub = self._value_monitor(channel)
            monitor.meta_sub = aioca.camonitor(
                channel.name,
                self._meta_callback(channel, monitor),
                events=DBE_PROPERTY,
                format=FORMAT_CTRL,
                count=1,
            )

    def _value_monitor(self, channel: Channel) -> ValueMonitor:
        sink, dispatcher = self.sink, self.dispatcher
        assert sink is not None and dispatcher is not None
        push = sink.value
        names = STATUS_NAMES
        timeout_reason = (
            f"never connected: no server answered within {self.connect_timeout:g} s"
        )

        def on_value(update: tuple[Any, int, int, int]) -> None:
            value, t, sev, status = update
            push(channel, value, t=t, sev=sev, st=names[status & 63])

        return ValueMonitor(
            channel.name, dispatcher, on_value=on_value,
            on_disconnect=lambda: sink.disconnected(channel, "disconnected"),
            on_timeout=lambda: sink.disconnected(channel, timeout_reason),
            connect_timeout=self.connect_timeout,
        )  # fmt: skip

    def _meta_callback(
        self, channel: Channel, monitor: _Monitor
    ) -> Callable[[Any], None]:
        def on_ctrl(ctrl: Any) -> None:
            if not ctrl.ok:
                return
            task = asyncio.create_task(self._publish_meta(channel, monitor, ctrl))
            monitor.tasks.add(task)
            task.add_done_callback(monitor.tasks.discard)

        return on_ctrl

    async def _publish_meta(
        self, channel: Channel, monitor: _Monitor, ctrl: Any
    ) -> None:
        info = await aioca.cainfo(
            channel.name, timeout=self.connect_timeout, throw=False
        )
        if not getattr(info, "ok", True) or info.state != 2:  # cs_conn
            return
        monitor.datatype, monitor.count = info.datatype, info.count
        monitor.labels = (
            list(ctrl.enums) if getattr(ctrl, "enums", None) is not None else None
        )
        assert self.sink is not None
        self.sink.meta(channel, build_meta(ctrl, info.datatype, info.count, info.write))

    async def release(self, channels: Iterable[Channel]) -> None:
        for channel in channels:
            monitor = self.monitors.pop(channel, None)
            if monitor is None:
                continue
            self._close(monitor)

    def _close(self, monitor: _Monitor) -> None:
        for sub in (monitor.value_sub, monitor.meta_sub):
            if sub is not None:
                with contextlib.suppress(Exception):
                    sub.close()
        if monitor.value_sub is not None:
            self._closed_merged += monitor.value_sub.merged
        for task in monitor.tasks:
            task.cancel()

    async def put(self, channel: Channel, value: Any, timeout: float) -> PutReplyMsg:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        info = await aioca.cainfo(channel.name, timeout=timeout, throw=False)
        if not getattr(info, "ok", True) or info.state != 2:
            return _reply(
                False, PutError.DISCONNECTED,
                f"{channel.name} is not connected (no server answered within {timeout:g} s)",
            )  # fmt: skip
        if not info.write:
            return _reply(
                False,
                PutError.ACCESS,
                f"{channel.name} is not writable (no write access)",
            )
        monitor = self.monitors.get(channel)
        labels = monitor.labels if monitor else None
        if info.datatype == 3 and isinstance(value, str) and labels is None:
            ctrl = await aioca.caget(
                channel.name, format=FORMAT_CTRL, timeout=timeout, throw=False
            )
            labels = list(ctrl.enums) if getattr(ctrl, "ok", False) else None
        try:
            converted = put_value(value, info.datatype, info.count, labels)
        except PutValueError as exc:
            native = NATIVE_TYPES.get(
                info.datatype, ("?", f"DBF_{info.datatype}", None)
            )[1]
            return _reply(False, PutError.TYPE, f"{channel.name} ({native}): {exc}")
        remaining = max(deadline - loop.time(), 0.001)
        result = await aioca.caput(
            channel.name, converted, wait=True, timeout=remaining, throw=False
        )
        if result.ok:
            return _reply(True)
        if result.errorcode == _ECA_TIMEOUT:
            return _reply(
                False,
                PutError.TIMEOUT,
                f"{channel.name}: no completion within {timeout:g} s",
            )
        if result.errorcode == _ECA_NOWTACCESS:
            return _reply(
                False, PutError.ACCESS, f"{channel.name}: write access denied"
            )
        if result.errorcode == _ECA_DISCONN:
            return _reply(
                False,
                PutError.DISCONNECTED,
                f"{channel.name}: disconnected during the put",
            )
        return _reply(False, PutError.FAILED, str(result))

    async def stop(self) -> None:
        for monitor in self.monitors.values():
            self._close(monitor)
        self.monitors.clear()
