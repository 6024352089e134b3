"""The seam between a control-system protocol and the bus.

A :class:`Source` talks one protocol (EPICS CA, Tango …) and reports what happens to
its channels to a :class:`ChannelSink`; the sink (the publisher) stamps sequence
numbers, encodes and publishes. Sources never touch NATS; the publisher never
touches a control-system library.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from synoptic_schemas import Channel
from synoptic_schemas.messages import CmdReplyMsg, PutReplyMsg


class ChannelSink(Protocol):
    """Receives channel events from a source. Calls are cheap and never block: the
    sink queues or coalesces, so a source may call it from its event callbacks."""

    def value(self, channel: Channel, v: Any, *, t: int, sev: int, st: str) -> None:
        """A connected channel's new value (``t``: source timestamp, ns)."""

    def meta(self, channel: Channel, meta: dict[str, Any]) -> None:
        """A channel's metadata, complete (keys of ``MetaMsg`` except ver/t/ep)."""

    def disconnected(self, channel: Channel, reason: str) -> None:
        """The channel's source is gone (or never connected): publish sev 3, c False."""


class Source(Protocol):
    """One protocol's channels. Guarantees: ``monitor`` returns without waiting for
    any channel to connect; every monitored channel eventually produces ``value``
    or ``disconnected`` on the sink; ``put`` never raises, it replies."""

    proto: str

    async def start(self, sink: ChannelSink) -> None:
        """Prepare the protocol library; events go to ``sink`` from now on."""

    async def monitor(self, channels: Iterable[Channel]) -> None:
        """Start monitoring channels (bulk; already monitored ones are ignored)."""

    async def release(self, channels: Iterable[Channel]) -> None:
        """Stop monitoring channels."""

    async def put(self, channel: Channel, value: Any, timeout: float) -> PutReplyMsg:
        """Write a value and wait for completion; reply ok or a PutError code."""

    async def stop(self) -> None:
        """Release everything."""


@runtime_checkable
class CommandSource(Protocol):
    """A source whose protocol has commands (Tango): the runner serves
    ``cs.cmd.<proto>.…`` requests for sources that have this method. It never
    raises, it replies, within ``timeout`` per call to the device."""

    async def command(self, channel: Channel, arg: Any, timeout: float) -> CmdReplyMsg:
        """Run a command with an argument (``None``: none); reply with its output."""
