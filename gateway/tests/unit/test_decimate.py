"""Arrays reduced to a plot's resolution: the min/max envelope of every bucket,
the first and last element, and nothing else is touched."""

from __future__ import annotations

import numpy as np
import pytest

from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.decimate import (
    bin_max,
    envelope_indexes,
    reduce_map,
    reduce_value,
)
from synoptic_gateway.history.moment import points_of, reduced
from synoptic_schemas import frames, parse_channel
from synoptic_schemas.codec import decode, encode

RNG = np.random.default_rng(7)


def value(v: object) -> bytes:
    return encode({"ver": 1, "v": v, "t": 5, "sev": 1, "st": "HIGH", "seq": 9,
                   "ep": 3, "c": True})  # fmt: skip


def buckets(n: int, points: int) -> list[tuple[int, int]]:
    b = points // 2 - 1
    starts = sorted({(i * n) // b for i in range(b)})
    return list(zip(starts, [*starts[1:], n], strict=True))


@pytest.mark.parametrize(
    "v",
    [
        np.sin(np.arange(100_000) / 300) + RNG.normal(0, 0.2, 100_000),
        RNG.integers(-1000, 1000, 50_001).astype("<i4"),
        RNG.random(4097).astype("<f4"),
        np.full(20_000, 2.5),
    ],
    ids=["sine-f8", "i4", "f4", "constant"],
)
@pytest.mark.parametrize("points", [256, 1024, 4096])
def test_the_envelope_keeps_each_buckets_min_and_max_first_and_last(v, points) -> None:
    reduced = decode(reduce_value(value(v), points))
    x, w = reduced["x"], reduced["v"]
    assert reduced["n"] == len(v) and len(w) == len(x) <= points
    assert w.dtype == v.dtype and x.dtype == np.dtype("<u4")
    assert list(x) == sorted(set(x.tolist()))  # in index order, no repeats
    np.testing.assert_array_equal(w, v[x])  # the very values, at their indexes
    assert x[0] == 0 and x[-1] == len(v) - 1
    for lo, hi in buckets(len(v), points):
        inside = (x >= lo) & (x < hi)
        assert w[inside].min() == v[lo:hi].min()
        assert w[inside].max() == v[lo:hi].max()
    # the other keys are the value's own
    assert {k: reduced[k] for k in ("t", "sev", "st", "seq", "ep", "c")} == {
        "t": 5, "sev": 1, "st": "HIGH", "seq": 9, "ep": 3, "c": True}  # fmt: skip


def test_nan_is_ignored_unless_a_bucket_holds_nothing_else() -> None:
    v = np.arange(10_000, dtype="<f8")
    v[100:200] = np.nan
    v[5000:] = np.nan
    idx = envelope_indexes(v, 256)
    finite = v[idx][~np.isnan(v[idx])]
    assert finite.max() == 4999 and finite.min() == 0


@pytest.mark.parametrize(
    "v",
    [
        3.5,
        "text",
        np.arange(100, dtype="<f8"),  # fits already
        np.zeros((200, 256), dtype="<u2"),  # an image that fits
        np.zeros((2, 300, 400), dtype="<u2"),  # 3-D, not an image
        [1.0] * 5000,  # a plain list, not a typed array
    ],
)
def test_anything_else_is_sent_as_it_is(v) -> None:
    raw = value(v)
    assert reduce_value(raw, 256) is raw


def test_an_image_is_binned_by_block_maximum_per_colour_keeping_dtype() -> None:
    image = np.arange(5 * 7 * 3, dtype="u1").reshape(5, 7, 3)
    out = bin_max(image, 2)
    assert out.shape == (3, 4, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out[0, 0], image[:2, :2].max(axis=(0, 1)))
    np.testing.assert_array_equal(out[2, 3], image[4, 6])  # a partial edge block
    floats = np.ones((4, 4), dtype="<f4")
    floats[0, 0] = np.nan
    floats[2:, 2:] = np.nan
    binned = bin_max(floats, 2)
    assert binned[0, 0] == 1 and np.isnan(binned[1, 1])


def test_an_image_wider_than_the_points_gains_bin_and_full_shape() -> None:
    reduced = decode(reduce_value(value(np.ones((600, 1100), dtype="<u2")), 256))
    assert reduced["bin"] == 5 and reduced["n"] == [600, 1100]
    assert reduced["v"].shape == (120, 220) and reduced["v"].dtype == np.uint16


def test_a_payload_it_cannot_read_is_forwarded() -> None:
    assert reduce_value(b"\xc1garbage", 256) == b"\xc1garbage"


def test_a_value_is_reduced_once_per_size_whatever_the_groups_asking() -> None:
    state = ChannelState(parse_channel("ca://WAVE"), "cs")
    raw = value(RNG.random(100_000))
    first = state.reduced_to(raw, 1024)
    assert state.reduced_to(raw, 1024) is first  # the second group: the same bytes
    other = state.reduced_to(raw, 4096)  # another size: its own reduction
    assert other is not first and len(decode(other)["v"]) > len(decode(first)["v"])
    newer = value(RNG.random(100_000))
    assert state.reduced_to(newer, 1024) is not first  # a new value: reduced anew
    for size in frames.POINT_SIZES:
        state.reduced_to(newer, size)
    assert len(state.reduced) == len(frames.POINT_SIZES)  # one kept per size at most


@pytest.mark.parametrize(
    "v",
    [
        RNG.random(10_000),
        RNG.integers(0, 65535, (1024, 1024), dtype="<u2"),
        2.5,
        np.arange(100, dtype="<f8"),
    ],
    ids=["waveform", "image", "scalar", "fits"],
)
def test_a_past_value_is_reduced_as_a_live_one(v) -> None:
    """``at`` and ``pb`` reduce decoded values (``reduced``): the same map the live
    path sends, the value's other keys (``kt`` of a kept array) kept."""
    raw = value(v)
    past = {**decode(raw), "kt": 1.5e12}
    got = reduced(past, 512)
    live = decode(reduce_value(raw, 512))
    assert got is past if reduce_map(past, 512) is None else got is not past
    assert got["kt"] == 1.5e12 and got.keys() - {"kt"} == live.keys()
    for key, want in live.items():
        np.testing.assert_array_equal(got[key], want)
    assert reduced(past, None) is past and reduced(None, 512) is None


def test_rewind_point_counts_round_up_as_a_subscriptions_do() -> None:
    frame = frames.at(1, ["ca://A", "ca://B", "ca://C"], 1.7e12,
                      {"ca://A": 400, "ca://B": 1})  # fmt: skip
    assert points_of(frame) == {"ca://A": 512, "ca://B": 256}
    assert points_of(frames.at(1, ["ca://A"], 1.7e12)) == {}
