"""``POST /api/sites/import``: a display set (a zip; the browser zips a chosen
folder) imported as linked screens, with its site report (docs/protocol.md).

The zip is read with :mod:`synoptic_importer.archive`'s limits; the set is
converted in a worker thread, one set at a time per gateway (a second upload
meanwhile is answered 429 ``busy``, so conversions never starve the sockets);
each screen is written as ``synoptic screens import`` writes it
(:mod:`synoptic_bus.sitestore`): only what changed, screens edited in the
browser since kept unless ``overwrite``, screens the caller may not edit
``forbidden``. ``dry_run`` converts and reports, writing nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from synoptic_bus.screens import Entry
from synoptic_bus.sitestore import counts, store_site
from synoptic_gateway.principal import Principal
from synoptic_gateway.screen_api import AUDIT_TIMEOUT_S, ApiError, request_principal
from synoptic_gateway.screen_api import _read_raw as read_raw
from synoptic_gateway.screen_api import _store_errors as store_errors
from synoptic_importer import parse_macro_args
from synoptic_importer.archive import ArchiveError, read_zip
from synoptic_importer.site import import_site, set_name
from synoptic_schemas import encode
from synoptic_schemas.screens import audit_record

audit_log = logging.getLogger("synoptic_gateway.audit")

#: The largest zip a browser may upload (its members are limited again unpacked).
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
#: The longest the writes of one set may take before the answer says so.
STORE_TIMEOUT_S = 120.0

_TRUE = ("1", "true", "yes", "on")


def add_site_routes(app: FastAPI, gateway: Any) -> None:
    """Register the set import of ``gateway`` on ``app``."""
    catalog = gateway.screens
    busy = asyncio.Lock()

    async def principal(request: Request) -> Principal:
        return await request_principal(gateway, request)

    async def audit(who: Principal, entry: Entry) -> None:
        record = audit_record(who.name, entry.name, "put", entry.revision,
                              entry.rev.summary, time.time_ns(), gateway.id)  # fmt: skip
        audit_log.info("screen put by %s: %s revision %d (%s)", who.name,
                       entry.name, entry.revision, entry.rev.summary)  # fmt: skip
        with contextlib.suppress(Exception):  # the log line above is kept anyway
            async with asyncio.timeout(AUDIT_TIMEOUT_S):
                await gateway.bus.publish(gateway.hub.subjects.audit("screens"),
                                          encode(record))  # fmt: skip

    @app.post("/api/sites/import")
    async def import_set(request: Request) -> Response:
        """A zip of displays → the set's report and what became of each screen."""
        who = await principal(request)
        if not who.screens:
            raise ApiError(403, "forbidden", f"{who.name} may not edit screens")
        query = request.query_params
        try:
            macros = parse_macro_args(query.getlist("macro"))
        except ValueError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        overwrite = query.get("overwrite", "").lower() in _TRUE
        dry_run = query.get("dry_run", "").lower() in _TRUE
        if busy.locked():
            raise ApiError(429, "busy", "another set is being imported on this "
                            "gateway: try again when it is done")  # fmt: skip
        async with busy:
            data = await read_raw(request, MAX_UPLOAD_BYTES)
            try:
                found = await asyncio.to_thread(
                    read_zip, data, query.get("file", "site")
                )
            except ArchiveError as exc:
                raise ApiError(422, "unreadable", str(exc)) from None
            name = set_name(query.get("set") or found.name)
            site = await asyncio.to_thread(
                import_site, found.files, name, macros=macros,
                tango_host=query.get("tango_host") or None, home=query.get("home") or None,
            )  # fmt: skip
            report = await asyncio.to_thread(site.report)

            async def saved(entry: Entry, action: str) -> None:
                catalog.saved(entry)
                await audit(who, entry)

            with store_errors():
                bucket = catalog.bucket()
            try:
                async with asyncio.timeout(STORE_TIMEOUT_S):
                    outcomes = await store_site(
                        bucket, site, who.name, overwrite=overwrite,
                        dry_run=dry_run, may_edit=who.may_edit, on_saved=saved,
                        summary=f"imported from set {site.set}",
                    )  # fmt: skip
            except TimeoutError:
                raise ApiError(503, "store_unavailable", "the screen store did not "
                                f"take the set within {STORE_TIMEOUT_S:g} s (part of "
                                "it may be stored: import it again)") from None  # fmt: skip
        return JSONResponse({"set": site.set, "home": site.home, "dry_run": dry_run,
                             "report": report.as_dict(), "counts": counts(outcomes),
                             "ignored": found.ignored[:200],
                             "screens": [o.as_dict() for o in outcomes]})  # fmt: skip
