"""An alarm service in the test's own process, on its own subject prefix."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from synoptic_alarms.service import AlarmService
from synoptic_alarms.settings import AlarmSettings
from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer

Start = Callable[..., Awaitable[AlarmService]]


@pytest.fixture
async def alarm_service(nats_server: NatsServer) -> AsyncIterator[Start]:
    """``await alarm_service(tree, **settings)``: a started, ready service on a
    fresh prefix (``service.settings.prefix``) and tree bucket."""
    started: list[tuple[AlarmService, NatsClient]] = []

    async def start(tree: dict[str, Any] | None, **kw: Any) -> AlarmService:
        tag = uuid.uuid4().hex[:6]
        settings = AlarmSettings(nats_url=nats_server.url, prefix=f"t{tag}",
                                 tree_bucket=f"tree{tag}", **kw)  # fmt: skip
        nc = await connect(nats_server.url, name=f"alarms-{tag}")
        if tree is not None:
            store = await TreeStore.ensure(nc, TreeStoreConfig(settings.tree_bucket))
            await store.put(tree, 0, "test")
        service = AlarmService(nc, settings)
        await service.start()
        await service.ready.wait()
        started.append((service, nc))
        return service

    yield start
    for service, nc in started:
        await service.stop()
        await nc.close()
