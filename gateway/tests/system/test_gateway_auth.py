"""Auth against a gateway with a JWT secret and an Origin allow-list: each refusal,
grants by channel pattern, and the audit record of every write."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import jwt
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas import encode, frames
from synoptic_schemas.codec import decode_audit, decode_put

pytestmark = pytest.mark.system

SECRET = "test-secret-of-at-least-32-bytes-long!"


def token(secret: str = SECRET, **claims) -> str:
    return jwt.encode({"sub": "op1", "exp": int(time.time()) + 600, **claims}, secret)


@pytest.fixture(scope="module")
def secured(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gw = start_gateway(nats_server.url, "--jwt-secret", SECRET,
                       "--allowed-origin", "http://good.example",
                       "--auth-timeout", "1")  # fmt: skip
    yield gw
    gw.stop()


async def _refused(url: str, **kwargs) -> tuple[dict, int]:
    async with connect(url, **kwargs) as ws:
        first = frames.unpack(await ws.recv())
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        return first, ws.close_code


def bearer(value: str) -> dict[str, dict[str, str]]:
    return {"additional_headers": {"Authorization": f"Bearer {value}"}}


@pytest.mark.parametrize(
    "value",
    [
        "not-a-jwt",
        token("another-secret-of-at-least-32-bytes"),
        token(exp=int(time.time()) - 60),
        jwt.encode({"read": ["*"]}, SECRET),  # no sub
    ],
    ids=["garbage", "bad-signature", "expired", "no-subject"],
)
async def test_bad_tokens_are_refused_with_4401(secured, value) -> None:
    first, code = await _refused(secured.ws_url, **bearer(value))
    assert first["op"] == "err" and first["code"] == "unauthorized"
    assert code == 4401


async def test_a_socket_without_a_token_is_closed_unless_it_sends_one(secured) -> None:
    """Browsers cannot set headers on a WebSocket: their token comes in an ``auth``
    frame; a socket that sends none in --auth-timeout is closed with 4401."""
    async with connect(secured.ws_url) as ws:
        hello = frames.unpack(await ws.recv())
        assert hello["user"] == "" and hello["write"] is False
        await ws.send(frames.pack(frames.sub(1, ["ca://ANY:PV"])))
        refusal = frames.unpack(await ws.recv())
        assert refusal["code"] == "forbidden"  # nothing may be read before a token
        async with asyncio.timeout(10):
            last = frames.unpack(await ws.recv())
            with pytest.raises(ConnectionClosed):
                await ws.recv()
    assert last["code"] == "unauthorized" and "no token" in last["msg"]
    assert ws.close_code == 4401
    async with connect(secured.ws_url) as ws:
        await ws.recv()
        await ws.send(frames.pack(frames.auth(1, token(sub="bob"))))
        answer = frames.unpack(await ws.recv())
        assert answer["op"] == "auth" and answer["user"] == "bob"
        await ws.send(frames.pack(frames.sub(2, ["ca://ANY:PV"])))
        assert frames.unpack(await ws.recv())["op"] == "snap"


async def test_a_token_in_the_url_is_not_taken(secured) -> None:
    async with connect(secured.ws_url + f"?access_token={token()}") as ws:
        assert frames.unpack(await ws.recv())["user"] == ""
        last = frames.unpack(await ws.recv())
        assert last["code"] == "unauthorized" and "no token" in last["msg"]
    assert secured.api("GET", f"/api/whoami?access_token={token()}")[0] == 401


async def test_origin_outside_the_allow_list_is_refused(secured) -> None:
    with pytest.raises(InvalidStatus) as info:
        async with connect(secured.ws_url, origin="http://evil.example",
                           **bearer(token())):  # fmt: skip
            pass
    assert info.value.response.status_code == 403
    async with connect(secured.ws_url, origin="http://good.example",
                       additional_headers={"Authorization": f"Bearer {token()}"}) as ws:  # fmt: skip
        hello = frames.unpack(await ws.recv())
        assert hello["op"] == "hello" and hello["user"] == "op1"


async def test_reads_are_limited_to_the_granted_patterns(secured, names) -> None:
    allowed = names[0].rsplit(":", 1)[0] + ":*"
    async with GatewayClient(secured.ws_url, token=token(read=[allowed])) as client:
        assert client.hello["write"] is False
        await client.subscribe(names[:2])
        with pytest.raises(GatewayError) as info:
            await client.subscribe([names[0], "ca://OTHER:PV"])
        assert (
            info.value.code == "forbidden" and info.value.frame["ch"] == "ca://OTHER:PV"
        )


async def test_writes_need_a_grant_and_each_is_audited(
    secured, names, nc: NatsClient
) -> None:
    audits: list[dict] = []
    audited = asyncio.Event()

    async def on_audit(msg) -> None:
        audits.append(decode_audit(msg.data))
        audited.set()

    requests: list[dict] = []

    async def adapter(msg) -> None:  # answers puts of names[1] like an adapter
        requests.append(decode_put(msg.data))
        await msg.respond(encode({"ver": 1, "ok": True}))

    await nc.subscribe("cs.audit.ca", cb=on_audit)
    await nc.subscribe(f"cs.put.ca.{names[1].removeprefix('ca://')}", cb=adapter)
    await nc.flush()
    grant = token(sub="alice", write=[names[1], names[2]])
    async with GatewayClient(secured.ws_url, token=grant) as client:
        assert client.hello["write"] is True
        denied = await client.put(names[0], 1.0)
        assert denied["ok"] is False and denied["err"] == "denied"
        done = await client.put(names[1], 2.5)
        assert done == {"op": "put", "id": done["id"], "ok": True}
        assert requests == [{"ver": 1, "v": 2.5, "who": "alice", "timeout": 5.0}]
        orphan = await client.put(names[2], 3)  # granted, but no adapter owns it
        assert orphan["ok"] is False and orphan["err"] == "unknown"
    async with asyncio.timeout(10):
        while len(audits) < 3:
            audited.clear()
            await audited.wait()
    by_channel = {a["ch"]: a for a in audits}
    assert (
        by_channel[names[0]]["ok"] is False and by_channel[names[0]]["err"] == "denied"
    )
    assert by_channel[names[1]]["ok"] is True and by_channel[names[1]]["v"] == 2.5
    assert by_channel[names[2]]["err"] == "unknown"
    assert {a["who"] for a in audits} == {"alice"}
    assert all(a["by"] == secured.gateway_id() for a in audits)
    assert "write by alice to " + names[1] in secured.proc.output()


async def test_anonymous_gateway_refuses_writes(gateway, names) -> None:
    async with GatewayClient(gateway.ws_url) as client:
        assert client.hello["user"] == "anonymous" and client.hello["write"] is False
        reply = await client.put(names[0], 1)
        assert reply["ok"] is False and reply["err"] == "denied"


async def test_connection_ends_when_its_token_expires(secured) -> None:
    short = token(exp=int(time.time()) + 2)
    async with connect(secured.ws_url, **bearer(short)) as ws:
        assert frames.unpack(await ws.recv())["op"] == "hello"
        async with asyncio.timeout(10):
            last = frames.unpack(await ws.recv())
            with pytest.raises(ConnectionClosed):
                await ws.recv()
    assert last["code"] == "unauthorized" and "expired" in last["msg"]
    assert ws.close_code == 4401


@pytest.mark.parametrize(
    "path",
    ["/api/screens", "/api/screens/any", "/api/screens/any/history",
     "/api/screens/any/revisions/1", "/api/channels?prefix=a", "/api/whoami"],
)  # fmt: skip
def test_screen_reads_need_a_token_where_anonymous_is_off(secured, path) -> None:
    assert secured.api("GET", path)[0] == 401
    assert secured.api("GET", path, token="garbage")[0] == 401
    assert secured.api("GET", path, token=token())[0] != 401
