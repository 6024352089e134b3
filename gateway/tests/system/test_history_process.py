"""The history service in a child process (``HistoryProcess``, ADR 0027, the
default since ADR 0039): a child killed mid-request fails that request and is
started again; a gateway closed while its child starts stops at once; the child
does not outlive a SIGKILLed gateway, even while it starts; with ``--no-history-process`` history
answers on a thread."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.history import HistoryConfig, ensure_history
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.history.process import HistoryProcess
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_gateway.testing import start_gateway
from synoptic_schemas import frames
from synoptic_schemas.frames import ErrorCode, FrameError

READER = Principal("reader", ("*",), ())


def _hist(n: int, uris: list[str]) -> dict:
    now = time.time() * 1000
    return {"op": "hist", "id": n, "ch": uris, "t0": now - 60_000, "t1": now, "px": 100}


async def _streams(nc: NatsClient) -> None:
    await ensure_store(nc, StoreConfig())
    await ensure_history(nc, HistoryConfig())


def _history_children(pid: int) -> list[int]:
    """Process ids of the history processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"synoptic_gateway.history.child" in cmdline:
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def _wait_until(predicate: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():  # noqa: ASYNC110 - processes give no event to await
            await asyncio.sleep(0.05)


async def test_a_killed_child_fails_its_request_and_the_next_one_works(
    nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    await _streams(nc)
    settings = Settings(nats_url=nats_server.url, gateway_id="gw-hp", hist_queue=1)
    history = HistoryProcess(settings)
    await asyncio.wait_for(history.start(), 60)
    try:
        first = history.pid
        assert first is not None and _running(first)
        # it runs at a lower CPU priority than the gateway (the live loop first)
        niceness = os.getpriority(os.PRIO_PROCESS, first) - os.getpriority(
            os.PRIO_PROCESS, 0
        )
        assert niceness == min(
            settings.hist_nice, 19 - os.getpriority(os.PRIO_PROCESS, 0)
        )
        # and in the idle class: a woken live-path process preempts it at once
        assert settings.hist_idle and os.sched_getscheduler(first) == os.SCHED_IDLE
        os.kill(first, signal.SIGSTOP)  # it cannot answer: the request stays in flight
        request = asyncio.create_task(
            history.answer(_hist(1, names[:2]), READER, json_mode=False)
        )
        await asyncio.sleep(0)  # one turn: the request is sent
        assert history.in_flight == 1
        # the queue (1 here) is full: the next request is answered "busy"
        with pytest.raises(FrameError) as busy:
            await history.answer(_hist(2, names[:2]), READER, json_mode=False)
        assert busy.value.code == ErrorCode.UNAVAILABLE and busy.value.req_id == 2
        assert "busy" in busy.value.msg
        history.kill()
        with pytest.raises(FrameError) as ended:
            await asyncio.wait_for(request, 30)
        assert ended.value.code == ErrorCode.UNAVAILABLE and ended.value.req_id == 1
        assert "history process ended" in ended.value.msg
        # the next request waits for the new child and is answered
        reply = await asyncio.wait_for(
            history.answer(_hist(3, names[:2]), READER, json_mode=False), 60
        )
        assert history.pid not in (None, first) and history.starts == 2
        assert not _running(first)
        answer = frames.unpack(reply)
        assert answer["op"] == "hist" and answer["id"] == 3
        assert answer["ch"] == names[:2]
        text = await asyncio.wait_for(
            history.answer(_hist(4, names[:1]), READER, json_mode=True), 60
        )
        assert isinstance(text, str) and '"id":4' in text.replace(" ", "")
    finally:
        await history.close()
    assert history.pid is None


async def test_without_the_idle_class_only_its_nice_level_is_lower(
    nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    await _streams(nc)
    settings = Settings(nats_url=nats_server.url, gateway_id="gw-hn", hist_idle=False)
    history = HistoryProcess(settings)
    await asyncio.wait_for(history.start(), 60)
    try:
        assert history.pid is not None
        assert os.sched_getscheduler(history.pid) == os.SCHED_OTHER
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        theirs = os.getpriority(os.PRIO_PROCESS, history.pid)
        assert theirs == min(ours + settings.hist_nice, 19)
        reply = await asyncio.wait_for(
            history.answer(_hist(1, names[:1]), READER, json_mode=False), 60
        )
        assert frames.unpack(reply)["op"] == "hist"
    finally:
        await history.close()


async def test_closed_while_its_child_starts_it_stops_at_once(
    nats_server: NatsServer,
) -> None:
    history = HistoryProcess(Settings(nats_url=nats_server.url, gateway_id="gw-hs"))
    starting = asyncio.create_task(history.start())
    await _wait_until(lambda: history.pid is not None, 30)
    child = history.pid
    assert child is not None
    os.kill(child, signal.SIGSTOP)  # it never gets ready
    began = time.monotonic()
    await history.close()
    assert time.monotonic() - began < 3  # not the 5 s given to a ready child
    assert history.pid is None and not _running(child)
    starting.cancel()


async def test_the_child_exits_when_the_gateway_is_sigkilled(
    nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    await _streams(nc)
    gateway = start_gateway(nats_server.url)  # the history process by default
    try:
        async with GatewayClient([gateway.ws_url]) as client:
            now = time.time() * 1000
            traces = await client.history(names[:2], now - 60_000, now, px=100)
            assert list(traces) == names[:2]
        children = _history_children(gateway.proc.pid)
        assert len(children) == 1
        gateway.proc.signal(signal.SIGKILL)  # the gateway only, not its group
        await _wait_until(lambda: not _running(children[0]), 30)
    finally:
        gateway.proc.kill()


async def test_a_starting_child_ends_with_its_sigkilled_gateway() -> None:
    """A child still starting (connecting to a bus that is down) does not read its
    socket yet: it ends with the gateway all the same."""
    gateway = start_gateway(f"nats://127.0.0.1:{free_port()}", wait_nats=False)
    try:
        await _wait_until(lambda: _history_children(gateway.proc.pid) != [], 30)
        child = _history_children(gateway.proc.pid)[0]
        gateway.proc.signal(signal.SIGKILL)  # the gateway only, not its group
        await _wait_until(lambda: not _running(child), 30)
    finally:
        gateway.proc.kill()


async def test_without_the_process_history_answers_on_a_thread(
    nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    await _streams(nc)
    gateway = start_gateway(nats_server.url, "--no-history-process")
    try:
        async with GatewayClient([gateway.ws_url]) as client:
            now = time.time() * 1000
            traces = await client.history(names[:2], now - 60_000, now, px=100)
            assert list(traces) == names[:2]
        assert _history_children(gateway.proc.pid) == []
    finally:
        gateway.stop()
