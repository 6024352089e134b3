"""Security headers on every HTTP response of the gateway.

The UI's pages get a Content-Security-Policy that allows what the UI needs and
nothing else: scripts from the gateway itself plus the inline scripts of the
served ``index.html`` by their SHA-256 hash (read from the file, so a rebuild needs
no configuration), styles, images, fonts and connections (``fetch``, the
WebSocket) to the gateway itself; no plugins, no foreign ``<base>``, and no
framing by any page (``frame-ancestors 'none'``: a write-capable control screen
must not be overlaid by another site). Every response also says
``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
``X-Frame-Options: DENY`` (for browsers older than ``frame-ancestors``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the same on every response
FIXED = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
#: FastAPI's interactive API documentation loads Swagger UI from its CDN with an
#: inline script: its own, looser policy, on those paths only
DOCS_PATHS = ("/api/docs",)
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' https://cdn.jsdelivr.net; img-src 'self' data: "
    "https://fastapi.tiangolo.com; object-src 'none'; frame-ancestors 'none'"
)
_INLINE_SCRIPT = re.compile(rb"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)


def inline_script_hashes(html: bytes) -> list[str]:
    """CSP sources (``'sha256-…'``) of the inline scripts of ``html`` that run:
    neither ``src`` nor a data block (``type`` other than JavaScript or module)."""
    out = []
    for m in _INLINE_SCRIPT.finditer(html):
        attrs = m["attrs"].lower()
        kind = re.search(rb"""type\s*=\s*["']?([^"'\s>]+)""", attrs)
        if re.search(rb"\ssrc\s*=", attrs) or (
            kind and kind[1] not in (b"module", b"text/javascript")
        ):
            continue
        digest = base64.b64encode(hashlib.sha256(m["body"]).digest()).decode()
        out.append(f"'sha256-{digest}'")
    return out


def ui_policy(script_hashes: list[str], connect: tuple[str, ...] = ()) -> str:
    """The Content-Security-Policy of the UI with these inline-script hashes;
    ``connect``: other origins the UI may fetch from (the identity provider's)."""
    scripts = " ".join(["'self'", *script_hashes])
    connects = " ".join(["'self'", *connect])
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self'; "
        f"img-src 'self' data: blob:; font-src 'self'; connect-src {connects}; "
        "worker-src 'self' blob:; object-src 'none'; base-uri 'self'; "
        "form-action 'self'; frame-ancestors 'none'"
    )


class UiPolicy:
    """The UI's policy for the ``index.html`` in ``ui_dir``, recomputed when that
    file changes (a new build)."""

    def __init__(self, ui_dir: Path, connect: tuple[str, ...] = ()) -> None:
        self.index = ui_dir / "index.html"
        self.connect = connect
        self._key: tuple[int, int] | None = None
        self._value = ui_policy([], connect)

    def value(self) -> str:
        try:
            stat = self.index.stat()
        except OSError:
            return ui_policy([], self.connect)
        key = (stat.st_mtime_ns, stat.st_size)
        if key != self._key:
            try:
                hashes = inline_script_hashes(self.index.read_bytes())
                self._value = ui_policy(hashes, self.connect)
            except OSError:
                return ui_policy([], self.connect)
            self._key = key
        return self._value


class SecurityHeaders:
    """ASGI middleware: adds the security headers to every HTTP response (an
    application's own value of a header wins)."""

    def __init__(
        self, app: ASGIApp, ui_dir: Path, connect: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self.policy = UiPolicy(ui_dir, connect)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        csp = DOCS_POLICY if path.startswith(DOCS_PATHS) else self.policy.value()
        extra = (*FIXED, (b"content-security-policy", csp.encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in extra if k not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
