"""History blocks: the payload's contract (round trip, JSON Schema, bad input) and
the cutter that makes them."""

from __future__ import annotations

import time

import numpy as np
import pytest

from synoptic_bus import rollup as rollup_module
from synoptic_bus.blockcut import BlockCutter
from synoptic_schemas import Subjects, decode, encode, parse_channel
from synoptic_schemas.blocks import decode_block, encode_block
from synoptic_schemas.codec import encode_value, to_json_view
from synoptic_schemas.errors import ChannelError, DecodeError
from synoptic_schemas.jsonschemas import validator
from synoptic_schemas.series import Columns

S = 1_000_000_000


def cols(t: list[int], v: list[float] | None = None) -> Columns:
    values = np.arange(len(t), dtype=np.float64) if v is None else np.array(v)
    return Columns(
        np.array(t, np.int64), values, (np.arange(len(t)) % 4).astype(np.uint8)
    )


def test_a_block_round_trips_as_typed_arrays_and_matches_its_schema() -> None:
    c = cols([10, 20, 30], [1.5, float("nan"), -2.0])
    data = encode_block(5, 40, c)
    block = decode_block(data)
    assert (block.a, block.b, block.lvl) == (5, 40, 0)
    np.testing.assert_array_equal(block.cols.t, c.t)
    np.testing.assert_array_equal(block.cols.v, c.v)
    np.testing.assert_array_equal(block.cols.sev, c.sev)
    assert block.covers(np.array([4, 5, 39, 40])).tolist() == [False, True, True, False]
    assert len(data) < 3 * 17 + 80  # raw arrays, not per-value msgpack
    validator("block").validate(to_json_view(decode(data)))
    empty = decode_block(encode_block(7, 7, Columns.empty()))
    assert len(empty.cols) == 0 and empty.a == empty.b == 7


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"lvl": 3}, "lvl"),
        ({"a": "x"}, "block.a"),
        ({"b": 1}, "block.b is before"),
        ({"n": 2}, "n = 2"),
        ({"v": np.zeros(3, np.float32)}, "block.v"),
        ({"t": [1, 2, 3]}, "block.t"),
        ({"ver": 9}, "version"),
    ],
)
def test_a_bad_block_is_a_clear_error(change: dict, error: str) -> None:
    msg = decode(encode_block(5, 40, cols([10, 20, 30])))
    with pytest.raises(DecodeError, match=error):
        decode_block(encode({**msg, **change}))


def test_block_subjects_name_their_channel() -> None:
    s = Subjects()
    ch = parse_channel("tango://h:10000/sr/d-ct/1/current")
    assert s.block(ch) == "cs.roll.0.tango.h:10000.sr.d-ct.1.current"
    assert s.block(ch, "open") == "cs.roll.open.tango.h:10000.sr.d-ct.1.current"
    assert s.block_channel(s.block(ch, "open")) == ch
    with pytest.raises(ChannelError):
        s.block_channel("cs.roll.9.ca.X")


def test_blocks_close_at_window_ends_and_when_full_covering_without_gaps() -> None:
    cut = BlockCutter(span=1.0, max_values=3, grace=0.5, started_ns=0)
    assert cut.add("ca.X", cols([S + 1, S + 2])) == []
    closed = cut.add("ca.X", cols([S + 3, S + 4, 2 * S + 5]))
    assert [(c.a, c.b, c.cols.t.tolist()) for c in closed] == [
        (S, S + 4, [S + 1, S + 2, S + 3]),  # full at 3: ends after its last value
        (S + 4, 2 * S, [S + 4]),  # the window's end
    ]
    (growing,) = cut.open_blocks(2 * S + 10, quiet_every=5)
    assert (growing.a, growing.b, len(growing.cols)) == (2 * S, 2 * S + 6, 1)
    assert cut.open_blocks(2 * S + 20, quiet_every=5) == []  # unchanged
    (late,) = cut.expire(3 * S + S // 2 + 1)  # window end + grace passed
    assert (late.a, late.b) == (2 * S, 3 * S)
    (quiet,) = cut.open_blocks(9 * S, quiet_every=5)  # nothing since: empty
    assert (quiet.a, quiet.b, len(quiet.cols)) == (3 * S, 9 * S - S // 2, 0)
    (nxt,) = cut.add("ca.X", cols([20 * S + 1])) or cut.open_blocks(21 * S, 5)
    assert nxt.a == 3 * S  # coverage goes on from where the last block ended


def test_a_first_block_covers_only_from_when_the_cutter_sees_everything() -> None:
    cut = BlockCutter(span=10.0, max_values=100, grace=1.0, started_ns=12 * S)
    cut.add("ca.A", cols([15 * S]))
    cut.add("ca.B", cols([25 * S]))
    cut.add("ca.C", cols([11 * S]))  # older than the start: from itself
    got = {c.key: c.a for c in cut.open_blocks(30 * S, 5)}
    assert got == {"ca.A": 13 * S, "ca.B": 20 * S, "ca.C": 11 * S}


def test_a_lost_connection_closes_blocks_and_coverage_starts_again() -> None:
    cut = BlockCutter(span=10.0, max_values=100, grace=1.0, started_ns=0)
    cut.add("ca.X", cols([12 * S, 13 * S]))
    (closed,) = cut.interrupt(15 * S)  # values from 14 s on may be missed
    assert (closed.a, closed.b, len(closed.cols)) == (10 * S, 14 * S, 2)
    cut.add("ca.X", cols([31 * S]))  # before resume: covers from its first value
    cut.resume(40 * S)
    cut.add("ca.Y", cols([45 * S]))  # after: from a grace after the reconnect
    got = {c.key: c.a for c in cut.open_blocks(50 * S, 5)}
    assert got == {"ca.X": 31 * S, "ca.Y": 41 * S}


def test_values_the_stream_dropped_end_what_blocks_promise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rollup = rollup_module.Rollup(None, span=60.0)  # type: ignore[arg-type]  # (no I/O here)
    now = time.time_ns()
    for i in range(3):
        payload = encode_value(
            float(i), now - (5 - i) * 1_000_000, 0, "", i + 1, 1, True
        )
        rollup.on_stored(b"cs.hist.val.ca.X", payload)
    rollup.gap(now - 2_000_000)  # the stream lost what came after this
    rollup.gap(now - 1_000_000)  # (said once: at most every GAP_LOG_EVERY_S)
    assert rollup.dropped == 2
    (said,) = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert "larger budget" in said and "gap 1 " in said
    (closed,) = rollup.take()  # the block closes where the stream lost values
    assert closed.cols.v.tolist() == [0.0, 1.0, 2.0]
    assert closed.b == now - 3_000_000 + 1  # up to its last value, no further
    rollup.on_stored(
        b"cs.hist.val.ca.X", encode_value(9.0, time.time_ns() + S, 0, "", 9, 1, True)
    )
    assert rollup.take() == []
    (growing,) = rollup.cutter.open_blocks(time.time_ns() + 3 * S, 5)
    assert growing.a >= closed.b and growing.cols.v.tolist() == [9.0]


def test_a_full_rollup_asks_for_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rollup_module, "MAX_PENDING", 3)
    rollup = rollup_module.Rollup(None, span=60.0)  # type: ignore[arg-type]
    for i in range(3):
        assert not rollup.full()
        rollup.on_stored(
            b"cs.hist.val.ca.X", encode_value(float(i), i, 0, "", i + 1, 1, True)
        )
    assert rollup.full() and rollup.dropped == 0
    rollup.take()
    assert not rollup.full()
