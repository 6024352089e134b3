"""The security headers are on Starlette's own answer to an unhandled error too
(its 500 comes from the outermost middleware, outside the routes'), driven
through the gateway application's ASGI interface without servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from synoptic_gateway.app import create_app
from synoptic_gateway.settings import Settings


async def answer(app: Any, path: str) -> tuple[int, dict[str, str]]:
    """The status and headers ``app`` answers a GET of ``path`` with."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": [],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(RuntimeError, match="a fault"):  # re-raised for the server's log
        await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers


async def test_an_unhandled_error_answers_500_with_the_security_headers(
    tmp_path: Path,
) -> None:
    app = create_app(Settings(ui_dir=tmp_path))

    @app.get("/api/fault")
    async def fault() -> None:
        raise RuntimeError("a fault")

    app.router.routes.insert(0, app.router.routes.pop())  # before the UI's catch-all

    status, headers = await answer(app, "/api/fault")
    assert status == 500
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
