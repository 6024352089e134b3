"""Array updates as a shift of the previous one: the finder, the group's record of
what it sent, and the client's rebuilding of the full value."""

from __future__ import annotations

import time

import numpy as np
import pytest

from synoptic_gateway.shift import MAX_CANDIDATES, MIN_BYTES, Shifts, find_shift
from synoptic_schemas import frames
from synoptic_schemas.codec import decode, encode, to_json_view

RNG = np.random.default_rng(11)


def value(v: object, seq: int, ep: int = 3) -> bytes:
    return encode({"ver": 1, "v": v, "t": 5 + seq, "sev": 0, "st": "", "seq": seq,
                   "ep": ep, "c": True})  # fmt: skip


def test_a_growing_buffer_is_the_previous_array_plus_its_tail() -> None:
    prev = RNG.random(300)
    assert find_shift(prev, np.append(prev, [0.5]), 200) == 0
    assert find_shift(prev, np.append(prev, RNG.random(7)), 200) == 0


@pytest.mark.parametrize("k", [1, 3, 250])
def test_a_full_buffer_shifted_by_k(k: int) -> None:
    prev = RNG.random(1000)
    new = np.concatenate((prev[k:], RNG.random(k)))
    assert find_shift(prev, new, 500) == k


def test_a_shift_longer_than_the_tail_allowed_is_not_found() -> None:
    prev = RNG.random(1000)
    new = np.concatenate((prev[600:], RNG.random(600)))
    assert find_shift(prev, new, 500) is None
    assert find_shift(prev, new, 600) == 600


def test_unrelated_arrays_dtype_and_shape_changes_do_not_shift() -> None:
    prev = RNG.random(1000)
    assert find_shift(prev, RNG.random(1000), 500) is None
    assert find_shift(prev, np.append(prev[1:], 1.0).astype("<f4"), 500) is None
    assert find_shift(prev.reshape(10, 100), prev.reshape(10, 100), 50) is None
    assert find_shift(prev, prev[:0], 500) is None
    # shorter than the overlap asks: the new array is not a suffix plus a tail
    assert find_shift(prev, prev[:400], 200) is None


def test_a_shorter_array_that_is_the_previous_ones_end_shifts() -> None:
    prev = RNG.random(1000)
    assert find_shift(prev, np.append(prev[700:], [1.0, 2.0]), 200) == 700


def test_nan_compares_bit_for_bit() -> None:
    prev = RNG.random(100)
    prev[[0, 5, 50]] = np.nan
    new = np.append(prev[1:], np.nan)
    assert find_shift(prev, new, 50) == 1
    other = new.copy()
    other[40] = 0.0  # where the overlap had NaN
    assert find_shift(prev, other, 50) is None


def test_integers_shift_too() -> None:
    prev = RNG.integers(0, 5, 2000).astype("<i2")
    new = np.append(prev[2:], np.array([1, 2], "<i2"))
    k = find_shift(prev, new, 1000)
    assert k is not None and k <= 2
    assert np.array_equal(np.concatenate((prev[k:], new[len(prev) - k :])), new)


def test_a_flat_line_costs_a_bounded_number_of_comparisons() -> None:
    prev = np.zeros(1_000_000)
    prev[-1] = 1.0  # every candidate but none matches: each compared in full
    new = np.zeros(1_000_000)
    started = time.perf_counter()
    assert find_shift(prev, new, 500_000) is None
    # at most MAX_CANDIDATES overlaps compared, not 500,000
    assert time.perf_counter() - started < 0.05 * MAX_CANDIDATES


def test_the_group_sends_the_shift_form_against_its_last_array() -> None:
    shifts = Shifts()
    buf = RNG.random(1000)
    first = value(buf, 1)
    assert shifts.shifted(0, first) is first  # nothing sent before: full
    nxt = np.append(buf[1:], 0.25)
    msg = decode(shifts.shifted(0, value(nxt, 2)))
    assert "v" not in msg
    assert (msg["sh"], msg["base"], msg["seq"], msg["ep"], msg["t"]) == (1, 1, 2, 3, 7)
    assert np.array_equal(msg["tail"], [0.25])
    held = decode(first)
    rebuilt = frames.unshift(held, msg)
    assert rebuilt is not None and np.array_equal(rebuilt["v"], nxt)
    assert rebuilt["seq"] == 2 and "sh" not in rebuilt and "base" not in rebuilt


