"""Browser frames: builders, validators, raw batch assembly and the JSON Schema."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synoptic_schemas import DecodeError, VersionError, encode, frames
from synoptic_schemas.codec import to_json_view
from synoptic_schemas.frames import ErrorCode, FrameError, order
from synoptic_schemas.jsonschemas import validator

VALUE = {"ver": 1, "v": 1.5, "t": 1_700_000_000_000_000_000, "sev": 0,
         "st": "NO_ALARM", "seq": 3, "ep": 1_700_000_000_000, "c": True}  # fmt: skip
META = {"ver": 1, "dt": "f8", "shape": [], "w": False, "t": 1, "ep": 2, "unit": "mA"}


def test_pack_batch_gives_the_bytes_of_the_decoded_frame() -> None:
    wave = {**VALUE, "v": np.arange(5, dtype="<f8")}
    payloads = [encode(VALUE), encode(wave)] * 10
    raw = frames.pack_batch("upd", 7, list(range(20)), payloads)
    decoded = frames.unpack(raw)
    assert decoded["op"] == "upd" and decoded["sid"] == 7
    assert decoded["i"] == list(range(20))
    assert raw == frames.pack(frames.upd(7, list(range(20)), decoded["val"]))
    np.testing.assert_array_equal(decoded["val"][1]["v"], np.arange(5))


@pytest.mark.parametrize("n", [0, 1, 15, 16, 70000])
def test_pack_batch_array_headers(n: int) -> None:
    raw = frames.pack_batch("meta", 1, [0] * n, [encode(META)] * n)
    decoded = frames.unpack(raw)
    assert len(decoded["meta"]) == n and decoded["op"] == "meta"


@pytest.mark.parametrize(
    ("stale", "more"), [((), ()), ((0,), ()), ((), (1,)), ((0,), (1,))]
)
def test_pack_snap_equals_the_generic_encoding(stale, more) -> None:
    channels = ["ca://A", "ca://B"]
    raw = frames.pack_snap(
        4, 2, channels, [encode(VALUE), None], [None, encode(META)], stale, more
    )
    expected = frames.snap(4, 2, channels, [VALUE, None], [None, META], stale, more)
    assert frames.unpack(raw) == expected
    assert raw == frames.pack(expected)
    assert ("more" in expected) == bool(more)


@pytest.mark.parametrize(
    "frame",
    [
        frames.sub(1, ["ca://A", "tango://h:1/a/b/c/d"]),
        frames.unsub("x", 3),
        frames.put(9, "ca://A", 1.5),
        frames.cmd(10, "tango://h:1/a/b/c/Reset"),
        frames.cmd(11, "tango://h:1/a/b/c/SetLevel", 2.5),
        frames.ping(),
        frames.ping(10),
        frames.hist(3, ["ca://A", "ca://B"], 1.7e12, 1.7e12 + 60e3, 800),
        frames.sub(4, ["ca://WF"], {"ca://WF": 800}, shift=True),
        frames.auth(5, "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"),
        frames.at(6, ["ca://A", "ca://WF"], 1.7e12),
        frames.at("r", ["ca://WF"], 1.7e12, {"ca://WF": 800}),
        frames.play(7, ["ca://A"], 1.7e12, 60),
        frames.halt(8, 7),
        frames.step(9, "ca://A", 1.7e12, -1),
        frames.step(9, "ca://A", 1.7e12, 1),
    ],
)
def test_client_frames_validate_and_match_the_schema(frame: dict) -> None:
    assert frames.validate_client_frame(frames.unpack(frames.pack(frame))) == frame
    validator("frames").validate(frame)
    assert frames.from_json(frames.to_json(frame)) == frame


@pytest.mark.parametrize(
    "frame",
    [
        frames.hello(
            "gw-1", "anonymous", False, {"channels": 5, "frame_bytes": 9, "rate": 1}
        ),
        frames.hello(
            "gw-1", "otto", True, {"channels": 5, "frame_bytes": 9, "rate": 1}, 1.8e9
        ),
        frames.auth_state(5, "otto", write=True, cmd=True, screens=["*"], exp=1.8e9),
        {
            **frames.auth_state(
                None, "otto", write=False, cmd=False, screens=[], exp=None
            ),
            "expired": True,
            "msg": "expired",
        },
        frames.snap(1, 2, ["ca://A"], [VALUE], [META]),
        frames.snap(None, 2, ["ca://A"], [None], [None]),
        frames.snap(
            None, 2, ["ca://A", "ca://W"], [VALUE, None], [META, META], (), (1,)
        ),
        frames.upd(2, [0], [{**VALUE, "v": np.zeros(3, "<f4")}]),
        frames.upd(
            2,
            [0, 1],
            [
                {
                    **{k: v for k, v in VALUE.items() if k != "v"},
                    "sh": 1,
                    "tail": np.ones(1, "<f8"),
                    "base": VALUE["seq"] - 1,
                },
                VALUE,
            ],
        ),
        frames.meta(2, [0], [META]),
        frames.stats(2, 10, 3),
        frames.put_reply(9, True),
        frames.put_reply(9, False, "denied", "no grant"),
        frames.cmd_reply(10, True, v=np.arange(3, dtype=np.int32)),
        frames.cmd_reply(11, False, "type", "needs a DevDouble argument"),
        frames.err(None, ErrorCode.BAD_FRAME, "nope"),
        frames.err(None, ErrorCode.UNAUTHORIZED, "the token expired"),
        frames.err(1, ErrorCode.BAD_CHANNEL, "bad", ch="xx://A"),
        frames.pong(None),
        frames.bus(False),
        frames.unsub_ack(8, 3),
        frames.hist_reply(
            3,
            1.0,
            2.0,
            800,
            ["ca://A", "x"],
            [(np.array([1.5]), np.array([2.0]), np.array([0], np.uint8)), None],
            [None, ("bad_channel", "no scheme")],
            ["archive+bus", None],
        ),
        frames.at_reply(
            6,
            1.7e12,
            ["ca://A", "ca://WF", "ca://OLD", "x"],
            [VALUE, {**VALUE, "v": np.zeros(3, "<f8"), "kt": 1.7e12 - 5}, None, None],
            [META, META, META, None],
            ["raw", "arrays", None, None],
            [
                None,
                None,
                {"code": "not_kept", "msg": "none", "since": 1.71e12},
                {"code": "bad_channel", "msg": "no scheme"},
            ],
            meta_later=[2],
        ),
        frames.at_reply(  # older than the raw history: blocks, then the archive
            8,
            1.6e12,
            ["ca://A", "tango://h:10000/a/b/c/d"],
            [
                {
                    "ver": 1,
                    "v": 2.5,
                    "t": 1_599_999_999_000_000_000,
                    "sev": 2,
                    "st": "",
                    "c": True,
                },
                {
                    "ver": 1,
                    "v": 3,
                    "t": 1_599_999_000_000_000_000,
                    "sev": 0,
                    "st": "",
                    "c": True,
                },
            ],
            [META, META],
            ["blocks", "archive"],
            [None, None],
        ),
        frames.pb(7, 1.7e12, [0, 2], [VALUE, None], meta_indexes=[2], metas=[META]),
        frames.pb(7, 1.7e12, [], [], end=frames.END_NOW),
        frames.pb(7, 1.7e12, [], [], end=frames.END_ERROR, msg="the bus is down"),
        frames.halt_ack(8, 7),
        frames.step_reply(9, "ca://A", 1.7e12 + 0.001),
        frames.step_reply(9, "ca://A", None),
    ],
)
def test_server_frames_match_the_schema(frame: dict) -> None:
    validator("frames").validate(to_json_view(frame))
    assert frames.from_json(frames.to_json(frame)) == to_json_view(frame)


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ([1, 2], ErrorCode.BAD_FRAME),
        ({"op": "nope", "id": 1}, ErrorCode.BAD_FRAME),
        ({"op": "sub", "ch": ["ca://A"]}, ErrorCode.BAD_FRAME),
        ({"op": "sub", "id": 1, "ch": []}, ErrorCode.BAD_FRAME),
        ({"op": "sub", "id": 1, "ch": "ca://A"}, ErrorCode.BAD_FRAME),
        ({"op": "sub", "id": 1, "ch": [1]}, ErrorCode.BAD_CHANNEL),
        ({"op": "unsub", "id": 1, "sid": "3"}, ErrorCode.BAD_FRAME),
        (
            {"op": "hist", "id": 1, "ch": [], "t0": 1, "t1": 2, "px": 1},
            ErrorCode.BAD_FRAME,
        ),
        (
            {"op": "hist", "id": 1, "ch": ["ca://A"], "t0": True, "t1": 2, "px": 1},
            ErrorCode.BAD_RANGE,
        ),
        (
            {"op": "hist", "id": 1, "ch": ["ca://A"], "t0": 3, "t1": 2, "px": 1},
            ErrorCode.BAD_RANGE,
        ),
        (
            {"op": "hist", "id": 1, "ch": ["ca://A"], "t0": 1, "t1": 2, "px": 1.5},
            ErrorCode.BAD_RANGE,
        ),
        ({"op": "unsub", "id": 1, "sid": True}, ErrorCode.BAD_FRAME),
        ({"op": "put", "id": 1, "ch": "ca://A"}, ErrorCode.BAD_FRAME),
        ({"op": "put", "id": 1, "v": 1}, ErrorCode.BAD_FRAME),
        ({"op": "cmd", "id": 1, "v": 1}, ErrorCode.BAD_FRAME),
        ({"op": "ping", "id": 1.5}, ErrorCode.BAD_FRAME),
        ({"op": "ping", "id": "x" * 65}, ErrorCode.BAD_FRAME),
        ({"op": "ping", "id": 2**53}, ErrorCode.BAD_FRAME),
        ({"op": "unsub", "id": 1, "sid": 2**64}, ErrorCode.BAD_FRAME),
        ({"op": "auth", "id": 1}, ErrorCode.BAD_FRAME),
        ({"op": "auth", "id": 1, "token": ""}, ErrorCode.BAD_FRAME),
        ({"op": "auth", "id": 1, "token": "x" * 16385}, ErrorCode.BAD_FRAME),
        ({"op": "at", "id": 1, "ch": ["ca://A"]}, ErrorCode.BAD_RANGE),
        ({"op": "at", "id": 1, "ch": ["ca://A"], "t": "now"}, ErrorCode.BAD_RANGE),
        ({"op": "at", "id": 1, "ch": ["ca://A"], "t": -1}, ErrorCode.BAD_RANGE),
        ({"op": "at", "id": 1, "ch": [], "t": 1}, ErrorCode.BAD_FRAME),
        ({"op": "play", "id": 1, "ch": ["ca://A"], "t": 1}, ErrorCode.BAD_FRAME),
        (
            {"op": "play", "id": 1, "ch": ["ca://A"], "t": 1, "speed": 601},
            ErrorCode.BAD_FRAME,
        ),
        ({"op": "halt", "id": 1}, ErrorCode.BAD_FRAME),
        (
            {"op": "step", "id": 1, "ch": "ca://A", "t": 1, "dir": 0},
            ErrorCode.BAD_FRAME,
        ),
        (
            {"op": "step", "id": 1, "ch": ["ca://A"], "t": 1, "dir": 1},
            ErrorCode.BAD_FRAME,
        ),
    ],
)
def test_invalid_client_frames_raise_frame_errors(frame: object, code: str) -> None:
    with pytest.raises(FrameError) as info:
        frames.validate_client_frame(frame)
    assert info.value.code == code
    validator("frames").validate(info.value.frame())


def test_error_keeps_the_request_id_when_readable() -> None:
    with pytest.raises(FrameError) as info:
        frames.validate_client_frame({"op": "sub", "id": 42, "ch": []})
    assert info.value.frame()["id"] == 42


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_frame_errors(data: bytes) -> None:
    try:
        frames.validate_client_frame(frames.unpack(data))
    except FrameError as exc:
        assert exc.code in {ErrorCode.BAD_FRAME, ErrorCode.BAD_CHANNEL}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=100))
def test_arbitrary_text_raises_only_frame_errors(text: str) -> None:
    try:
        frames.validate_client_frame(frames.from_json(text))
    except FrameError as exc:
        assert exc.code in {ErrorCode.BAD_FRAME, ErrorCode.BAD_CHANNEL}


def test_value_order_reads_the_order_key_and_checks_the_version() -> None:
    assert frames.value_order(encode(VALUE)) == (VALUE["ep"], VALUE["seq"], VALUE["t"])
    wave = {**VALUE, "v": np.arange(4, dtype="<f8")}
    assert frames.value_order(encode(wave))[1] == 3
    with pytest.raises(VersionError):
        frames.value_order(encode({**VALUE, "ver": 2}))
    for bad in (b"\xc1", encode([1]), encode({**VALUE, "seq": "3"}),
                encode({k: v for k, v in VALUE.items() if k != "ep"}),
                encode({**VALUE, "ver": None}), encode({**VALUE, "t": True})):  # fmt: skip
        with pytest.raises(DecodeError):
            frames.value_order(bad)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=100))
def test_value_order_raises_only_decode_errors(data: bytes) -> None:
    with contextlib.suppress(DecodeError):  # anything else fails the test
        frames.value_order(data)


def _generic_order(data: bytes) -> tuple[int, int, int] | type[Exception]:
    """value_order's answer through the generic path (the map decoded)."""
    try:
        msg = order._versioned_map(data)
    except Exception as exc:
        return type(exc)
    ep, seq, t = msg.get("ep"), msg.get("seq"), msg.get("t")
    if type(ep) is not int or type(seq) is not int or type(t) is not int:
        return DecodeError
    return ep, seq, t


