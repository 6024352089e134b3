"""HTTP caching of a real gateway process: the UI build's hashed assets are
immutable; ``index.html`` and screen files revalidate (ETag, ``no-cache``) with a 304."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.testing import GatewayProc, start_gateway

pytestmark = pytest.mark.system

SCREEN = {"title": "Cached screen", "widgets": []}


@pytest.fixture(scope="module")
def site(
    nats_server: NatsServer, tmp_path_factory
) -> Iterator[tuple[GatewayProc, Path]]:
    root = tmp_path_factory.mktemp("gwcache")
    screens, ui = root / "screens", root / "dist"
    screens.mkdir()
    (ui / "assets").mkdir(parents=True)
    (screens / "cached.json").write_text(json.dumps(SCREEN))
    (ui / "index.html").write_text("<!doctype html><title>synoptic</title>")
    (ui / "favicon.svg").write_text("<svg/>")
    (ui / "assets" / "index-AbC123.js").write_text("console.log('ui')")
    gw = start_gateway(nats_server.url, "--screens", str(screens), "--ui", str(ui),
                       "--anonymous-screens", "cached")  # fmt: skip
    yield gw, root
    gw.stop()


def fetch(
    gw: GatewayProc, path: str, etag: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` (with ``If-None-Match: etag`` when given): status, headers, body."""
    return gw.request(path, {} if etag is None else {"If-None-Match": etag})


def test_static_hashed_assets_are_immutable(site) -> None:
    gw, _ = site
    status, headers, body = fetch(gw, "/assets/index-AbC123.js")
    assert (status, body) == (200, b"console.log('ui')")
    assert headers["cache-control"] == "public, max-age=31536000, immutable"


@pytest.mark.parametrize(
    "path", ["/", "/index.html", "/screens/cached", "/favicon.svg"]
)
def test_static_index_revalidates_with_304(site, path: str) -> None:
    gw, _ = site
    status, headers, body = fetch(gw, path)
    assert status == 200 and body
    assert headers["cache-control"] == "no-cache"
    etag = headers["etag"]
    status, again, body = fetch(gw, path, etag)
    assert (status, body) == (304, b"")
    assert again["etag"] == etag
    assert fetch(gw, path, f'W/{etag}, "other"')[0] == 304
    assert fetch(gw, path, '"other"')[0] == 200


def test_screen_revalidates_and_changes_its_etag_with_a_save(site) -> None:
    gw, _ = site
    status, headers, body = fetch(gw, "/api/screens/cached")
    assert status == 200 and json.loads(body) == SCREEN
    assert headers["cache-control"] == "no-cache"
    etag = headers["etag"]
    assert fetch(gw, "/api/screens/cached", etag)[:3:2] == (304, b"")
    # a save: a new revision, a new validator, the new body
    revision = int(headers["x-synoptic-revision"])
    edit = {"screen": {**SCREEN, "title": "Edited"}, "base_revision": revision}
    assert gw.api("PUT", "/api/screens/cached", edit)[0] == 200
    status, headers, body = fetch(gw, "/api/screens/cached", etag)
    assert status == 200 and json.loads(body)["title"] == "Edited"
    assert headers["etag"] != etag
    assert fetch(gw, "/api/screens/missing", etag)[0] == 404
