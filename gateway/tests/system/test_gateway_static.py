"""Static files of a real gateway process as a web server serves them: the build's
precompressed copies by ``Accept-Encoding`` (``Content-Encoding``, ``Vary``, an
ETag per coding), and the security headers on every response, with the inline
scripts of ``index.html`` allowed by hash."""

from __future__ import annotations

import base64
import gzip
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.testing import GatewayProc, site_tree, start_gateway

pytestmark = pytest.mark.system

INLINE = "\n      window.early = 1;\n    "
INDEX = (
    '<!doctype html><html><head><script type="application/json" id="map">{"a": 1}'
    f"</script><script>{INLINE}</script>"
    '<script type="module" src="./assets/index-AbC.js"></script></head></html>'
)
BUNDLE = b"export const x = 1;\n" * 200
BR = b"not really brotli, served as it is"


@pytest.fixture(scope="module")
def site(nats_server: NatsServer, tmp_path_factory) -> Iterator[GatewayProc]:
    root = tmp_path_factory.mktemp("gwstatic")
    screens, ui = site_tree(root, {"plain": {"title": "t", "widgets": []}}, INDEX)
    (ui / "index.html.gz").write_bytes(gzip.compress(INDEX.encode()))
    js = ui / "assets" / "index-AbC.js"
    js.write_bytes(BUNDLE)
    Path(f"{js}.br").write_bytes(BR)
    Path(f"{js}.gz").write_bytes(gzip.compress(BUNDLE))
    (ui / "assets" / "plain-XyZ.css").write_text("body{}")  # no copies
    gw = start_gateway(nats_server.url, "--screens", str(screens), "--ui", str(ui))
    yield gw
    gw.stop()


def fetch_with(
    gw: GatewayProc, path: str, accept: str, etag: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` with ``Accept-Encoding: accept`` (and ``If-None-Match``)."""
    headers = {"Accept-Encoding": accept}
    if etag is not None:
        headers["If-None-Match"] = etag
    return gw.request(path, headers)


@pytest.mark.parametrize(
    ("accept", "coding"),
    [
        ("gzip, deflate, br, zstd", "br"),
        ("br;q=0.5, gzip;q=1", "br"),  # the smaller copy whenever it is accepted
        ("gzip", "gzip"),
        ("br;q=0, *", "gzip"),
        ("*", "br"),
        ("identity", None),
        ("", None),
    ],
)
def test_precompressed_copy_by_accept_encoding(site, accept, coding) -> None:
    status, headers, body = fetch_with(site, "/assets/index-AbC.js", accept)
    assert status == 200
    assert headers.get("content-encoding") == coding
    assert headers["vary"] == "Accept-Encoding"
    assert headers["content-type"].startswith(
        ("text/javascript", "application/javascript")
    )
    assert headers["cache-control"] == "public, max-age=31536000, immutable"
    expected = {"br": BR, "gzip": None, None: BUNDLE}[coding]
    if coding == "gzip":
        assert gzip.decompress(body) == BUNDLE
    else:
        assert body == expected


def test_each_coding_has_its_own_etag_and_revalidates(site) -> None:
    tags = set()
    for accept in ("br", "gzip", ""):
        _, headers, _ = fetch_with(site, "/assets/index-AbC.js", accept)
        tags.add(headers["etag"])
        status, again, body = fetch_with(
            site, "/assets/index-AbC.js", accept, etag=headers["etag"]
        )
        assert (status, body) == (304, b"")
        assert again.get("content-encoding") == headers.get("content-encoding")
    assert len(tags) == 3


def test_index_and_client_routes_are_served_compressed(site) -> None:
    for path in ("/", "/screens/x"):
        status, headers, body = fetch_with(site, path, "gzip, br")
        assert status == 200 and headers["content-encoding"] == "gzip"  # no .br here
        assert gzip.decompress(body).decode() == INDEX
        assert headers["cache-control"] == "no-cache"


def test_file_without_copies_has_no_vary(site) -> None:
    status, headers, body = fetch_with(site, "/assets/plain-XyZ.css", "br, gzip")
    assert (status, body) == (200, b"body{}")
    assert "content-encoding" not in headers and "vary" not in headers


def test_copies_are_not_served_as_files(site) -> None:
    assert fetch_with(site, "/assets/index-AbC.js.br", "br")[0] == 404
    assert fetch_with(site, "/index.html.gz", "gzip")[0] == 404


@pytest.mark.parametrize(
    "path",
    ["/", "/assets/index-AbC.js", "/api/screens", "/api/screens/nope", "/healthz",
     "/metrics", "/assets/missing.js"],
)  # fmt: skip
def test_security_headers_on_every_response(site, path) -> None:
    _, headers, _ = fetch_with(site, path, "")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-frame-options"] == "DENY"
    csp = dict(
        d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";")
    )
    assert csp["frame-ancestors"] == "'none'"
    assert csp["object-src"] == "'none'"
    assert csp["default-src"] == "'self'"
    assert csp["connect-src"] == "'self'"
    digest = base64.b64encode(hashlib.sha256(INLINE.encode()).digest()).decode()
    # the one inline script that runs, by hash; the data block needs none
    assert csp["script-src"].split() == ["'self'", f"'sha256-{digest}'"]
    assert "unsafe" not in headers["content-security-policy"]
