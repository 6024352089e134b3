"""A screen at a moment (``at``) through a real gateway: a real soft IOC and CA
adapter publish onto a real nats-server with the bus's history streams and the
rollup; a subscriber records every value and metadata message as it arrives.
The gateway's answer at many moments equals what the subscriber had seen by each
of them, for a counter, a sine crossing its alarm limits (severity), an enum, a
string and a waveform (kept by the rollup as a large value), across a change of
metadata (units) and an IOC restart (the outage shown as disconnected). A large
value is shown as the copy the rollup kept by then (at most its tick older)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from synoptic_adapters.testing import EpicsAdapter, SimIoc, ca_batch
from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.testing import Changes, GatewayProc
from synoptic_schemas import Subjects, decode

pytestmark = [pytest.mark.system, pytest.mark.timeout(400)]

NAMES = ["CNT:00000", "SINE", "STATE", "MSG", "SP", "WF1K"]
#: How far the subscriber's clock may read an arrival from the bus's store time
#: (ns): its event loop on a busy machine.
MARGIN = 250_000_000
#: How much older than the live one the copy of a large value kept then may be
#: (the rollup stores large values at its tick, 1 s; on a busy machine its ticks
#: were seen 2.7 s apart).
ARRAY_LAG = 6_000_000_000
_SUBJECTS = Subjects()


class Recorder(Changes):
    """Every value and metadata message on the bus, with when it arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        self.metas: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)

    async def start(self, nc: NatsClient) -> Recorder:
        async def on_msg(msg: Any) -> None:
            now = time.time_ns()
            kind, channel = _SUBJECTS.parse(msg.subject)
            book = self.values if kind == "val" else self.metas
            book[channel.uri].append((now, decode(msg.data)))
            self.note()

        await nc.subscribe("cs.val.>", cb=on_msg)
        await nc.subscribe("cs.meta.>", cb=on_msg)
        await nc.flush()
        return self

    def count(self, uri: str) -> int:
        return len(self.values[uri])

    def connected(self, uri: str) -> bool | None:
        got = self.values[uri]
        return got[-1][1]["c"] if got else None


def candidates(
    book: list[tuple[int, dict[str, Any]]], t_ns: int
) -> list[dict[str, Any]]:
    """What the bus may have stored by ``t_ns``: the last message that arrived
    by ``t_ns - MARGIN`` (None: none) and every one that arrived within MARGIN of
    ``t_ns``, or later but stamped by then (a message is stored after its source
    time, on the same clock: a subscriber starved of CPU on a busy machine reads
    its arrival seconds late)."""
    before = [m for t, m in book if t <= t_ns - MARGIN][-1:] or [None]
    return before + [
        m for t, m in book
        if abs(t - t_ns) < MARGIN or (t >= t_ns + MARGIN and m.get("t", t) <= t_ns)
    ]  # fmt: skip


def same_value(got: dict[str, Any], want: dict[str, Any]) -> bool:
    for key in ("t", "sev", "st", "seq", "ep", "c"):
        if got.get(key) != want.get(key):
            return False
    a, b = got.get("v"), want.get("v")
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and np.array_equal(a, b)
    return a == b


