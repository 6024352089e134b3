"""Stopping and releasing at scale: the simulated device server on SIGTERM, and
the Tango source letting go of many attributes while their events still arrive."""

from __future__ import annotations

import asyncio
import time

import pytest
from tango_support import CollectingSink, start_sim, started_source

pytestmark = pytest.mark.system


async def test_sim_server_exits_on_sigterm_while_slow_reads_run() -> None:
    """A client reading the 2 s and 6 s attributes does not keep the simulated
    server alive after SIGTERM: it exits by itself, status 0, within seconds."""
    server = start_sim(rate=10.0)
    sink = CollectingSink()
    source = await started_source(server.settings(), sink)
    try:
        slow, timeout = server.channel("slow"), server.channel("timeout")
        await source.monitor([slow, timeout])
        await sink.wait(lambda: sink.last(slow) is not None, timeout=20)
        started = time.monotonic()
        returncode = await asyncio.to_thread(server.proc.stop, 20.0)
        assert returncode == 0  # not the SIGKILL that stop() falls back to
        assert time.monotonic() - started < 5.0
    finally:
        await source.stop()
        server.proc.kill()
