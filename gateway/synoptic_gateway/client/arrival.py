"""A WebSocket client connection that notes when each message reached the process
(latency measurements that do not count the time a message waits in the client)."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import Event

_MESSAGE_STARTS = frozenset({Opcode.BINARY, Opcode.TEXT})


class ArrivalStampedConnection(ClientConnection):
    """A client connection that notes when each data message starts to arrive
    (``time.time_ns()``, in :attr:`arrivals`, oldest first): when the event loop
    hands the socket's bytes to the protocol, before the message is queued behind
    others, decoded or handled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: arrival times of the data messages not yet taken by the reader
        self.arrivals: deque[int] = deque()

    def process_event(self, event: Event) -> None:
        if type(event) is Frame and event.opcode in _MESSAGE_STARTS:
            self.arrivals.append(time.time_ns())
        super().process_event(event)
