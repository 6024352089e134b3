"""``encode``'s reused per-thread packer and ``encode_value`` give exactly the bytes
(and the errors) of ``msgpack.packb`` with the codec's ``default``: the payloads are
a public contract."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgpack
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from synoptic_schemas import SCHEMA_VERSION, decode_value, encode
from synoptic_schemas.codec import _packer_options, encode_value
from synoptic_schemas.frames import value_order
from synoptic_schemas.frames.order import _match_canonical_value


def reference(msg: Any) -> bytes:
    """What ``encode`` was before: a fresh packer with ``default`` per call."""
    return msgpack.packb(msg, **_packer_options)


def outcome(fn: Any, msg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(msg)
    except Exception as exc:  # compared by type with the reference's
        return "error", type(exc)


ints = st.integers(min_value=-(2**70), max_value=2**70)  # beyond 64 bits too
scalars = st.one_of(
    st.none(),
    st.booleans(),
    ints,
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.floats(allow_nan=False, width=32).map(np.float32),
    st.floats(allow_nan=False).map(np.float64),
    st.integers(-(2**31), 2**31 - 1).map(np.int32),
    st.booleans().map(np.bool_),
    st.lists(st.floats(allow_nan=False), max_size=8).map(np.array),
    st.lists(st.integers(-100, 100), max_size=8).map(
        lambda xs: np.array(xs, dtype=np.int16)
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
messages = st.dictionaries(st.text(max_size=8), values, max_size=8)


@settings(max_examples=400)
@given(messages)
def test_encode_gives_the_bytes_and_errors_of_packb_with_default(msg: dict) -> None:
    assert outcome(encode, msg) == outcome(reference, msg)
    # and the packer is left clean by whatever happened
    assert encode({"ver": 1, "k": msg.__class__.__name__}) == reference(
        {"ver": 1, "k": "dict"}
    )


def test_encode_of_what_the_packer_alone_cannot_take_falls_back() -> None:
    wave = {"ver": 1, "v": np.arange(5, dtype=np.float64), "t": 1}
    assert encode(wave) == reference(wave)
    assert encode({"ver": 1, "v": np.int64(7)}) == reference({"ver": 1, "v": 7})
    for bad in ({"v": 2**70}, {"v": object()}, {"v": np.array(["x"])}):
        assert outcome(encode, bad) == outcome(reference, bad)
        assert outcome(encode, bad)[0] == "error"


fields = st.tuples(
    st.one_of(
        st.none(),
        st.booleans(),
        ints,
        st.floats(),
        st.text(max_size=20),
        st.lists(st.integers(0, 9), max_size=3),
        st.lists(st.floats(allow_nan=False), max_size=5).map(np.array),
    ),
    st.integers(0, 2**64 - 1),  # t
    st.integers(0, 3),  # sev
    st.text(max_size=300),  # st (fixstr, str8, str16 headers)
    st.integers(0, 2**64 - 1),  # seq
    st.integers(0, 2**64 - 1),  # ep
    st.booleans(),  # c
)


@settings(max_examples=400)
@given(fields)
def test_encode_value_is_the_adapters_value_message(f: tuple) -> None:
    v, t, sev, status, seq, ep, c = f
    msg = {"ver": SCHEMA_VERSION, "v": v, "t": t, "sev": sev, "st": status,
           "seq": seq, "ep": ep, "c": c}  # fmt: skip
    result = outcome(lambda m: encode_value(v, t, sev, status, seq, ep, c), msg)
    assert result == outcome(reference, msg)
    if result[0] == "error":  # an int beyond 64 bits: refused alike
        return
    raw = result[1]
    assert value_order(raw) == (ep, seq, t)
    decoded = decode_value(raw)
    assert decoded.keys() == msg.keys()
    assert decoded["seq"] == seq and decoded["st"] == status and decoded["c"] is c


def test_a_counter_value_takes_the_gateways_fast_order_path() -> None:
    raw = encode_value(41.0, 1_700_000_000_000_000_000, 0, "NO_ALARM", 41, 17, True)
    assert _match_canonical_value(raw) is not None


def test_threads_encoding_at_once_each_get_their_own_bytes() -> None:
    def run(k: int) -> bool:
        for i in range(2000):
            msg = {"ver": 1, "k": k, "i": i, "s": "x" * (i % 50), "v": float(i)}
            if encode(msg) != reference(msg):
                return False
            if i % 100 == 0:  # an array now and then: the fallback, mid-stream
                wave = {"ver": 1, "v": np.arange(i % 7, dtype=np.int32)}
                if encode(wave) != reference(wave):
                    return False
        return True

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(run, range(16)))