def _order_or_error(data: bytes) -> tuple[int, int, int] | type[Exception]:
    try:
        return frames.value_order(data)
    except Exception as exc:
        return type(exc)


_scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False) | st.text(max_size=40)
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    v=_scalars,
    t=st.integers(0, 2**64 - 1),
    sev=st.integers(0, 200),
    status=st.text(max_size=40),
    seq=st.integers(0, 2**64 - 1),
    ep=st.integers(0, 2**64 - 1),
    c=st.booleans(),
)
def test_value_order_of_an_adapter_payload_equals_the_generic_read(
    v: object, t: int, sev: int, status: str, seq: int, ep: int, c: bool
) -> None:
    """The fast path (a match of the adapters' layout) answers what decoding the
    map answers, for every scalar value, status, width of integer and flag."""
    data = encode({"ver": 1, "v": v, "t": t, "sev": sev, "st": status, "seq": seq,
                   "ep": ep, "c": c})  # fmt: skip
    assert _order_or_error(data) == _generic_order(data) == (ep, seq, t)


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_value_order_of_a_damaged_adapter_payload_equals_the_generic_read(
    data: st.DataObject,
) -> None:
    """Cut, extended or with one byte changed, an adapter's payload gets the same
    answer (or the same error type) from value_order as from decoding its map."""
    raw = bytearray(encode(VALUE))
    action = data.draw(st.sampled_from(["flip", "cut", "extend"]))
    if action == "flip":
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    elif action == "cut":
        del raw[data.draw(st.integers(0, len(raw) - 1)) :]
    else:
        raw += data.draw(st.binary(min_size=1, max_size=9))
    assert _order_or_error(bytes(raw)) == _generic_order(bytes(raw))


