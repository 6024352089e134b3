"""The alarms HTTP API against a real alarm service: acknowledge and shelve by the
signed-in user, authorised by the ack grant and audited (refusals included); the
list; the alarm tree read, saved (conditional, validated) and imported."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from websockets.asyncio.client import connect

from synoptic_alarms.testing import AlarmProcess, FakeAdapter, StateTap
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas import decode
from synoptic_schemas.jsonschemas import validator

SECRET = "alarm-test-secret-of-at-least-32-bytes!"
TREE = json.dumps({"name": "Plant", "children": [
    {"name": "Vacuum", "channels": ["ca://GWA:P1", "ca://GWA:P2", "ca://OTHER:Z"]},
]})  # fmt: skip
CORPUS = Path(__file__).parents[3] / "importer" / "tests" / "corpus"


def token(**claims: Any) -> str:
    return jwt.encode({"sub": "alice", "exp": int(time.time()) + 600, **claims}, SECRET)


@pytest.fixture(scope="module")
def alarms(nats_server: NatsServer) -> Iterator[AlarmProcess]:
    service = AlarmProcess(nats_server.url, TREE, no_data_after=600).start()
    try:
        yield service
    finally:
        service.close()


@pytest.fixture(scope="module")
def gw(nats_server: NatsServer, alarms: AlarmProcess) -> Iterator[GatewayProc]:
    gateway = start_gateway(
        nats_server.url, "--jwt-secret", SECRET, "--allow-anonymous"
    )
    try:
        yield gateway
    finally:
        gateway.stop()


class Audits(list[dict[str, Any]]):
    """The alarm audit records as they come."""

    def __init__(self) -> None:
        super().__init__()
        self.came = asyncio.Event()

    async def on(self, msg: Any) -> None:
        self.append(decode(msg.data))
        self.came.set()

    async def wait(self, count: int) -> None:
        async with asyncio.timeout(10):
            while len(self) < count:
                self.came.clear()
                await self.came.wait()


async def audits(nc: NatsClient) -> Audits:
    found = Audits()
    await nc.subscribe("cs.audit.alarms", cb=found.on)
    await nc.flush()
    return found


async def api(
    gw: GatewayProc, *args: Any, **kw: Any
) -> tuple[int, Any, dict[str, str]]:
    return await asyncio.to_thread(gw.api, *args, **kw)


async def test_acknowledge_needs_the_grant_and_every_request_is_audited(
    nc: NatsClient, gw: GatewayProc
) -> None:
    tap = await StateTap().attach(nc)
    audit = await audits(nc)
    adapter = FakeAdapter(nc)
    await adapter.beat()
    for uri in ("ca://GWA:P1", "ca://OTHER:Z"):
        await adapter.sev(uri, 2, "HIHI", v=9.0)
    await tap.wait("ca://OTHER:Z", lambda s: s["lat"] == 2)
    operator = token(ack=["ca://GWA:*"])
    status, body, _ = await api(gw, "POST", "/api/alarms/ack",
                                {"ch": ["ca://GWA:P1", "ca://OTHER:Z", "ca://GWA:NONE"]},
                                token=operator)  # fmt: skip
    assert status == 200, body
    assert body == {"ok": False, "n": 1,
                    "fail": {"ca://OTHER:Z": "denied", "ca://GWA:NONE": "unknown"}}  # fmt: skip
    state = await tap.wait("ca://GWA:P1", lambda s: s["ackd"])
    assert state["who"] == "alice" and state["ack"]["by"] == "alice"
    # no grant at all, and anonymous: refused whole
    status, body, _ = await api(gw, "POST", "/api/alarms/ack", {"ch": ["ca://OTHER:Z"]},
                                token=token())  # fmt: skip
    assert status == 403 and body["error"] == "forbidden"
    status, body, _ = await api(gw, "POST", "/api/alarms/ack", {"ch": ["ca://OTHER:Z"]})
    assert status == 403
    await audit.wait(3)
    for record in audit:
        validator("alarm-audit").validate(record)
    assert [(r["who"], r["ok"], r.get("err")) for r in audit] == [
        ("alice", False, None), ("alice", False, "denied"), ("anonymous", False, "denied"),
    ]  # fmt: skip
    assert audit[0]["fail"] == {"ca://OTHER:Z": "denied", "ca://GWA:NONE": "unknown"}
    # the list shows what is active, with the counts
    status, body, _ = await api(gw, "GET", "/api/alarms")
    assert status == 200
    listed = {s["ch"]: s for s in body["alarms"]}
    assert listed["ca://GWA:P1"]["ackd"] and not listed["ca://OTHER:Z"]["ackd"]
    assert (body["unack"], body["act"]) == (1, 2)


async def next_frame(ws: Any, op: str = "alarms") -> dict[str, Any]:
    """The next frame of ``op`` (hello and others skipped)."""
    async with asyncio.timeout(15):
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("op") == op:
                return frame


async def test_open_pages_follow_the_list_and_headers_the_counts(
    nc: NatsClient, gw: GatewayProc
) -> None:
    check = validator("frames")
    async with (
        connect(gw.ws_url + "?format=json") as page,
        connect(gw.ws_url + "?format=json") as header,
    ):
        await page.send(json.dumps({"op": "alarms", "id": 1, "full": True}))
        await header.send(json.dumps({"op": "alarms", "id": 2}))
        first = await next_frame(page)
        check.validate(first)
        counts = await next_frame(header)
        check.validate(counts)
        assert first["id"] == 1 and "all" not in counts
        held = {s["ch"]: s for s in first["all"]}
        assert held["ca://OTHER:Z"]["lat"] == 2 and not held["ca://OTHER:Z"]["ackd"]
        unack = counts["unack"]
        status, _, _ = await api(gw, "POST", "/api/alarms/ack", {"ch": ["ca://OTHER:Z"]},
                                 token=token(ack=["*"]))  # fmt: skip
        assert status == 200
        update = await next_frame(page)
        check.validate(update)
        (state,) = [s for s in update["up"] if s["ch"] == "ca://OTHER:Z"]
        assert state["ackd"] and state["who"] == "alice"
        counted = await next_frame(header)
        assert counted["unack"] == unack - 1 and "up" not in counted
        await page.send(json.dumps({"op": "alarms", "id": 3, "off": True}))
        assert (await next_frame(page))["id"] == 3
        await page.send(json.dumps({"op": "alarms", "id": 4, "full": "yes"}))
        error = await next_frame(page, "err")
        assert error["id"] == 4 and "alarms.full" in error["msg"]


async def test_a_shelve_needs_a_reason_and_a_duration(
    nc: NatsClient, gw: GatewayProc
) -> None:
    operator = token(ack=["*"])
    for bad in ({"ch": ["ca://GWA:P2"]}, {"ch": ["ca://GWA:P2"], "why": "x"},
                {"ch": ["ca://GWA:P2"], "why": "x", "minutes": 99999999},
                {"ch": []}, {"nope": 1}):  # fmt: skip
        status, body, _ = await api(
            gw, "POST", "/api/alarms/shelve", bad, token=operator
        )
        assert status == 400 and body["error"] == "bad_request", bad
    status, body, _ = await api(gw, "POST", "/api/alarms/shelve",
                                {"ch": ["ca://GWA:P2"], "why": "pump swap", "minutes": 5},
                                token=operator)  # fmt: skip
    assert (status, body["ok"]) == (200, True)
    status, body, _ = await api(gw, "POST", "/api/alarms/explode", {"ch": ["x"]})
    assert status == 404


async def test_the_tree_is_read_saved_conditionally_and_imported(
    gw: GatewayProc,
) -> None:
    status, body, _ = await api(gw, "GET", "/api/alarms/tree")
    assert status == 200 and body["tree"]["name"] == "Plant" and not body["editable"]
    revision = body["revision"]
    editor = token(screens=["alarm-tree"])
    status, body, _ = await api(gw, "GET", "/api/alarms/tree", token=editor)
    assert body["editable"]
    tree = {
        "name": "Plant",
        "children": [{"name": "Vacuum", "channels": ["ca://GWA:P1"]}],
    }
    status, body, _ = await api(gw, "PUT", "/api/alarms/tree",
                                {"tree": tree, "base_revision": revision}, token=token())  # fmt: skip
    assert status == 403
    status, body, _ = await api(gw, "PUT", "/api/alarms/tree",
                                {"tree": tree, "base_revision": revision,
                                 "summary": "fewer"}, token=editor)  # fmt: skip
    assert status == 200 and body["by"] == "alice", body
    status, body, _ = await api(gw, "PUT", "/api/alarms/tree",
                                {"tree": tree, "base_revision": revision}, token=editor)  # fmt: skip
    assert status == 409 and body["by"] == "alice"
    bad = {"name": "Plant", "children": [{"name": "A", "channels": ["nope://x"]}]}
    status, body, _ = await api(gw, "PUT", "/api/alarms/tree",
                                {"tree": bad, "base_revision": revision + 1}, token=editor)  # fmt: skip
    assert status == 422 and body["pointer"] == "/children/0/channels/0"
    xml = (CORPUS / "alarms-accelerator.xml").read_bytes()
    status, body, _ = await api(gw, "POST", "/api/alarms/tree/import?file=acc.xml",
                                data=xml, token=editor)  # fmt: skip
    assert status == 200 and body["tree"]["name"] == "Accelerator"
    assert body["report"]["channels"] == 5
    status, body, _ = await api(gw, "POST", "/api/alarms/tree/import?file=bad.xml",
                                data=b"<config name='A'>\n<pv>\n", token=editor)  # fmt: skip
    assert status == 422 and body["line"] == 3


async def test_without_an_alarm_service_requests_are_unavailable(
    nc: NatsClient, gw: GatewayProc, alarms: AlarmProcess
) -> None:
    audit = await audits(nc)
    alarms.stop()
    status, body, _ = await api(gw, "POST", "/api/alarms/ack", {"ch": ["ca://GWA:P1"]},
                                token=token(ack=["*"]))  # fmt: skip
    assert status == 503 and body["error"] == "unavailable"
    await audit.wait(1)
    assert audit[0]["err"] == "unavailable"
