"""The EPICS adapter when things go away: the IOC dies and comes back, NATS
restarts mid-stream, the adapter itself is stopped."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from synoptic_adapters.testing import EpicsAdapter, SimIoc, eventually
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.store import fetch_last
from synoptic_schemas import (
    SCHEMA_VERSION,
    Subjects,
    decode_put_reply,
    decode_value,
    encode,
    parse_channel,
)

pytestmark = pytest.mark.system
SUBJECTS = Subjects()


@pytest.fixture
async def own_nats() -> AsyncIterator[NatsServer]:
    """A nats-server this test may restart."""
    server = NatsServer().start()
    try:
        yield server
    finally:
        server.close()


async def tap(nc: NatsClient, uri: str) -> list[dict[str, Any]]:
    values: list[dict[str, Any]] = []

    async def on_msg(msg: Any) -> None:
        values.append(decode_value(msg.data))

    await nc.subscribe(SUBJECTS.val(parse_channel(uri)), cb=on_msg)
    await nc.flush()
    return values


async def test_ioc_killed_then_restarted(
    nc: NatsClient, nats_server: NatsServer
) -> None:
    ioc = SimIoc(records=2, extras=False).start()
    adapter = EpicsAdapter(nats_server.url, ioc, [ioc.uri("CNT:00000")]).start()
    try:
        values = await tap(nc, ioc.uri("CNT:00000"))
        await eventually(lambda: values and values[-1]["c"])
        ioc.kill()
        killed_at = time.monotonic()
        gone = await eventually(
            lambda: next((v for v in values if not v["c"]), None), timeout=10
        )
        assert time.monotonic() - killed_at <= 5.0
        assert (gone["sev"], gone["v"], gone["st"]) == (3, None, "disconnected")
        seen = len(values)
        ioc.start()  # same port and prefix
        back = await eventually(
            lambda: next((v for v in values[seen:] if v["c"]), None), timeout=60
        )
        assert back["sev"] == 0 and back["seq"] > gone["seq"]
        await eventually(lambda: len(values) > seen + 5)  # updating again
    finally:
        adapter.close()
        ioc.stop()


async def test_nats_restart_mid_stream(own_nats: NatsServer) -> None:
    ioc = SimIoc(records=3, extras=False).start()
    uris = [ioc.uri(f"CNT:0000{i}") for i in range(3)]
    adapter = EpicsAdapter(own_nats.url, ioc, uris).start()
    nc = await connect(own_nats.url, name="test-restart")
    try:
        subjects = [SUBJECTS.val(parse_channel(u)) for u in uris]
        live = await tap(nc, uris[0])
        await eventually(lambda: len(live) >= 3)
        own_nats.restart()  # memory store lost; the adapter must refill it
        start = time.monotonic()

        async def latest() -> dict[str, dict[str, Any]] | None:
            try:
                snap = await fetch_last(nc, subjects)
            except Exception:
                return None
            if snap.missing(subjects):
                return None
            return {s: decode_value(snap.messages[s]) for s in subjects}

        async with asyncio.timeout(60):
            while True:
                if (stored := await latest()) is not None:
                    break
                await asyncio.sleep(0.2)
        assert time.monotonic() - start < 60
        assert all(v["c"] for v in stored.values())
        # and the store keeps up with live values afterwards
        before = stored[subjects[0]]["v"]
        async with asyncio.timeout(10):
            while True:
                now = await latest()
                if now is not None and now[subjects[0]]["v"] > before:
                    break
                await asyncio.sleep(0.2)
        assert (
            adapter.process is not None
            and "NATS reconnected" in adapter.process.output()
        )
    finally:
        await nc.close()
        adapter.close()
        ioc.stop()


async def test_sigterm_publishes_disconnected_and_exits_cleanly(
    nc: NatsClient, nats_server: NatsServer
) -> None:
    ioc = SimIoc(records=1, extras=False).start()
    adapter = EpicsAdapter(nats_server.url, ioc, [ioc.uri("CNT:00000")]).start()
    try:
        values = await tap(nc, ioc.uri("CNT:00000"))
        await eventually(lambda: values and values[-1]["c"])
        code = await asyncio.to_thread(adapter.stop)
        assert code == 0
        await eventually(lambda: not values[-1]["c"])
        assert values[-1]["st"] == "adapter stopped"
    finally:
        adapter.close()
        ioc.stop()


async def test_a_put_the_ioc_does_not_complete_in_time_times_out(
    nc: NatsClient, nats_server: NatsServer
) -> None:
    ioc = SimIoc(records=1, extras=True).start()
    adapter = EpicsAdapter(nats_server.url, ioc, [ioc.uri("SP")]).start()
    assert ioc.process is not None
    try:
        values = await tap(nc, ioc.uri("SP"))
        await eventually(lambda: values and values[-1]["c"])
        ioc.process.signal(signal.SIGSTOP)  # connected, but answers nothing
        request = {"ver": SCHEMA_VERSION, "v": 7.0, "who": "test", "timeout": 1.0}
        subject = SUBJECTS.put(parse_channel(ioc.uri("SP")))
        started = time.monotonic()
        msg = await nc.request(subject, encode(request), timeout=10)
        reply = decode_put_reply(msg.data)
        assert (reply["ok"], reply["err"]) == (False, "timeout")
        assert "no completion within 1 s" in reply["msg"]
        assert time.monotonic() - started < 5
    finally:
        if ioc.process is not None:
            ioc.process.signal(signal.SIGCONT)
        adapter.close()
        ioc.stop()
