"""Acknowledge, unacknowledge, shelve and unshelve: a request applied to alarms.

The gateway has already checked that the end user holds the grant; here each
alarm named either changes (and its state is published with the user's name) or
is reported with why not. An alarm in the state asked for already (acknowledged
twice) is handled without a change.
"""

from __future__ import annotations

from typing import Any, Protocol

from synoptic_alarms.model import Alarm
from synoptic_schemas import ChannelError, parse_channel
from synoptic_schemas.alarms import AlarmFailure, AlarmRequestMsg


class Alarms(Protocol):
    def alarm_for(self, uri: str) -> Alarm | None: ...
    def changed(
        self, alarm: Alarm, ev: str, who: str = "", why: str = "", urgent: bool = False
    ) -> bool: ...


def apply_request(request: AlarmRequestMsg, alarms: Alarms, now: int) -> dict[str, Any]:
    """Apply a checked request; the reply's body (``ok``, ``n``, ``fail``)."""
    op, who, why = request["op"], request["who"], request.get("why", "")
    fail: dict[str, str] = {}
    changed = 0
    for raw in dict.fromkeys(request["ch"]):
        try:
            uri = parse_channel(raw).uri
        except ChannelError:
            fail[raw[:200]] = AlarmFailure.UNKNOWN
            continue
        alarm = alarms.alarm_for(uri)
        if alarm is None:
            fail[uri] = AlarmFailure.UNKNOWN
            continue
        if op == "ack":
            code = alarm.acknowledge(who, now)
        elif op == "unack":
            code = alarm.unacknowledge()
        elif op == "shelve":
            code = alarm.shelve(who, now, request["until"], why)
        else:
            code = alarm.unshelve()
        if code is not None:
            fail[uri] = code
        elif alarms.changed(alarm, op, who, why if op == "shelve" else "", True):
            changed += 1
    body: dict[str, Any] = {"ok": not fail, "n": changed}
    if fail:
        body["fail"] = fail
    return body
