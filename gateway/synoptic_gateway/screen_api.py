"""The screens HTTP API (docs/protocol.md): list, get, save, delete, history, one
revision, revert, ``whoami``, and the channel directory.

Errors are JSON ``{"error": code, "reason": text, …}``: 400 ``bad_name`` /
``bad_request``, 401 ``unauthorized``, 403 ``forbidden``, 404 ``not_found``, 409
``conflict`` (with the current ``revision``, ``by``, ``at``), 413 ``too_large``,
422 ``invalid`` (with the JSON ``pointer`` of the first schema error), 503
``store_unavailable``. Nothing is written unless the answer is 200.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from synoptic_bus.screens import (
    ConflictError,
    Entry,
    ScreenNotFoundError,
    StoreUnavailableError,
)
from synoptic_gateway.auth import AuthError, bearer_token
from synoptic_gateway.principal import Principal
from synoptic_gateway.screens import ScreenError
from synoptic_gateway.static import REVALIDATE, not_modified
from synoptic_importer import (
    MAX_SOURCE_BYTES,
    ScreenImportError,
    import_screen,
    parse_macro_args,
)
from synoptic_schemas import encode
from synoptic_schemas.screens import (
    MAX_SCREEN_BYTES,
    ScreenInvalidError,
    ScreenNameError,
    ScreenTooLargeError,
    audit_record,
    check_name,
    dump_screen,
    parse_json,
)

log = logging.getLogger(__name__)
audit_log = logging.getLogger("synoptic_gateway.audit")

#: A request body may hold the screen plus its envelope (base revision, summary).
MAX_BODY_BYTES = MAX_SCREEN_BYTES + 64 * 1024
#: The longest a write waits for the store (JetStream's own timeout is 5 s a
#: request, and a write may take two, or wait behind a reconnecting client).
WRITE_TIMEOUT_S = 12.0
#: The longest a saved write's audit record may hold its answer back.
AUDIT_TIMEOUT_S = 2.0


class ApiError(Exception):
    """An answer other than 200, as JSON."""

    def __init__(self, status: int, error: str, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.status = status
        self.body = {"error": error, "reason": reason, **extra}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body, status_code=self.status)


async def request_principal(gateway: Any, request: Request) -> Principal:
    """Who sent ``request`` (its bearer token, or anonymous); a refused token is
    counted and logged by ``gateway`` and answered 401."""
    token = bearer_token(request.headers)
    try:
        return await gateway.auth.principal(token)
    except AuthError as exc:
        peer = request.client.host if request.client else ""
        await gateway.refused("http", str(exc), token, peer)
        raise ApiError(401, "unauthorized", str(exc)) from None


def _from_screen_error(exc: ScreenError) -> ApiError:
    if exc.status == 404:
        return ApiError(404, "not_found", str(exc))
    if exc.status == 422:
        return ApiError(422, "invalid", exc.reason, pointer=exc.pointer)
    return ApiError(503, "store_unavailable", str(exc))


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """The screen store's and the catalog's refusals as API answers."""
    try:
        yield
    except ScreenError as exc:
        raise _from_screen_error(exc) from None
    except ConflictError as exc:
        raise ApiError(409, "conflict", str(exc), revision=exc.revision,
                       by=exc.rev.by, at=exc.rev.at, deleted=exc.deleted) from None  # fmt: skip
    except ScreenInvalidError as exc:
        raise ApiError(422, "invalid", exc.reason, pointer=exc.pointer) from None
    except ScreenTooLargeError as exc:
        raise ApiError(413, "too_large", str(exc)) from None
    except ScreenNotFoundError as exc:
        raise ApiError(404, "not_found", str(exc)) from None
    except StoreUnavailableError as exc:
        raise ApiError(503, "store_unavailable", str(exc)) from None


def _name(name: str) -> str:
    try:
        return check_name(name)
    except ScreenNameError as exc:
        raise ApiError(400, "bad_name", str(exc)) from None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ApiError(400, "bad_request", f"'{what}' must be an integer >= 0")
    return value


async def _read_raw(request: Request, limit: int) -> bytes:
    """The body, at most ``limit`` bytes: 413 beyond (the rest of a body up to 4
    times the limit is read and dropped, so that the client reads the answer
    instead of a reset connection)."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > 4 * limit:
        raise ApiError(413, "too_large", f"body of {length} bytes exceeds the limit "
                       f"of {limit} bytes")  # fmt: skip
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        elif size > 4 * limit:
            break
    if size > limit:
        raise ApiError(413, "too_large", f"body of {size} bytes exceeds the limit "
                       f"of {limit} bytes")  # fmt: skip
    return b"".join(chunks)