def test_a_new_epoch_a_scalar_in_between_or_a_reduced_channel_send_full() -> None:
    buf = RNG.random(1000)
    shifts = Shifts()
    shifts.shifted(0, value(buf, 1))
    full = value(np.append(buf[1:], 1.0), 1, ep=4)  # the adapter restarted
    assert shifts.shifted(0, full) is full
    scalar = value(None, 2, ep=4)  # disconnected: v None
    assert shifts.shifted(0, scalar) is scalar
    again = value(np.append(buf[2:], [1.0, 2.0]), 3, ep=4)
    assert shifts.shifted(0, again) is again  # not against the array before None
    assert len(shifts) == 1
    shifts.shifted(1, value(buf, 1))
    shifts.forget(1)  # sent reduced (sub.pts)
    reduced = value(np.append(buf[1:], 1.0), 2)
    assert shifts.shifted(1, reduced) is reduced
    small = value(np.arange(10.0), 1)
    assert len(small) < MIN_BYTES and shifts.shifted(2, small) is small
    assert len(shifts) == 2  # only full arrays are kept


def test_the_client_refuses_a_shift_whose_base_it_does_not_hold() -> None:
    buf = RNG.random(1000)
    shifts = Shifts()
    shifts.shifted(0, value(buf, 1))
    msg = decode(shifts.shifted(0, value(np.append(buf[1:], 0.5), 2)))
    assert frames.unshift(None, msg) is None
    assert frames.unshift(decode(value(buf, 5)), msg) is None  # another seq
    assert frames.unshift(decode(value(buf, 1, ep=9)), msg) is None  # another ep
    assert frames.unshift(decode(value(1.5, 1)), msg) is None  # not an array


def test_the_json_view_rebuilds_the_same_array() -> None:
    buf = RNG.random(1000).astype("<f4")
    shifts = Shifts()
    shifts.shifted(0, value(buf, 1))
    nxt = np.append(buf[3:], np.array([1, 2, 3], "<f4"))
    msg = to_json_view(decode(shifts.shifted(0, value(nxt, 2))))
    held = to_json_view(decode(value(buf, 1)))
    rebuilt = frames.unshift(held, msg)
    assert rebuilt is not None and rebuilt["v"] == to_json_view(nxt)


def test_the_sub_frame_asks_the_shift_form() -> None:
    assert frames.sub(1, ["sim://a"], shift=True)["shift"] is True
    assert "shift" not in frames.sub(1, ["sim://a"])
    frames.validate_client_frame(frames.sub(1, ["sim://a"], shift=True))
    with pytest.raises(frames.FrameError, match="shift"):
        frames.validate_client_frame({"op": "sub", "id": 1, "ch": ["x"], "shift": 1})


async def test_the_python_client_rebuilds_ignores_old_and_asks_a_snapshot_once() -> (
    None
):
    from synoptic_gateway.client import GatewayClient, Subscription

    client = GatewayClient("ws://127.0.0.1:9/ws")  # never connected
    sub = Subscription(client, ["ca://WF"], None)
    sub.shift = True
    buf = RNG.random(1000)
    shifts = Shifts()
    first = value(buf, 1)
    shifts.shifted(0, first)
    sub._apply_snap(
        {"sid": 1, "ch": ["ca://WF"], "val": [decode(first)], "meta": [None]}
    )
    grown = np.append(buf[1:], [0.5])
    again = np.append(grown[2:], [0.1, 0.2])
    s2 = decode(shifts.shifted(0, value(grown, 2)))
    s3 = decode(shifts.shifted(0, value(again, 3)))
    sub._apply_upd({"sid": 1, "i": [0, 0], "val": [s2, s3]})  # two in one frame
    assert np.array_equal(sub.values[0]["v"], again) and sub.values[0]["seq"] == 3
    sub._apply_upd({"sid": 1, "i": [0], "val": [s2]})  # not newer: ignored
    assert sub.values[0]["seq"] == 3 and sub.shift_misses == 0
    orphan = {**s3, "seq": 9, "base": 8}
    sub._apply_upd({"sid": 1, "i": [0], "val": [orphan]})
    sub._apply_upd({"sid": 1, "i": [0], "val": [{**orphan, "seq": 10, "base": 9}]})
    assert sub.values[0]["seq"] == 3 and sub.shift_misses == 2
    resync = sub._resync
    assert resync is not None  # one fresh snapshot asked for both misses
    with pytest.raises(ConnectionError):
        await resync
    assert sub._resync is resync
