"""The built UI as a web server serves it: the build's precompressed copies
(``<file>.br``, ``<file>.gz``) chosen by ``Accept-Encoding`` and sent with
``Content-Encoding`` and ``Vary: Accept-Encoding``; an ETag per file and encoding.

HTTP caching: the UI build's hashed ``assets/*`` are immutable (cached a year, never
revalidated); ``index.html`` and the UI's other files carry an ETag with
``Cache-Control: no-cache``, so a reload revalidates and gets a 304.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, Response

#: ``Cache-Control`` of the UI build's content-hashed files (``assets/``): a new
#: build has new names, so a browser may keep these for a year without asking
IMMUTABLE = "public, max-age=31536000, immutable"
#: ``Cache-Control`` of what keeps its name across versions: cached, revalidated each use
REVALIDATE = "no-cache"
#: precompressed copies the build writes, in order of preference
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))


def not_modified(request: Request, etag: str) -> bool:
    """Whether ``request``'s ``If-None-Match`` names ``etag`` (weak or strong, or ``*``)."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag in tags


def accepted_encodings(header: str | None) -> set[str]:
    """The content codings an ``Accept-Encoding`` header accepts (q > 0), lower case;
    ``*`` stands for any coding not named."""
    out: set[str] = set()
    refused: set[str] = set()
    for item in (header or "").split(","):
        coding, _, params = item.strip().partition(";")
        coding = coding.strip().lower()
        if not coding:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        (out if q > 0 else refused).add(coding)
    if "*" in out:
        out |= {name for name, _ in ENCODINGS} - refused
    return out


def serve_file(request: Request, path: Path, cache_control: str) -> Response:
    """``path`` (or its precompressed copy the request accepts) with an ETag (the
    served file's modification time, size and coding) and ``cache_control``; a 304
    when the request already holds that version."""
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    headers = {"cache-control": cache_control}
    served, coding = path, ""
    if _has_copies(path):
        headers["vary"] = "Accept-Encoding"
        accepted = accepted_encodings(request.headers.get("accept-encoding"))
        for name, suffix in ENCODINGS:
            copy = path.with_name(path.name + suffix)
            if name in accepted and copy.is_file():
                served, coding = copy, name
                headers["content-encoding"] = name
                break
    stat = served.stat()
    tag = f"{stat.st_mtime_ns:x}-{stat.st_size:x}" + (f"-{coding}" if coding else "")
    headers["etag"] = f'"{tag}"'
    if not_modified(request, headers["etag"]):
        return Response(status_code=304, headers=headers)
    return FileResponse(
        served, headers=headers, media_type=media_type, stat_result=stat
    )


def _has_copies(path: Path) -> bool:
    return any(path.with_name(path.name + suffix).is_file() for _, suffix in ENCODINGS)


def mount_ui(app: FastAPI, ui_dir: Path) -> None:
    """Serve the built UI; unknown client routes get ``index.html``. The build's
    ``.br``/``.gz`` copies are served only as encodings of their file."""
    root = ui_dir.resolve()
    assets = root / "assets"

    @app.get("/{path:path}", include_in_schema=False)
    async def ui(path: str, request: Request) -> Response:
        if path.startswith(("api/", "ws")):
            raise HTTPException(404, "not found")
        index = root / "index.html"
        if not index.is_file():
            raise HTTPException(404, f"no built UI in {root} (run the UI build)")
        target = (root / path).resolve()
        copy = (
            target.suffix in {s for _, s in ENCODINGS}
            and target.with_suffix("").is_file()
        )
        if path and not copy and target.is_file() and target.is_relative_to(root):
            hashed = target.is_relative_to(assets)  # vite names them by content hash
            return serve_file(request, target, IMMUTABLE if hashed else REVALIDATE)
        if "." in Path(path).name:  # a missing asset, not a client route
            raise HTTPException(404, "not found")
        return serve_file(request, index, REVALIDATE)
