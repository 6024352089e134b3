"""The alarm contract: subjects, states, requests and replies match their schemas."""

from __future__ import annotations

import pytest

from synoptic_schemas import DecodeError, Subjects, encode, parse_channel
from synoptic_schemas.alarms import (
    MAX_SHELVE_NS,
    decode_alarm,
    decode_alarm_reply,
    decode_alarm_request,
    is_active,
    is_unacknowledged,
)
from synoptic_schemas.jsonschemas import validator

NOW = 1_800_000_000_000_000_000
STATE = {
    "ver": 1, "ch": "ca://VAC:P1", "area": "Plant/Vacuum", "n": 3, "ev": "ack",
    "sev": 2, "st": "HIHI", "c": True, "lat": 2, "ackd": True, "since": NOW - 10,
    "t": NOW - 10, "at": NOW, "v": 7.5, "desc": "ion pump",
    "ack": {"by": "alice", "t": NOW}, "who": "alice",
    "shelf": {"by": "bob", "t": NOW, "until": NOW + 60, "why": "maintenance"},
}  # fmt: skip
REQUEST = {"ver": 1, "op": "shelve", "ch": ["ca://VAC:P1"], "who": "alice",
           "by": "gw-1", "why": "pump swap", "until": NOW + 3_600_000_000_000}  # fmt: skip


def test_alarm_subjects_round_trip() -> None:
    subjects = Subjects()
    channel = parse_channel("tango://h:1/sr/vac/1/pressure")
    assert subjects.alarm(channel) == "cs.alarm.st.tango.h:1.sr.vac.1.pressure"
    assert subjects.alarm_channel(subjects.alarm(channel)) == channel
    assert subjects.alarms() == "cs.alarm.st.>"
    assert subjects.alarm_request() == "cs.alarm.req"
    assert subjects.alarm_heartbeat() == "cs.alarm.hb"
    assert subjects.audit("alarms") == "cs.audit.alarms"


def test_states_decode_and_match_the_schema() -> None:
    state = decode_alarm(encode(STATE))
    assert state == STATE
    validator("alarm").validate(state)
    assert is_active(state) and not is_unacknowledged(state)
    cleared = {**STATE, "lat": 0, "sev": 0, "ackd": False}
    assert not is_active(cleared)
    fresh = {k: v for k, v in STATE.items() if k not in ("shelf", "ack")}
    assert is_unacknowledged({**fresh, "ackd": False})
    with pytest.raises(DecodeError, match="lat"):
        decode_alarm(encode({**STATE, "lat": 5}))
    with pytest.raises(DecodeError, match="'n'"):
        decode_alarm(encode({k: v for k, v in STATE.items() if k != "n"}))


def test_requests_are_checked() -> None:
    assert decode_alarm_request(encode(REQUEST), NOW) == REQUEST
    validator("alarm-request").validate(REQUEST)
    bad = [
        ({"op": "delete"}, "op must be one of"),
        ({"ch": []}, "1 to 10000"),
        ({"ch": [3]}, "channel URIs"),
        ({"who": ""}, "who must be"),
        ({"until": NOW - 1}, "next 30 days"),
        ({"until": NOW + MAX_SHELVE_NS + 1}, "next 30 days"),
        ({"why": " "}, "needs a reason"),
        ({"until": "soon"}, "needs 'until'"),
    ]
    for change, reason in bad:
        with pytest.raises(DecodeError, match=reason):
            decode_alarm_request(encode({**REQUEST, **change}), NOW)
    ack = {"ver": 1, "op": "ack", "ch": ["ca://X"], "who": "a", "by": "cli"}
    assert decode_alarm_request(encode(ack), NOW)["op"] == "ack"


def test_replies_and_the_other_payloads_match_their_schemas() -> None:
    reply = {"ver": 1, "ok": False, "n": 1, "fail": {"ca://Y": "unknown"}}
    assert decode_alarm_reply(encode(reply)) == reply
    validator("alarm-reply").validate(reply)
    validator("alarm-heartbeat").validate(
        {
            "ver": 1,
            "id": "alarms",
            "t": NOW,
            "period": 1.0,
            "n": 10,
            "act": 2,
            "tree": 4,
        }
    )
    validator("alarm-audit").validate(
        {
            "ver": 1,
            "who": "eve",
            "op": "ack",
            "ch": ["ca://X"],
            "ok": False,
            "err": "denied",
            "msg": "no grant",
            "t": NOW,
            "by": "gw-1",
        }
    )
