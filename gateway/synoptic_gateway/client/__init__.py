"""Async Python client of the gateway protocol (tests, benchmarks, users' scripts).

::

    async with GatewayClient(["ws://gw1:8000/ws", "ws://gw2:8000/ws"]) as client:
        sub = await client.subscribe(["ca://SR:DCCT"], on_update=print_update)
        print(sub.value("ca://SR:DCCT"))

The client connects to one of several gateway URLs; when the connection drops (for
any close code but 4401) it reconnects with exponential backoff and full jitter,
trying the other URLs first, subscribes again and takes the fresh snapshots
(:mod:`.link`).

A gateway that hangs (process stopped, host frozen, a half-open TCP connection)
closes nothing: the client sends an application ``ping`` every ``ping_interval``
seconds and, if nothing at all (no ``pong``, no other frame) arrives within
``ping_timeout`` seconds of it, drops the connection and reconnects the same way.

:attr:`GatewayClient.received_ns` is the wall-clock time (ns) at which the frame
being dispatched reached this process: noted when the socket's bytes are parsed
into a message, before the message waits behind earlier ones, is decoded or handed
to callbacks (latency measurements: ``received_ns - value["t"]``;
:mod:`.arrival`).

Modules: :mod:`.api` (:class:`GatewayClient`: requests and the frames that answer
them), :mod:`.link` (connecting, keepalive, reconnecting), :mod:`.subscription`
(one channel set's live state), :mod:`.trace` (history answers).
"""

from synoptic_gateway.client.api import GatewayClient
from synoptic_gateway.client.arrival import ArrivalStampedConnection
from synoptic_gateway.client.errors import GatewayError
from synoptic_gateway.client.subscription import RESYNC_S, Subscription, UpdateCallback
from synoptic_gateway.client.trace import Trace

__all__ = [
    "RESYNC_S",
    "ArrivalStampedConnection",
    "GatewayClient",
    "GatewayError",
    "Subscription",
    "Trace",
    "UpdateCallback",
]