async def test_a_screen_at_a_moment_is_what_a_subscriber_saw_then(
    rewind_streams: Process,
    gateway: GatewayProc,
    nats_server: NatsServer,
    nc: NatsClient,
) -> None:
    ioc = SimIoc(records=1, rate=5.0).start()
    uris = [ioc.uri(n) for n in NAMES]
    sine, sp, counter = ioc.uri("SINE"), ioc.uri("SP"), ioc.uri("CNT:00000")
    recorder = await Recorder().start(nc)
    adapter = EpicsAdapter(nats_server.url, ioc, uris).start()
    try:
        await recorder.until(
            lambda: all(recorder.values[u] and recorder.metas[u] for u in uris)
        )
        start = recorder.count(counter)
        await recorder.until(lambda: recorder.count(counter) >= start + 15)
        # metadata changes: the units of SP
        await asyncio.to_thread(ca_batch, ioc, [("put", ioc.pv("SP.EGU"), "mA")])
        await recorder.until(
            lambda: recorder.metas[sp][-1][1].get("unit") == "mA", timeout=30
        )
        start = recorder.count(counter)
        await recorder.until(lambda: recorder.count(counter) >= start + 15)
        # the waveform fills (a circular buffer growing by one sample per SINE
        # update): some seconds of it too large for the raw history (1 KiB with
        # headers: 128 doubles), kept by the rollup only
        wf = ioc.uri("WF1K")
        await recorder.until(lambda: len(recorder.values[wf][-1][1]["v"]) >= 170)
        # the IOC dies: every channel is shown disconnected; then it is back
        ioc.kill()
        await recorder.until(lambda: all(recorder.connected(u) is False for u in uris))
        down_at = time.time_ns()
        ioc.start()
        await recorder.until(lambda: all(recorder.connected(u) for u in uris))
        start = recorder.count(counter)
        await recorder.until(lambda: recorder.count(counter) >= start + 10)
        sev_seen = {m["sev"] for _, m in recorder.values[sine]}
    finally:
        adapter.close()
        ioc.stop()

    first = min(t for u in uris for t, _ in recorder.values[u])
    last = max(t for u in uris for t, _ in recorder.values[u])
    # a record not processed yet after the IOC's start (EPICS time stamp 0, 1990)
    # is published with its arrival time: nothing is kept as a value from 1990
    assert all(m["t"] > first - 60 * 10**9 for u in uris for _, m in recorder.values[u])
    moments = list(range(first + 50_000_000, last, 131_000_000))
    checked: dict[str, int] = defaultdict(int)
    sources: dict[str, set[str]] = defaultdict(set)
    down_checked = 0
    units_seen: set[str] = set()
    async with GatewayClient([gateway.ws_url]) as client:
        for t_ns in moments:
            answer = await client.at([*uris, "nope"], t_ns / 1e6)
            assert answer["ch"] == [*uris, "nope"] and answer["t"] == t_ns / 1e6
            assert answer["err"][-1]["code"] == "bad_channel"
            for i, uri in enumerate(uris):
                maybe = candidates(recorder.values[uri], t_ns)
                got = answer["val"][i]
                if got is None and None in maybe:
                    assert answer["err"][i]["code"] == "not_kept", answer["err"][i]
                    assert answer["err"][i]["since"] >= (t_ns - MARGIN) / 1e6
                else:
                    assert got is not None, (uri, answer["err"][i])
                    if uri == wf:
                        # a large value is kept by the rollup at its next tick
                        # (1 s): the copy shown then is one seen live, at most a
                        # tick or so earlier
                        assert got.get("kt", 0) <= t_ns / 1e6
                        assert any(m and same_value(got, m) for m in maybe) or any(
                            same_value(got, m)
                            for at, m in recorder.values[uri]
                            if t_ns - ARRAY_LAG <= at <= t_ns + MARGIN
                        ), (
                            uri, answer["src"][i], got.get("kt"), t_ns / 1e6,
                            [(at / 1e6, m["seq"], m["c"]) for at, m in recorder.values[uri]
                             if abs(at - t_ns) < 5 * 10**9],
                            got["seq"], got["c"],
                        )  # fmt: skip
                    else:
                        assert any(m and same_value(got, m) for m in maybe), (
                            uri, t_ns, got,
                        )  # fmt: skip
                        # a waveform's first values are short (a growing
                        # circular buffer): raw until over 512 bytes (the raw
                        # history's message limit, 1 KiB here, less 512)
                        assert answer["src"][i] == "raw", answer["src"]
                    sources[uri].add(answer["src"][i])
                    checked[uri] += len(maybe) == 1  # one possible value: exact
                    down_checked += uri == counter and got["c"] is False
                metas = candidates(recorder.metas[uri], t_ns)
                if metas != [None]:
                    assert answer["meta"][i] in metas or (
                        None in metas and i in answer.get("mlate", [])
                    ), (uri, answer["meta"][i])
                    if uri == sp and answer["meta"][i] is not None:
                        units_seen.add(answer["meta"][i].get("unit"))
        # stepping to a channel's previous and next change
        mid = moments[len(moments) // 2] / 1e6
        then = (await client.at([counter], mid))["val"][0]
        nxt = await client.step(counter, mid, 1)
        assert nxt is not None and nxt > mid
        changed = (await client.at([counter], nxt))["val"][0]
        assert (changed["ep"], changed["seq"]) != (then["ep"], then["seq"])
        before = (await client.at([counter], nxt - 0.001))["val"][0]
        assert (before["ep"], before["seq"]) == (then["ep"], then["seq"])
        prev = await client.step(counter, nxt, -1)
        assert prev is not None and prev <= mid + 0.001  # µs resolution
        assert (await client.at([counter], prev))["val"][0]["seq"] == then["seq"]
        assert await client.step(counter, (first - 60 * 10**9) / 1e6, -1) is None
        # a moment before anything was kept: each channel says how far back it goes
        early = await client.at(uris, (first - 60 * 10**9) / 1e6)
        assert all(v is None for v in early["val"])
        for i, error in enumerate(early["err"]):
            assert error["code"] == "not_kept"
            assert error["since"] >= (first - 10**9) / 1e6
            assert early["meta"][i] is not None and i in early["mlate"]
        with pytest.raises(GatewayError, match="too_many_channels"):
            await client.at([f"ca://MANY:{i}" for i in range(2001)], down_at / 1e6)
        with pytest.raises(GatewayError, match="bad_range"):
            await client.at(uris, time.time() * 1e3 + 3600e3)
        assert await client.ping() < 5  # the connection goes on
    assert all(checked[u] >= 5 for u in uris), dict(checked)
    assert "arrays" in sources[wf]  # large values from the rollup's CS_ARRAYS
    assert down_checked >= 1  # the outage, as it was shown then
    assert "mA" in units_seen and len(units_seen) == 2, units_seen
    assert len(sev_seen) >= 2  # the sine crossed a limit: severities compared
