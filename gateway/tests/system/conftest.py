"""Fixtures: real gateway processes against the module's real nats-server, and a
publisher of synthetic counting values straight onto NATS (no adapter needed)."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator

import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.rollup import start_rollup
from synoptic_bus.store import StoreConfig, ensure_store
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway


@pytest.fixture(scope="module")
def gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    """A gateway with default settings for the module."""
    gw = start_gateway(nats_server.url)
    try:
        yield gw
    finally:
        gw.stop()


@pytest.fixture
async def publisher(nc: NatsClient) -> Publisher:
    """Publishes like an adapter, which also makes sure the last-value store exists."""
    await ensure_store(nc, StoreConfig())
    return Publisher(nc)


@pytest.fixture
def names() -> list[str]:
    """Channel URIs unique to one test."""
    tag = secrets.token_hex(3).upper()
    return [f"ca://T{tag}:C{i:03d}" for i in range(200)]


@pytest.fixture(scope="module")
def rewind_streams(nats_server: NatsServer) -> Iterator[Process]:
    """Every stream of `synoptic bus init` (history in memory, the raw history's
    message limit 1 KiB: a short waveform is a large value) and the rollup."""
    init = Process(
        "bus-init",
        [sys.executable, "-m", "synoptic_bus.cli", "bus", "init", "--nats",
         nats_server.url, "--history-storage", "memory", "--history-max-value",
         "1024"],
    )  # fmt: skip
    try:
        assert init.popen.wait(60) == 0, init.output()
    finally:
        init.stop()
    rollup = start_rollup(nats_server.url)
    try:
        yield rollup
    finally:
        rollup.stop()
