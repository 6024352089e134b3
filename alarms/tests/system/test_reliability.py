"""The alarm service as a process against a real nats-server (file storage), a
soft IOC, a Tango device server and their adapters: restarted, killed with -9,
NATS restarted — no acknowledgement or shelve lost, latched alarms stay latched,
no state reported twice; sources that disconnect show as such, never cleared."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from synoptic_adapters.testing import EpicsAdapter, SimIoc, SimTango
from synoptic_alarms.testing import AlarmProcess, StateTap, request
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_schemas import Subjects, decode_put_reply, encode, parse_channel
from synoptic_schemas.alarms import AlarmMsg, decode_alarm

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    store = tmp_path_factory.mktemp("js")
    nats = NatsServer(store_dir=Path(store)).start()
    try:
        yield nats
    finally:
        nats.close()


@pytest.fixture
async def client(server: NatsServer) -> AsyncIterator[NatsClient]:
    nc = await connect(server.url, name="test")
    try:
        yield nc
    finally:
        await nc.close()


async def put(nc: NatsClient, uri: str, value: Any) -> None:
    """Write through the adapter (asking again while it reconnects to NATS)."""
    subject = Subjects().put(parse_channel(uri))
    async with asyncio.timeout(60):
        while True:
            try:
                reply = await nc.request(subject, encode({"ver": 1, "v": value}),
                                         timeout=5)  # fmt: skip
                break
            except (NatsTimeoutError, NoRespondersError):
                await asyncio.sleep(0.5)
    assert decode_put_reply(reply.data)["ok"], reply.data


async def stored_history(nc: NatsClient, uri: str) -> list[AlarmMsg]:
    """Every state of ``uri`` the CS_ALARM stream holds, in order."""
    js = nc.jetstream()
    subject = Subjects().alarm(parse_channel(uri))
    sub = await js.subscribe(subject, ordered_consumer=True, deliver_policy=None)
    out: list[AlarmMsg] = []
    info = await js.stream_info("CS_ALARM", subjects_filter=subject)
    total = sum((info.state.subjects or {}).values())
    try:
        async with asyncio.timeout(20):
            while len(out) < total:
                msg = await sub.next_msg(timeout=10)
                out.append(decode_alarm(msg.data))
    finally:
        await sub.unsubscribe()
    return out


def tree_for(ioc: SimIoc) -> str:
    return json.dumps({
        "name": "Test",
        "children": [
            {"name": "Power", "channels": [{"ch": ioc.uri("SP"), "desc": "setpoint"}]},
            {"name": "Tango", "patterns": ["tango://*/sim/test/1/alarm"]},
        ],
    })  # fmt: skip


async def test_restarts_kills_and_a_nats_restart_lose_nothing_and_repeat_nothing(
    server: NatsServer, client: NatsClient
) -> None:
    with SimIoc(records=1) as ioc:
        ioc.start()
        sp = ioc.uri("SP")
        with EpicsAdapter(server.url, ioc, [sp]) as adapter:
            adapter.start()
            service = AlarmProcess(server.url, tree_for(ioc)).start()
            try:
                tap = await StateTap().attach(client)
                await put(client, sp, 95.0)  # MAJOR (HIHI 90)
                await tap.wait(sp, lambda s: s["lat"] == 2)
                reply = await request(client, "ack", [sp], "alice")
                assert reply["ok"] and reply["n"] == 1
                reply = await request(client, "shelve", [sp], "bob",
                                      why="supply swap", minutes=30)  # fmt: skip
                assert reply["ok"]
                before = await tap.wait(sp, lambda s: "shelf" in s and s["ackd"])

                # a clean restart: the same state, nothing published again
                service.stop()
                service.start()
                await client.flush()  # whatever it published at start has come
                assert tap.latest(sp) == before and tap.repeats == 0

                # killed; transitions while it is down are applied when it is back
                service.kill()
                await put(client, sp, 50.0)  # clears: it was acknowledged
                service.start()
                state = await tap.wait(sp, lambda s: s["lat"] == 0)
                assert (state["n"], state["ev"]) == (before["n"] + 1, "sev")
                assert state["shelf"]["by"] == "bob"  # the shelve is kept

                service.kill()
                await put(client, sp, 95.0)
                await put(client, sp, 50.0)  # MAJOR and back while it is down
                service.start()
                state = await tap.wait(sp, lambda s: s["sev"] == 0 and s["lat"] == 2)
                assert not state["ackd"]  # latched: nobody saw it

                # NATS restarts (the streams are on file)
                server.restart()
                await put(client, sp, 3.0)  # MINOR (LOW 5)
                state = await tap.wait(sp, lambda s: s["sev"] == 1)
                assert (state["lat"], state["ackd"], "shelf" in state) == (
                    2,
                    False,
                    True,
                )

                history = await stored_history(client, sp)
                ns = [s["n"] for s in history]
                assert ns == list(range(ns[0], ns[0] + len(ns))), ns  # each n once
                events = [s["ev"] for s in history]
                assert events.count("ack") == 1 and events.count("shelve") == 1
            finally:
                service.close()


async def test_sources_that_go_away_show_as_disconnected_not_cleared(
    server: NatsServer, client: NatsClient
) -> None:
    tango = SimTango().start()
    ioc = SimIoc(records=1).start()
    try:
        sp = ioc.uri("SP")
        alarm = tango.uri("alarm")
        epics = EpicsAdapter(server.url, ioc, [sp]).start()
        tango_adapter = tango.adapter(server.url, [alarm]).start()
        service = AlarmProcess(server.url, tree_for(ioc), no_data_after=60,
                               bucket="disconnects").start()  # fmt: skip
        tap = await StateTap().attach(client)
        try:
            # the Tango attribute crosses its limits by itself (a sine of ±10)
            state = await tap.wait(alarm, lambda s: s["lat"] >= 2, timeout=60)
            assert state["area"] == "Test/Tango"
            await put(client, sp, 50.0)
            ioc.stop()  # the IOC goes away: its adapter says disconnected
            state = await tap.wait(sp, lambda s: not s["c"], timeout=60)
            assert (state["sev"], state["lat"]) == (3, 3)
            tango_adapter.process.kill()  # type: ignore[union-attr]  # kill -9: no word
            state = await tap.wait(alarm, lambda s: s["ev"] == "nodata", timeout=30)
            assert (state["sev"], state["st"], state["c"]) == (3, "no data", False)
            assert state["lat"] == 3
        finally:
            service.close()
            tango_adapter.close()
            epics.close()
    finally:
        ioc.stop()
        tango.stop()