def test_value_order_fast_path_covers_the_adapters_payloads() -> None:
    """What the EPICS/Tango publishers and the bench send takes the fast path."""
    for v in (1.5, 7, -1, None, True, "OPEN", "x" * 31):
        for status in ("NO_ALARM", "HIHI", ""):
            data = encode({**VALUE, "v": v, "st": status})
            assert order._CANONICAL_VALUE.fullmatch(data) is not None, data
    for not_canonical in (
        {**VALUE, "v": np.arange(3.0)},  # typed arrays: generic path
        {**VALUE, "st": "é"},  # non-ASCII text: UTF-8 checked by the generic path
        {**VALUE, "v": [1, 2]},
        {**VALUE, "t": 5},  # a t of 5 ns is no uint64 field
        dict(reversed(VALUE.items())),
    ):
        data = encode(not_canonical)
        assert order._CANONICAL_VALUE.fullmatch(data) is None
        assert _order_or_error(data) == _generic_order(data)


@pytest.mark.parametrize(
    ("pts", "says"),
    [
        ({"ca://A": 0}, "integer from 1 to 16384"),
        ({"ca://A": -5}, "integer from 1 to 16384"),
        ({"ca://A": 10**9}, "integer from 1 to 16384"),
        ({"ca://A": 512.5}, "integer from 1 to 16384"),
        ({"ca://A": True}, "integer from 1 to 16384"),
        ({"ca://A": "800"}, "integer from 1 to 16384"),
        ({"ca://B": 800}, "not in '{op}.ch'"),
        ([800], "'{op}.pts' must be a map"),
    ],
)
@pytest.mark.parametrize(
    "request_of",
    [
        lambda pts: {"op": "sub", "id": 3, "ch": ["ca://A"], "pts": pts},
        lambda pts: {"op": "at", "id": 3, "ch": ["ca://A"], "t": 1.7e12, "pts": pts},
        lambda pts: {
            "op": "play",
            "id": 3,
            "ch": ["ca://A"],
            "t": 1.7e12,
            "speed": 10,
            "pts": pts,
        },
    ],
    ids=["sub", "at", "play"],
)
def test_bad_point_counts_are_refused_clearly(pts, says, request_of) -> None:
    frame = request_of(pts)
    with pytest.raises(frames.FrameError, match=says.format(op=frame["op"])) as info:
        frames.validate_client_frame(frame)
    assert info.value.code == ErrorCode.BAD_FRAME
    assert info.value.frame()["id"] == 3
    validator("frames").validate(info.value.frame())