async def _read_body(request: Request) -> Any:
    """The JSON body of a screen write (at most :data:`MAX_BODY_BYTES`)."""
    data = await _read_raw(request, MAX_BODY_BYTES)
    try:
        return parse_json(data, MAX_BODY_BYTES)
    except ScreenInvalidError as exc:
        raise ApiError(400, "bad_request", f"the body is {exc.reason}") from None


async def _answer(request: Request, exc: ApiError) -> JSONResponse:
    return exc.response()


def add_screen_routes(app: FastAPI, gateway: Any) -> None:
    """Register the screens API and the channel directory of ``gateway`` (the
    app's :class:`~synoptic_gateway.app.Gateway`) on ``app``."""
    catalog = gateway.screens

    async def principal(request: Request) -> Principal:
        return await request_principal(gateway, request)

    async def editor(request: Request, name: str) -> Principal:
        who = await principal(request)
        if not who.may_edit(name):
            raise ApiError(403, "forbidden", f"{who.name} may not edit screen {name!r}")
        return who

    async def audit(who: Principal, entry: Entry, op: str) -> None:
        record = audit_record(who.name, entry.name, op, entry.revision,
                              entry.rev.summary, time.time_ns(), gateway.id)  # fmt: skip
        audit_log.info("screen %s by %s: %s revision %d (%s)", op, who.name,
                       entry.name, entry.revision, entry.rev.summary)  # fmt: skip
        with contextlib.suppress(Exception):  # the log line above is kept anyway
            async with asyncio.timeout(AUDIT_TIMEOUT_S):
                await gateway.bus.publish(gateway.hub.subjects.audit("screens"),
                                          encode(record))  # fmt: skip

    async def write(who: Principal, op: str, action: Any) -> JSONResponse:
        try:
            with _store_errors():
                async with asyncio.timeout(WRITE_TIMEOUT_S):
                    entry: Entry = await action(catalog.bucket())
        except TimeoutError:
            raise ApiError(503, "store_unavailable", "the screen store did not answer "
                           f"within {WRITE_TIMEOUT_S:g} s (the write may have been "
                           "stored: reload to see)") from None  # fmt: skip
        catalog.saved(entry)
        await audit(who, entry, op)
        return JSONResponse(entry.summary())

    app.add_exception_handler(ApiError, _answer)  # type: ignore[arg-type]

    @app.get("/api/screens")
    async def list_screens(request: Request) -> Response:
        """Every screen: name, title, revision, at, by."""
        await principal(request)
        await catalog.settled()
        with _store_errors():
            return JSONResponse(catalog.list())

    @app.get("/api/screens/{name}")
    async def get_screen(name: str, request: Request) -> Response:
        """The newest revision of a screen (ETag, revision, editable headers)."""
        _name(name)
        who = await principal(request)
        await catalog.settled()
        await catalog.look_up(name)
        try:
            cached = catalog.get(name)
        except ScreenError as exc:
            if exc.status != 422:
                raise _from_screen_error(exc) from None
            # what an editor needs to repair it: that revision's raw JSON is
            # GET …/revisions/{revision} (not validated)
            raise ApiError(422, "invalid", exc.reason, pointer=exc.pointer,
                           revision=exc.revision,
                           editable=who.may_edit(name)) from None  # fmt: skip
        headers = {
            "etag": cached.etag,
            "cache-control": REVALIDATE,
            "x-synoptic-revision": str(cached.entry.revision),
            "x-synoptic-editable": "1" if who.may_edit(name) else "0",
        }
        if not_modified(request, cached.etag):
            return Response(status_code=304, headers=headers)
        return Response(cached.body, media_type="application/json", headers=headers)

    @app.put("/api/screens/{name}")
    async def put_screen(name: str, request: Request) -> Response:
        """Save a screen as a new revision, based on ``base_revision``."""
        who = await editor(request, _name(name))
        body = await _read_body(request)
        if not isinstance(body, dict) or "screen" not in body:
            raise ApiError(400, "bad_request", "the body is "
                           '{"screen": {…}, "base_revision": N, "summary": "…"}')  # fmt: skip
        base = _int(body.get("base_revision"), "base_revision")
        summary = body.get("summary", "")
        if not isinstance(summary, str):
            raise ApiError(400, "bad_request", "'summary' must be a string")
        screen = body["screen"]

        async def save(bucket: Any) -> Entry:
            return await bucket.put(name, screen, base, who.name, summary)

        return await write(who, "put", save)

    @app.delete("/api/screens/{name}")
    async def delete_screen(name: str, request: Request) -> Response:
        """Delete a screen (a delete marker; the history stays)."""
        who = await editor(request, _name(name))
        raw = request.query_params.get("base_revision", "")
        if not raw.isdigit():
            raise ApiError(400, "bad_request", "'base_revision' query is required")
        base = int(raw)

        async def delete(bucket: Any) -> Entry:
            return await bucket.delete(name, base, who.name)

        return await write(who, "delete", delete)

    @app.post("/api/screens/{name}/revert")
    async def revert_screen(name: str, request: Request) -> Response:
        """Write an old revision's content as a new revision."""
        who = await editor(request, _name(name))
        body = await _read_body(request)
        if not isinstance(body, dict):
            raise ApiError(400, "bad_request", 'the body is {"revision": R, '
                           '"base_revision": N}')  # fmt: skip
        revision = _int(body.get("revision"), "revision")
        base = _int(body.get("base_revision"), "base_revision")

        async def revert(bucket: Any) -> Entry:
            return await bucket.revert(name, revision, base, who.name)

        return await write(who, "revert", revert)

    @app.get("/api/screens/{name}/history")
    async def screen_history(name: str, request: Request) -> Response:
        """The kept revisions of a screen, newest first."""
        _name(name)
        await principal(request)
        with _store_errors():
            entries = await catalog.bucket().history(name)
        if not entries:
            raise ApiError(404, "not_found", f"no screen {name!r}")
        revisions = [{"revision": e.revision, "at": e.rev.at, "by": e.rev.by,
                      "summary": e.rev.summary, "op": "delete" if e.deleted else "put"}
                     for e in entries]  # fmt: skip
        return JSONResponse({"name": name, "revisions": revisions})

    @app.get("/api/screens/{name}/revisions/{revision}")
    async def screen_revision(name: str, revision: int, request: Request) -> Response:
        """One kept revision's screen JSON, as stored (not validated: an invalid
        screen is opened from here for repair)."""
        _name(name)
        await principal(request)
        with _store_errors():
            entry = await catalog.bucket().get(name, revision)
        assert entry.screen is not None
        body = await asyncio.to_thread(dump_screen, entry.screen)
        return Response(body, media_type="application/json",
                        headers={"x-synoptic-revision": str(entry.revision)})  # fmt: skip

    @app.post("/api/import")
    async def convert_screen(request: Request) -> Response:
        """Convert a ``.bob``/``.opi``/``.wj`` file (the body) into a screen and its
        coverage report; nothing is stored (save it with ``PUT``)."""
        await principal(request)
        query = request.query_params
        file = query.get("file", "")
        try:
            macros = parse_macro_args(query.getlist("macro"))
        except ValueError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        data = await _read_raw(request, MAX_SOURCE_BYTES)
        try:
            imported = await asyncio.to_thread(
                import_screen, data, file or "upload", macros=macros,
                tango_host=query.get("tango_host") or None,
            )  # fmt: skip
        except ScreenImportError as exc:
            raise ApiError(422, "unconvertible", str(exc), line=exc.line) from None
        return JSONResponse({"name": imported.name, "screen": imported.screen,
                             "report": imported.report.as_dict()})  # fmt: skip

    @app.get("/api/whoami")
    async def whoami(request: Request) -> Response:
        """Who this request is and what it may do."""
        who = await principal(request)
        return JSONResponse({"user": who.name, "name": who.display or who.name,
                             "write": who.can_write, "screens": list(who.screens),
                             "command": list(who.command), "ack": list(who.ack),
                             "exp": who.expires})  # fmt: skip

    @app.get("/api/channels/screens")
    async def screens_by_channel(request: Request) -> Response:
        """The screens showing a channel that holds every word of ``q``, best
        first, each with the first of those channels (``limit`` screens, 1..200)."""
        await principal(request)
        query = request.query_params.get("q", "")
        raw_limit = request.query_params.get("limit", "50")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 200:
            raise ApiError(400, "bad_request", "'limit' must be 1..200")
        if len(query) > 512:
            raise ApiError(400, "bad_request", "'q' longer than 512 characters")
        await catalog.settled()
        with _store_errors():
            found, total = catalog.by_channel(query, int(raw_limit))
        return JSONResponse({"q": query, "screens": found, "total": total})

    @app.get("/api/channels")
    async def channels(request: Request) -> Response:
        """Channel URIs the bus knows whose name, description or units hold every
        word of ``q`` (``prefix``: the same), ranked, with their description and units."""
        await principal(request)
        params = request.query_params
        prefix = params.get("q", params.get("prefix", ""))
        raw_limit = request.query_params.get("limit", "50")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 200:
            raise ApiError(400, "bad_request", "'limit' must be 1..200")
        if len(prefix) > 512:
            raise ApiError(400, "bad_request", "'q' longer than 512 characters")
        try:
            await gateway.directory.ready()
        except StoreUnavailableError as exc:
            raise ApiError(503, "store_unavailable", str(exc)) from None
        found, total = gateway.directory.search(prefix, int(raw_limit))
        about = [gateway.directory.details(uri) for uri in found]
        return JSONResponse({"channels": found, "total": total,
                             "desc": [d for d, _ in about],
                             "unit": [u for _, u in about]})  # fmt: skip
