"""The msgpack codec: round trips, typed arrays, versions, and hostile bytes."""

from __future__ import annotations

import contextlib

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import ValidationError

from synoptic_schemas import (
    DecodeError,
    VersionError,
    decode,
    decode_audit,
    decode_cmd,
    decode_cmd_reply,
    decode_heartbeat,
    decode_meta,
    decode_put,
    decode_put_reply,
    decode_sev,
    decode_value,
    encode,
)
from synoptic_schemas.codec import encode_sev, meta_text, to_json_view
from synoptic_schemas.jsonschemas import schema_names, validator
from synoptic_schemas.ndarray import DTYPE_CODES, pack_ndarray, unpack_ndarray

VALUE = {"ver": 1, "v": 1.5, "t": 1_700_000_000_000_000_000, "sev": 0, "st": "NO_ALARM",
         "seq": 1, "ep": 1_700_000_000_000, "c": True}  # fmt: skip
META = {"ver": 1, "dt": "f8", "shape": [], "w": True, "t": 1, "ep": 2, "unit": "mA",
        "prec": 3, "disp": [0.0, 500.0], "warn": [None, 400.0], "alarm": [None, 450.0],
        "ctrl": [0.0, 500.0], "desc": "beam current", "native": "DBR_DOUBLE"}  # fmt: skip
SAMPLES = {
    "value": (VALUE, decode_value),
    "sev": (
        {
            "ver": 1,
            "sev": 2,
            "st": "HIHI",
            "c": True,
            "t": 5,
            "seq": 7,
            "ep": 3,
            "v": 9.5,
        },
        decode_sev,
    ),
    "meta": (META, decode_meta),
    "put": ({"ver": 1, "v": [1, 2], "who": "op1", "timeout": 2.0}, decode_put),
    "put-reply": (
        {"ver": 1, "ok": False, "err": "access", "msg": "read-only"},
        decode_put_reply,
    ),
    "cmd": ({"ver": 1, "v": 2.5, "who": "op1", "timeout": 2.0}, decode_cmd),
    "cmd-reply": (
        {"ver": 1, "ok": False, "v": None, "err": "type", "msg": "expected a number"},
        decode_cmd_reply,
    ),
    "heartbeat": (
        {
            "ver": 1,
            "id": "epics-0",
            "proto": "ca",
            "ep": 5,
            "t": 6,
            "period": 1.0,
            "n": 10,
            "conn": 9,
        },
        decode_heartbeat,
    ),
    "audit": (
        {
            "ver": 1,
            "who": "op1",
            "ch": "ca://X",
            "v": 3,
            "ok": True,
            "t": 7,
            "by": "gw-1",
            "op": "cmd",
        },
        decode_audit,
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_payload_round_trips_and_matches_its_json_schema(name: str) -> None:
    msg, decoder = SAMPLES[name]
    decoded = decoder(encode(msg))
    assert decoded == msg
    validator(name).validate(to_json_view(decoded))


def test_every_schema_file_is_a_valid_schema() -> None:
    assert {"value", "meta", "put", "put-reply", "want", "heartbeat", "audit"} <= set(
        schema_names()
    )
    for name in schema_names():
        validator(name)  # check_schema raises on a bad file


@pytest.mark.parametrize("code", sorted(DTYPE_CODES))
def test_typed_arrays_of_every_dtype_round_trip_without_copy(code: int) -> None:
    dtype = DTYPE_CODES[code]
    array = (np.arange(24) % 2 if dtype.kind == "b" else np.arange(24)).astype(dtype)
    for shaped in (array, array.reshape(4, 6)):
        out = decode_value(encode({**VALUE, "v": shaped}))["v"]
        assert out.dtype == dtype and out.shape == shaped.shape
        np.testing.assert_array_equal(out, shaped)
        assert not out.flags.writeable  # a view over the payload, not a decoded copy
        validator("value").validate(to_json_view({**VALUE, "v": out}))


def test_waveform_of_100k_doubles_is_raw_bytes_on_the_wire() -> None:
    wave = np.sin(np.linspace(0, 10, 100_000))
    payload = encode({**VALUE, "v": wave})
    assert len(payload) < 100_000 * 8 + 100  # raw 8 bytes per element, no per-item tags
    np.testing.assert_array_equal(decode_value(payload)["v"], wave)


def test_big_endian_and_non_contiguous_arrays_are_normalised() -> None:
    big = np.arange(10, dtype=">f8")
    assert unpack_ndarray(pack_ndarray(big)).dtype == np.dtype("<f8")
    strided = np.arange(20, dtype="<i4")[::2]
    np.testing.assert_array_equal(unpack_ndarray(pack_ndarray(strided)), strided)


def test_unsupported_values_fail_at_encode_not_on_the_wire() -> None:
    with pytest.raises(TypeError):
        encode({**VALUE, "v": object()})
    with pytest.raises(TypeError):
        encode({**VALUE, "v": np.array(["a", "b"])})


def test_unknown_major_version_is_rejected_clearly() -> None:
    with pytest.raises(VersionError, match="version 2 is not supported"):
        decode_value(encode({**VALUE, "ver": 2}))
    with pytest.raises(DecodeError, match="no valid 'ver'"):
        decode(encode({k: v for k, v in VALUE.items() if k != "ver"}))


@pytest.mark.parametrize(
    ("mutation", "problem"),
    [
        ({"sev": 7}, "sev must be 0..3"),
        ({"seq": "1"}, "seq must be int"),
        ({"c": 1}, "c must be bool"),
        ({"t": True}, "t must be int, not bool"),
    ],
)
def test_wrong_field_types_are_named(mutation: dict, problem: str) -> None:
    with pytest.raises(DecodeError, match=problem):
        decode_value(encode({**VALUE, **mutation}))


def test_missing_required_key_is_named() -> None:
    with pytest.raises(DecodeError, match="lacks required key 'seq'"):
        decode_value(encode({k: v for k, v in VALUE.items() if k != "seq"}))


def test_truncated_payloads_are_decode_errors() -> None:
    payload = encode({**VALUE, "v": np.arange(100.0)})
    for cut in range(len(payload)):
        with pytest.raises(DecodeError):
            decode_value(payload[:cut])


def test_bad_typed_array_payloads_are_decode_errors() -> None:
    for bad in (
        b"",
        b"\x63\x01",
        b"\x0a\x09",
        b"\x0a\x01\x05\x00\x00\x00" + b"\x00" * 7,
    ):
        with pytest.raises(DecodeError, match="typed array"):
            decode(msgpack.packb({"ver": 1, "v": msgpack.ExtType(1, bad)}))
    with pytest.raises(DecodeError, match="unknown msgpack ext type 9"):
        decode(msgpack.packb({"ver": 1, "v": msgpack.ExtType(9, b"")}))


@settings(max_examples=3000)
@given(st.binary(max_size=300))
def test_random_bytes_raise_nothing_but_decode_error(data: bytes) -> None:
    for decoder in (decode_value, decode_meta, decode_put, decode_put_reply):
        with contextlib.suppress(DecodeError):
            decoder(data)


@settings(max_examples=2000)
@given(st.data())
def test_mutated_valid_payloads_raise_nothing_but_decode_error(
    data: st.DataObject,
) -> None:
    payload = bytearray(encode({**VALUE, "v": np.arange(8.0)}))
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(payload) - 1))
        payload[index] = data.draw(st.integers(0, 255))
    with contextlib.suppress(DecodeError):
        decode_value(bytes(payload))