@pytest.mark.parametrize(
    "frame",
    [
        frames.at(1, ["ca://WF", "ca://IMG"], 1.7e12, {"ca://WF": 800, "ca://IMG": 1}),
        frames.play(2, ["ca://WF"], 1.7e12, 60, {"ca://WF": 16384}),
    ],
)
def test_rewind_requests_take_point_counts_as_sub_does(frame: dict) -> None:
    assert frames.validate_client_frame(frame) == frame
    validator("frames").validate(frame)


@pytest.mark.parametrize("n", [0, 16385, 512.5])
@pytest.mark.parametrize(
    "frame",
    [
        frames.sub(1, ["ca://A"]),
        frames.at(1, ["ca://A"], 1.7e12),
        frames.play(1, ["ca://A"], 1.7e12, 10),
    ],
    ids=["sub", "at", "play"],
)
def test_the_schema_refuses_the_point_counts_the_gateway_refuses(frame, n) -> None:
    frame = {**frame, "pts": {"ca://A": n}}
    with pytest.raises(frames.FrameError):
        frames.validate_client_frame(frame)
    assert not validator("frames").is_valid(frame)


def test_point_counts_round_up_to_a_few_sizes() -> None:
    assert [frames.round_points(n) for n in (1, 256, 257, 800, 1024, 16384)] == [
        256, 256, 512, 1024, 1024, 16384]  # fmt: skip
    frame = frames.sub(1, ["ca://A"], {"ca://A": 800})
    assert frames.validate_client_frame(frame) == frame
    validator("frames").validate(frame)
    assert "pts" not in frames.sub(1, ["ca://A"])
