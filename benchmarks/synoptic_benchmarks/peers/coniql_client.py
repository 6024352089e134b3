"""A Coniql screen: GraphQL subscriptions over one WebSocket (``graphql-transport-ws``).

Coniql 0.4.2 serves Strawberry's GraphQL over WebSocket at ``/ws``: after
``connection_init`` / ``connection_ack`` the client sends one ``subscribe`` per PV
(``subscribeChannel(id: "ca://PV")``) and receives a ``next`` message per update of
each PV, the first one carrying its current value. Every update is a separate JSON
message. The fields asked for are the few a counting client needs (value, IOC
timestamp, alarm quality); a display client asks for more.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from synoptic_benchmarks.peers.tally import Tally

SUBPROTOCOL = "graphql-transport-ws"
QUERY = (
    'subscription {{ subscribeChannel(id: "ca://{pv}") '
    "{{ value {{ float }} time {{ seconds nanoseconds }} status {{ quality }} }} }}"
)


def subscribe_message(op_id: int, pv: str) -> str:
    """The ``subscribe`` message for one PV."""
    payload = {"query": QUERY.format(pv=pv)}
    return json.dumps({"id": str(op_id), "type": "subscribe", "payload": payload})


def parse_next(message: dict[str, Any]) -> tuple[int, float | None, float] | None:
    """``(operation id, value, IOC timestamp s)`` of a ``next`` message carrying a
    value update; ``None`` for any other message (metadata-only updates too)."""
    if message.get("type") != "next":
        return None
    data = (message.get("payload") or {}).get("data") or {}
    channel = data.get("subscribeChannel")
    if not channel or not channel.get("time"):
        return None
    value = (channel.get("value") or {}).get("float")
    return int(message["id"]), value, float(channel["time"]["seconds"])


class ConiqlScreen:
    """One client socket subscribed to ``pvs``; counts its updates in ``tally``."""

    def __init__(self, url: str, pvs: list[str], tally: Tally) -> None:
        self.url = url
        self.pvs = pvs
        self.tally = tally
        self.errors: list[dict[str, Any]] = []
        self._waiting = set(range(len(pvs)))
        self._all_first = asyncio.Event()
        self._ws: ClientConnection | None = None
        self._receiver: asyncio.Task[None] | None = None

    async def open(self, timeout: float = 120.0) -> float:
        """Connect, subscribe every PV; return seconds from socket open to the first
        value of every PV."""
        started = time.perf_counter()
        # No per-message-deflate: its cost would be Coniql's, not GraphQL's (aiohttp
        # accepts it when a client offers it, as browsers do).
        self._ws = ws = await connect(
            self.url, subprotocols=[SUBPROTOCOL], compression=None, max_size=None,
            open_timeout=timeout,
        )  # fmt: skip
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        while json.loads(await ws.recv()).get("type") != "connection_ack":
            pass
        self._receiver = asyncio.create_task(self._receive(ws))
        for op_id, pv in enumerate(self.pvs):
            await ws.send(subscribe_message(op_id, pv))
        await asyncio.wait_for(self._all_first.wait(), timeout)
        return time.perf_counter() - started

    async def _receive(self, ws: ClientConnection) -> None:
        tally, waiting = self.tally, self._waiting
        async for raw in ws:
            message = json.loads(raw)
            update = parse_next(message)
            if update is not None:
                op_id, value, stamp = update
                tally.count(op_id, value, stamp, time.time())
                if waiting:
                    waiting.discard(op_id)
                    if not waiting:
                        self._all_first.set()
            elif message.get("type") == "ping":
                await ws.send(json.dumps({"type": "pong"}))
            elif message.get("type") in ("error", "complete"):
                self.errors.append(message)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._receiver is not None:
            self._receiver.cancel()
            await asyncio.gather(self._receiver, return_exceptions=True)


async def run_worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Open one screen per PV set in ``spec['sets']`` on ``spec['url']`` one after
    the other, print ``subscribed``, count until ``spec['end']``; the result has
    the keys of ``synoptic_benchmarks.gateway.fanout``'s worker (no ``seq``: gaps are
    ``None``)."""
    tallies: list[Tally] = []
    screens: list[ConiqlScreen] = []
    opens: list[float] = []
    for pvs in spec["sets"]:
        tally = Tally(spec["start"], spec["end"])
        screen = ConiqlScreen(spec["url"], pvs, tally)
        opens.append(await screen.open())
        tallies.append(tally)
        screens.append(screen)
    print("subscribed", flush=True)
    await asyncio.sleep(max(0.0, spec["end"] - time.time()) + 0.2)
    for screen in screens:
        await screen.close()
    reports = [t.report() for t in tallies]
    latencies = [x for r in reports for x in r["latencies"]]
    return {
        "delivered": sum(r["delivered"] for r in reports),
        "gaps": None,
        "value_gaps": sum(r["value_gaps"] for r in reports),
        "missed_reported": None,
        "reconnects": 0,
        "errors": sum(len(s.errors) for s in screens),
        "opens": opens,
        "latencies": latencies[:: max(1, len(latencies) // 20_000)],
    }
