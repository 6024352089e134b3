"""Tango commands through a gateway: a real simulated device server, the Tango
adapter and a gateway with JWT grants; each command authorised and audited as a
write (ADR 0028)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import jwt
import numpy as np
import pytest

from synoptic_adapters.testing import SimTango
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas.codec import decode_audit

pytestmark = pytest.mark.system

SECRET = "test-secret-of-at-least-32-bytes-long!"


@pytest.fixture(scope="module")
def sim(nats_server: NatsServer) -> Iterator[SimTango]:
    server = SimTango().start()
    adapter = server.adapter(nats_server.url)
    try:
        adapter.start()
        yield server
    finally:
        adapter.close()
        server.stop()


@pytest.fixture(scope="module")
def secured(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gw = start_gateway(nats_server.url, "--jwt-secret", SECRET)
    yield gw
    gw.stop()


def _token(**claims: object) -> str:
    claims = {"sub": "alice", "exp": int(time.time()) + 600, **claims}
    return jwt.encode(claims, SECRET)


async def test_commands_need_a_grant_return_outputs_and_are_audited(
    sim: SimTango, secured: GatewayProc, nc: NatsClient
) -> None:
    audits: list[dict] = []
    audited = asyncio.Event()

    async def on_audit(msg) -> None:
        audits.append(decode_audit(msg.data))
        audited.set()

    await nc.subscribe("cs.audit.tango", cb=on_audit)
    await nc.flush()
    # grants match the normalised (lower-case) URI, like attributes
    grant = _token(write=[sim.uri("setlevel"), sim.uri("reverse")])
    async with GatewayClient(secured.ws_url, token=grant) as client:
        level = await client.command(sim.uri("SetLevel"), 12.5)
        assert level == {"op": "cmd", "id": level["id"], "ok": True, "v": 12.5}
        out = (await client.command(sim.uri("Reverse"), [1, 2, 3]))["v"]
        assert isinstance(out, np.ndarray) and out.tolist() == [3, 2, 1]
        wrong = await client.command(sim.uri("SetLevel"), "high")
        assert wrong["ok"] is False and wrong["err"] == "type"
        assert "'high' is not a number" in wrong["msg"]
        denied = await client.command(sim.uri("Reset"))
        assert denied["ok"] is False and denied["err"] == "denied"
        epics = await client.command("ca://SR:RESET")
        assert epics["err"] == "bad_request" and "Tango" in epics["msg"]
    async with asyncio.timeout(10):
        while len(audits) < 4:
            audited.clear()
            await audited.wait()
    assert all(a["op"] == "cmd" and a["who"] == "alice" for a in audits)
    by_result = {
        (a["v"] if not isinstance(a["v"], list) else "array"): a for a in audits
    }
    assert by_result[12.5]["ok"] is True and by_result[12.5]["ch"] == sim.uri(
        "setlevel"
    )
    assert by_result["high"]["err"] == "type"
    assert by_result[None]["err"] == "denied"
    assert "command by alice to " + sim.uri("setlevel") in secured.proc.output()


async def test_anonymous_gateway_refuses_commands(
    sim: SimTango, gateway: GatewayProc
) -> None:
    async with GatewayClient(gateway.ws_url) as client:
        reply = await client.command(sim.uri("Reset"))
        assert reply["ok"] is False and reply["err"] == "denied"