PVA_VALUES = {
    "table": {"name": ["M0", "M1"], "position": np.array([1.5, -2.0]),
              "ok": np.array([True, False])},
    "image": np.arange(24, dtype="<u2").reshape(2, 4, 3),
    "struct": {"position": 1.5, "name": "m", "limits": {"low": -1.0, "high": 1.0},
               "rows": [{"q": 1}], "trace": np.arange(3.0)},
}  # fmt: skip
PVA_META = {
    "table": {**META, "dt": "table", "shape": [], "native": "epics:nt/NTTable:1.0",
              "cols": [{"name": "name", "label": "Name", "dt": "str"},
                       {"name": "position", "label": "Position", "dt": "f8"}]},
    "image": {**META, "dt": "u2", "shape": [2, 4, 3], "img": {"color": "rgb"},
              "native": "epics:nt/NTNDArray:1.0"},
    "struct": {**META, "dt": "struct", "shape": [], "native": "x:Thing:1.0"},
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(PVA_VALUES))
def test_pv_access_tables_images_and_structures_match_the_schemas(kind: str) -> None:
    value = decode_value(encode({**VALUE, "v": PVA_VALUES[kind]}))
    validator("value").validate(to_json_view(value))
    meta = decode_meta(encode(PVA_META[kind]))
    assert meta == PVA_META[kind]
    validator("meta").validate(to_json_view(meta))
    if kind == "table":
        assert list(value["v"]) == ["name", "position", "ok"]  # column order kept
        assert value["v"]["ok"].dtype == np.bool_


def test_pv_access_meta_fields_are_checked() -> None:
    with pytest.raises(DecodeError, match=r"meta\.img must be dict"):
        decode_meta(encode({**META, "img": "rgb"}))
    bad_cols = {**META, "dt": "table", "cols": [{"name": "a"}]}
    with pytest.raises(ValidationError, match="required"):
        validator("meta").validate(bad_cols)


def test_a_severity_transition_carries_small_values_only() -> None:
    def v_of(v: object) -> object:
        return decode_sev(encode_sev(v, 1, 2, "HIHI", 3, 4, True)).get("v", "absent")

    assert v_of(4.5) == 4.5 and v_of(3) == 3 and v_of(True) is True
    assert v_of(np.float32(1.5)) == 1.5 and v_of("ON") == "ON"
    for big in ("x" * 65, np.arange(3.0), {"a": 1}, None, ["a"]):
        assert v_of(big) == "absent"
    gone = decode_sev(encode_sev(None, 1, 3, "disconnected", 9, 4, False))
    assert gone == {"ver": 1, "sev": 3, "st": "disconnected", "c": False, "t": 1,
                    "seq": 9, "ep": 4}  # fmt: skip
    validator("sev").validate(gone)
    with pytest.raises(DecodeError, match=r"sev\.sev must be 0\.\.3"):
        decode_sev(encode({**gone, "sev": 4}))
    with pytest.raises(DecodeError, match=r"sev\.v must be"):
        decode_sev(encode({**gone, "v": [1]}))


def test_meta_text_reads_the_description_and_units_alone() -> None:
    meta = {"ver": 1, "dt": "float64", "shape": [], "w": False, "t": 1, "ep": 1}
    assert meta_text(encode({**meta, "desc": "beam current", "unit": "mA"})) == (
        "beam current",
        "mA",
    )
    assert meta_text(encode({**meta, "desc": "d" * 500, "unit": "u" * 99})) == (
        "d" * 200,
        "u" * 40,
    )
    assert meta_text(encode(meta)) == ("", "")
    assert meta_text(msgpack.packb({"ver": 1, "desc": 3, "unit": ["mm"]})) == ("", "")
    assert meta_text(msgpack.packb({"ver": 99, "desc": "x"})) == ("", "")
    assert meta_text(msgpack.packb([1, 2])) == ("", "")
    assert meta_text(b"\xc1 not msgpack") == ("", "")
