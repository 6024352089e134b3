"""The `synoptic` bus commands, run as real processes against a real nats-server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.store import StoreConfig, ensure_store, store_barrier
from synoptic_schemas import Subjects, decode_cmd, decode_put, encode, parse_channel
from synoptic_schemas.codec import decode_want

SYNOPTIC = [str(Path(sys.executable).parent / "synoptic")]
SUBJECTS = Subjects()


async def run_cli(nats: NatsServer, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the command without blocking the event loop (tests answer requests)."""
    proc = await asyncio.create_subprocess_exec(
        *SYNOPTIC, *args, "--nats", nats.url,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    return subprocess.CompletedProcess(
        args, proc.returncode, out.decode(), err.decode()
    )


def value(v: object, seq: int, *, c: bool = True) -> bytes:
    return encode({"ver": 1, "v": v, "t": time.time_ns(), "sev": 0 if c else 3,
                   "st": "NO_ALARM" if c else "disconnected", "seq": seq, "ep": 1, "c": c})  # fmt: skip


async def test_bus_init_creates_the_stream(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    result = await run_cli(nats_server, "bus", "init")
    assert result.returncode == 0, result.stderr
    assert "CS_LAST ready" in result.stdout
    info = await nc.jetstream().stream_info("CS_LAST")
    assert info.config.max_msgs_per_subject == 1


async def test_get_prints_last_value_and_metadata(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    await ensure_store(nc, StoreConfig())
    channel = parse_channel("ca://CLI:GET")
    await nc.publish(SUBJECTS.val(channel), value(np.arange(3.0), 4))
    await nc.publish(SUBJECTS.meta(channel), encode({"ver": 1, "dt": "f8", "shape": [3],
                                                      "w": False, "t": 1, "ep": 1, "unit": "mm"}))  # fmt: skip
    await store_barrier(nc, StoreConfig().barrier_subject)  # stored, not only sent
    result = await run_cli(
        nats_server, "get", "ca://CLI:GET", "ca://CLI:ABSENT", "--wait", "0.5"
    )
    assert result.returncode == 1  # one channel has no value
    assert "ca://CLI:GET = float64[3] [0.,1.,2.] mm sev=0 NO_ALARM" in result.stdout
    assert '"unit": "mm"' in result.stdout
    assert (
        "ca://CLI:ABSENT: no value in the store, nor within 0.5 s of asking"
        in result.stdout
    )


async def fake_adapter(nc: NatsClient, wants: list[dict], v: float) -> None:
    """Stands in for an adapter with demand on: each announced channel gets a
    value (as a monitor's first update)."""

    async def on_want(msg) -> None:
        want = decode_want(msg.data)
        wants.append(want)
        for uri in want["ch"]:
            await nc.publish(SUBJECTS.val(parse_channel(uri)), value(v, len(wants)))

    await nc.subscribe("cs.want.ca", cb=on_want)
    await nc.flush()


async def test_get_asks_the_adapter_for_a_channel_on_demand(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    """A channel nobody watches yet has no value in the store: `get` announces
    demand for it, as a screen would, and prints the value its adapter publishes."""
    await ensure_store(nc, StoreConfig())
    wants: list[dict] = []
    await fake_adapter(nc, wants, 7.25)
    result = await run_cli(nats_server, "get", "ca://CLI:ONDEMAND")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ca://CLI:ONDEMAND = 7.25 sev=0 NO_ALARM" in result.stdout
    assert wants[0]["ch"] == ["ca://CLI:ONDEMAND"] and wants[0]["by"] == "synoptic-get"


async def test_tail_prints_decoded_updates_live(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    tail = Process("tail", [*SYNOPTIC, "tail", "cs.val.ca.*", "--count", "3",
                            "--nats", nats_server.url])  # fmt: skip
    try:
        tail.wait_for(r"^tailing cs\.val\.ca\.\*$", timeout=20)
        channel = parse_channel("ca://CLI:TAIL1")
        await nc.publish(SUBJECTS.val(channel), value(1.5, 1))
        await nc.publish(SUBJECTS.val(channel), value(3.0, 2))
        await nc.publish(SUBJECTS.val(channel), value(None, 3, c=False))
        await nc.flush()
        tail.wait_for(r"DISCONNECTED", timeout=20)
        assert tail.popen.wait(20) == 0
        assert (
            "ca://CLI:TAIL1 " in tail.output() and "sev=3 disconnected" in tail.output()
        )
    finally:
        tail.stop()


async def test_tail_of_a_channel_keeps_it_wanted(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    wants: list[dict] = []
    await fake_adapter(nc, wants, 1.5)
    tail = Process("tail", [*SYNOPTIC, "tail", "ca://CLI:TAILED", "--count", "1",
                            "--nats", nats_server.url])  # fmt: skip
    try:
        # in a thread: the fake adapter answers on this loop meanwhile
        await asyncio.to_thread(tail.wait_for, r"ca://CLI:TAILED 1\.5 sev=0", 20)
        assert await asyncio.to_thread(tail.popen.wait, 20) == 0
    finally:
        tail.stop()
    assert wants[0]["ch"] == ["ca://CLI:TAILED"]
    assert wants[0]["lease"] > 0


async def test_put_sends_a_request_and_prints_the_reply(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    channel = parse_channel("ca://CLI:PUT")
    received = []

    async def responder(msg) -> None:  # stands in for the owning adapter
        request = decode_put(msg.data)
        received.append(request)
        ok = isinstance(request["v"], float)
        reply = {"ver": 1, "ok": ok} if ok else {"ver": 1, "ok": False, "err": "type",
                                                 "msg": "expected a number"}  # fmt: skip
        await msg.respond(encode(reply))

    await nc.subscribe(SUBJECTS.put(channel), cb=responder)
    await nc.flush()
    good = await run_cli(nats_server, "put", "ca://CLI:PUT", "4.5")
    assert good.returncode == 0 and "put ca://CLI:PUT: ok" in good.stdout
    bad = await run_cli(nats_server, "put", "ca://CLI:PUT", "hello")
    assert bad.returncode == 1 and "type: expected a number" in bad.stdout
    assert [r["v"] for r in received] == [4.5, "hello"]
    nobody = await run_cli(
        nats_server, "put", "ca://CLI:NOBODY", "1", "--timeout", "0.5"
    )
    assert nobody.returncode == 2 and "no adapter answered" in nobody.stdout


async def test_command_runs_through_the_bus_and_prints_the_output(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    command = parse_channel("tango://tg:10000/sr/ps/1/SetLevel")
    received: list[dict] = []

    async def responder(msg) -> None:  # the owning adapter's part
        request = decode_cmd(msg.data)
        received.append(request)
        ok = isinstance(request.get("v"), float)
        reply = {"ver": 1, "ok": True, "v": request["v"]} if ok else {
            "ver": 1, "ok": False, "err": "type", "msg": "needs a DevDouble argument"}  # fmt: skip
        await msg.respond(encode(reply))

    await nc.subscribe(SUBJECTS.cmd(command), cb=responder)
    await nc.flush()
    good = await run_cli(nats_server, "command", command.uri, "2.5")
    assert good.returncode == 0
    assert f"command {command.uri}: ok → 2.5" in good.stdout
    bare = await run_cli(nats_server, "command", command.uri)
    assert bare.returncode == 1 and "type: needs a DevDouble" in bare.stdout
    assert [r.get("v", "none") for r in received] == [2.5, "none"]


async def test_tail_rejects_an_invalid_wildcard_clearly(
    nats_server: NatsServer,
) -> None:
    bad = await run_cli(nats_server, "tail", "cs.val.ca.X*")
    assert bad.returncode == 2 and "not a valid subject" in bad.stderr


async def test_tail_decodes_heartbeats(nats_server: NatsServer, nc: NatsClient) -> None:
    tail = Process("tail-hb", [*SYNOPTIC, "tail", "cs.hb.>", "--count", "1",
                               "--nats", nats_server.url])  # fmt: skip
    try:
        tail.wait_for(r"^tailing cs\.hb\.>$", timeout=20)
        beat = {"ver": 1, "id": "epics-0", "proto": "ca", "ep": 5, "t": time.time_ns(),
                "period": 1.0, "n": 10, "conn": 9}  # fmt: skip
        await nc.publish(Subjects().hb("epics-0"), encode(beat))
        await nc.flush()
        assert tail.popen.wait(20) == 0
        assert (
            "heartbeat epics-0 (ca) epoch 5: 9/10 channels connected" in tail.output()
        )
    finally:
        tail.stop()
