"""Fixtures shared by every package's tests: a real nats-server per test module,
PostgreSQL, and the identity provider (Keycloak) for the session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_identity.keycloak import KeycloakServer


@pytest.fixture(scope="module")
def nats_server(request: pytest.FixtureRequest) -> Iterator[NatsServer]:
    """A nats-server with JetStream on a free loopback port, stopped by PID. A
    module that sets ``NATS_MAX_PAYLOAD`` gets a server with that payload limit
    (the demo's images are several MB a message)."""
    server = NatsServer(
        max_payload=getattr(request.module, "NATS_MAX_PAYLOAD", None)
    ).start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def nc(nats_server: NatsServer) -> AsyncIterator[NatsClient]:
    """A NATS client connected to the module's server."""
    client = await connect(nats_server.url, name="test")
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A private PostgreSQL server (initdb in a temporary folder, a free loopback
    port, database ``hdb``), stopped by PID."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def keycloak() -> Iterator[KeycloakServer]:
    """The demo's identity provider (Keycloak with the demo realm, from a copy of
    the template ``make idp`` made) on a free loopback port for the whole session,
    stopped by PID. Its JVM takes tens of seconds to start on two busy cores: the
    modules that use it raise their timeout."""
    server = KeycloakServer().start()
    try:
        yield server
    finally:
        server.close()
