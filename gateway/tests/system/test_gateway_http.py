"""HTTP side of a real gateway process: health, readiness, metrics, screens, UI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, site_tree, start_gateway

pytestmark = pytest.mark.system

SCREEN = {"title": "Fixture screen", "widgets": []}


@pytest.fixture(scope="module")
def served(nats_server: NatsServer, tmp_path_factory) -> Iterator[GatewayProc]:
    root = tmp_path_factory.mktemp("gw")
    broken = {"title": 3, "widgets": []}
    screens, ui = site_tree(
        root,
        {"fixture": SCREEN, "broken": broken},
        "<!doctype html><title>synoptic</title>",
    )
    (ui / "assets" / "app.js").write_text("console.log('ui')")
    gw = start_gateway(nats_server.url, "--screens", str(screens), "--ui", str(ui))
    yield gw
    gw.stop()


def test_health_readiness_and_screens(served) -> None:
    status, body = served.get("/healthz")
    assert status == 200 and json.loads(body)["ok"] is True
    assert served.get("/readyz")[0] == 200
    status, body = served.get("/api/screens")
    listing = {s["name"]: s for s in json.loads(body)}
    assert (
        listing["fixture"]["valid"] and listing["fixture"]["title"] == "Fixture screen"
    )
    assert "broken" not in listing  # an invalid file is not seeded into the bucket
    status, body = served.get("/api/screens/fixture")
    assert status == 200 and json.loads(body) == SCREEN
    assert served.get("/api/screens/broken")[0] == 404
    assert served.get("/api/screens/missing")[0] == 404
    assert served.get("/api/nothing")[0] == 404


def test_built_ui_with_single_page_fallback(served) -> None:
    assert served.get("/")[1].startswith(b"<!doctype html>")
    assert served.get("/screens/fixture")[1].startswith(
        b"<!doctype html>"
    )  # client route
    assert served.get("/assets/app.js") == (200, b"console.log('ui')")
    assert served.get("/assets/missing.js")[0] == 404
    assert served.get("/../../etc/passwd")[0] in (200, 404)  # never outside the UI dir
    assert b"root:" not in served.get("/..%2F..%2Fetc%2Fpasswd")[1]


async def test_metrics_count_connections_groups_and_traffic(
    served, publisher, names, nc
) -> None:
    async with GatewayClient(served.ws_url) as a, GatewayClient(served.ws_url) as b:
        await a.subscribe(names[:3])
        sub = await b.subscribe(names[:3])
        await publisher.value(names[0])
        await nc.flush()
        await sub.wait_for(lambda s: s.value(names[0]) is not None)
        m = served.metrics()
        assert m["synoptic_gateway_connections"] == 2
        assert m["synoptic_gateway_groups"] == 1
        assert m["synoptic_gateway_nats_subscriptions"] == 3
        assert m["synoptic_gateway_updates_in_total"] >= 1
        assert m["synoptic_gateway_frames_out_total"] >= 4
        assert m["synoptic_gateway_latency_seconds_count"] >= 1
        assert m["synoptic_gateway_bus_up"] == 1


def test_not_ready_without_nats_but_healthy() -> None:
    gw = start_gateway(f"nats://127.0.0.1:{free_port()}", wait_nats=False)
    try:
        assert gw.get("/healthz")[0] == 200
        assert gw.get("/readyz")[0] == 503
    finally:
        gw.stop()


def test_screens_folder_default_is_the_repo_screens() -> None:
    from synoptic_gateway.settings import REPO_ROOT, Settings

    assert Settings().screens_dir == REPO_ROOT / "screens"
    assert (Path(REPO_ROOT) / "gateway").is_dir()
