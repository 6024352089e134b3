"""The alarms HTTP API (docs/protocol.md): the list, acknowledge/unacknowledge/
shelve/unshelve on behalf of the signed-in user, and the alarm tree (read, save,
convert a Phoebus alarm configuration).

A request is authorised like a write: each alarm named needs the user's grant
to acknowledge it (``Principal.may_ack`` on the channel URI); alarms without it
are refused (``denied``) and the rest go to the alarm service. Every request is
audited on ``cs.audit.alarms`` with the end user, refusals included. Editing the
tree needs the grant to edit the screen named ``alarm-tree``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.screens import ConflictError, StoreUnavailableError
from synoptic_gateway.principal import Principal
from synoptic_gateway.screen_api import ApiError, request_principal
from synoptic_gateway.screen_api import _read_raw as read_raw
from synoptic_importer.phoebus_alarms import (
    MAX_ALARM_XML_BYTES,
    AlarmImportError,
    import_phoebus_alarms,
)
from synoptic_schemas import SCHEMA_VERSION, ChannelError, encode, parse_channel
from synoptic_schemas.alarms import (
    MAX_REQUEST_CHANNELS,
    MAX_SHELVE_NS,
    MAX_WHY_CHARS,
    OPS,
    AlarmFailure,
    decode_alarm_reply,
)
from synoptic_schemas.alarmtree import MAX_TREE_BYTES, AlarmTreeError

log = logging.getLogger(__name__)
audit_log = logging.getLogger("synoptic_gateway.audit")

#: The name whose screen-edit grant lets a user edit the alarm tree.
TREE_GRANT = "alarm-tree"
#: How long a request waits for the alarm service (which answers once stored).
REQUEST_TIMEOUT_S = 10.0
AUDIT_TIMEOUT_S = 2.0
MAX_REQUEST_BYTES = 2 * 1024 * 1024


def add_alarm_routes(app: FastAPI, gateway: Any) -> None:
    """Register the alarms API of ``gateway`` on ``app``."""
    subjects = gateway.hub.subjects
    feed = gateway.alarms

    async def principal(request: Request) -> Principal:
        return await request_principal(gateway, request)

    def store() -> TreeStore:
        if not gateway.bus.up:
            raise ApiError(503, "store_unavailable", "not connected to NATS")
        return TreeStore(
            gateway.bus.nc, TreeStoreConfig(gateway.settings.alarm_tree_bucket)
        )

    async def audit(record: dict[str, Any]) -> None:
        audit_log.info("alarms %s by %s: %s -> %s", record["op"], record["who"],
                       ", ".join(record["ch"][:5]), "ok" if record["ok"] else
                       record.get("err") or record.get("fail"))  # fmt: skip
        with contextlib.suppress(Exception):
            async with asyncio.timeout(AUDIT_TIMEOUT_S):
                await gateway.bus.publish(subjects.audit("alarms"), encode(record))

    async def body_of(request: Request, limit: int) -> Any:
        data = await read_raw(request, limit)
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, "bad_request", f"the body is not JSON: {exc}") from None

    @app.get("/api/alarms")
    async def list_alarms(request: Request) -> Response:
        """The listed alarms (active or shelved) and the counts."""
        await principal(request)
        return JSONResponse(feed.snapshot())

    @app.post("/api/alarms/{op}")
    async def alarm_request(op: str, request: Request) -> Response:
        """Acknowledge, unacknowledge, shelve or unshelve alarms: ``{"ch": [URI,
        …], "why": "…", "minutes": M}`` (``why`` and ``minutes`` for a shelve)."""
        if op not in OPS:
            raise ApiError(404, "not_found", f"no alarm operation {op!r}")
        who = await principal(request)
        body = await body_of(request, MAX_REQUEST_BYTES)
        channels = body.get("ch") if isinstance(body, dict) else None
        if (not isinstance(channels, list) or not channels
                or len(channels) > MAX_REQUEST_CHANNELS
                or not all(isinstance(c, str) for c in channels)):  # fmt: skip
            raise ApiError(400, "bad_request", 'the body is {"ch": [URI, …]} '
                           f"(1 to {MAX_REQUEST_CHANNELS} alarms)")  # fmt: skip
        record: dict[str, Any] = {"ver": SCHEMA_VERSION, "who": who.name, "op": op,
                                  "ch": channels[:MAX_REQUEST_CHANNELS], "ok": False,
                                  "t": time.time_ns(), "by": gateway.id}  # fmt: skip
        forward: dict[str, Any] = {"ver": SCHEMA_VERSION, "op": op, "who": who.name,
                                   "by": gateway.id}  # fmt: skip
        if op == "shelve":
            why, minutes = body.get("why"), body.get("minutes")
            if not isinstance(why, str) or not why.strip() or len(why) > MAX_WHY_CHARS:
                raise ApiError(400, "bad_request", "a shelve needs a reason ('why', "
                               f"1 to {MAX_WHY_CHARS} characters)")  # fmt: skip
            if (isinstance(minutes, bool) or not isinstance(minutes, int | float)
                    or not 0 < minutes * 60e9 <= MAX_SHELVE_NS):  # fmt: skip
                raise ApiError(400, "bad_request", "a shelve needs 'minutes' "
                               "(more than 0, at most 30 days)")  # fmt: skip
            forward["why"] = record["why"] = why
            forward["until"] = record["until"] = time.time_ns() + int(minutes * 60e9)
        fail: dict[str, str] = {}
        allowed: list[str] = []
        for raw in channels:
            try:
                uri = parse_channel(raw).uri
            except ChannelError:
                fail[raw[:200]] = AlarmFailure.UNKNOWN
                continue
            if who.may_ack(uri):
                allowed.append(uri)
            else:
                fail[uri] = AlarmFailure.DENIED
        changed = 0
        if allowed:
            forward["ch"] = allowed
            try:
                reply = await gateway.bus.request(
                    subjects.alarm_request(), encode(forward), timeout=REQUEST_TIMEOUT_S
                )
                answer = decode_alarm_reply(reply.data)
            except (NoRespondersError, NatsTimeoutError, RuntimeError) as exc:
                record["err"] = AlarmFailure.UNAVAILABLE
                record["msg"] = f"no alarm service answered: {type(exc).__name__}"
                await audit(record)
                raise ApiError(503, "unavailable", record["msg"]) from None
            if "err" in answer:
                record["err"], record["msg"] = answer["err"], answer.get("msg", "")
                await audit(record)
                status = 400 if answer["err"] == "bad_request" else 503
                raise ApiError(status, answer["err"], answer.get("msg", ""))
            fail.update(answer.get("fail", {}))
            changed = answer["n"]
        record["ok"] = not fail
        if fail:
            record["fail"] = fail
        if not allowed:
            record["err"] = AlarmFailure.DENIED
            record["msg"] = f"{who.name} may not {op} these alarms"
        await audit(record)
        if not allowed:
            raise ApiError(403, "forbidden", record["msg"], fail=fail)
        return JSONResponse({"ok": not fail, "n": changed, "fail": fail})

    @app.get("/api/alarms/tree")
    async def get_tree(request: Request) -> Response:
        """The alarm tree and its revision (``tree`` null: none yet)."""
        who = await principal(request)
        try:
            entry = await store().latest()
        except StoreUnavailableError as exc:
            raise ApiError(503, "store_unavailable", str(exc)) from None
        return JSONResponse({"tree": entry.tree, **entry.summary(),
                             "editable": who.may_edit(TREE_GRANT)})  # fmt: skip

    @app.put("/api/alarms/tree")
    async def put_tree(request: Request) -> Response:
        """Save the tree: ``{"tree": {…}, "base_revision": N, "summary": "…"}``."""
        who = await principal(request)
        if not who.may_edit(TREE_GRANT):
            raise ApiError(403, "forbidden", f"{who.name} may not edit the alarm tree")
        body = await body_of(request, MAX_TREE_BYTES + 64 * 1024)
        if not isinstance(body, dict) or "tree" not in body:
            raise ApiError(400, "bad_request", 'the body is {"tree": {…}, '
                           '"base_revision": N, "summary": "…"}')  # fmt: skip
        base = body.get("base_revision")
        summary = body.get("summary", "")
        if isinstance(base, bool) or not isinstance(base, int) or base < 0:
            raise ApiError(
                400, "bad_request", "'base_revision' must be an integer >= 0"
            )
        if not isinstance(summary, str):
            raise ApiError(400, "bad_request", "'summary' must be a string")
        try:
            entry = await store().put(body["tree"], base, who.name, summary)
        except AlarmTreeError as exc:
            raise ApiError(422, "invalid", exc.reason, pointer=exc.pointer) from None
        except ConflictError as exc:
            raise ApiError(409, "conflict", str(exc), revision=exc.revision,
                           by=exc.rev.by, at=exc.rev.at) from None  # fmt: skip
        except StoreUnavailableError as exc:
            raise ApiError(503, "store_unavailable", str(exc)) from None
        audit_log.info("alarm tree saved by %s: revision %d (%s)", who.name,
                       entry.revision, summary)  # fmt: skip
        return JSONResponse(entry.summary())

    @app.post("/api/alarms/tree/import")
    async def import_tree(request: Request) -> Response:
        """Convert a Phoebus alarm configuration (the body, XML) into a tree and a
        report; nothing is stored (save it with ``PUT``)."""
        await principal(request)
        data = await read_raw(request, MAX_ALARM_XML_BYTES)
        file = request.query_params.get("file", "") or "upload.xml"
        try:
            tree, report = await asyncio.to_thread(import_phoebus_alarms, data, file)
        except AlarmImportError as exc:
            raise ApiError(422, "unconvertible", str(exc), line=exc.line) from None
        return JSONResponse({"tree": tree, "report": report.as_dict()})


__all__ = ["TREE_GRANT", "add_alarm_routes"]
