"""The live record that history answers are checked against: where the record
itself missed values (a channel's ``seq`` jumps), answered points and pixel
columns in that span are not compared, and the misses are counted; elsewhere an
answered point the record does not hold is a stranger."""

from __future__ import annotations

import numpy as np

from synoptic_gateway.history.record import RECORD, check_trace, missed_spans

MS = 1_000_000


def record(seqs: list[int], ep: int = 7) -> np.ndarray:
    """Values 100 ms apart (seq n at n × 100 ms), value = seq."""
    return np.array([(s * 100 * MS, float(s), ep, s) for s in seqs], RECORD)


def answer(seqs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([s * 100.0 for s in seqs]), np.array([float(s) for s in seqs]))


def test_a_seq_jump_is_a_span_the_record_missed() -> None:
    rec = record([1, 2, 3, 7, 8, 9])  # 4, 5 and 6 never reached the recorder
    assert missed_spans(rec, 0, 10**12) == ([(300 * MS, 700 * MS)], 3)
    assert missed_spans(rec, 800 * MS, 10**12) == ([], 0)  # outside the window
    # a new epoch (an adapter's restart) starts again at 1: no jump
    restarted = np.concatenate([record([1, 2, 3]), record([1, 2], ep=8)])
    assert missed_spans(restarted, 0, 10**12) == ([], 0)


def test_points_the_record_missed_are_not_strangers() -> None:
    rec = record(list(range(1, 21)) + list(range(31, 51)))
    t, v = answer(list(range(1, 51)))  # the bus held every value
    check = check_trace("ca://X", rec, t, v, 0, 51 * 100 * MS, 50)
    assert check.equal, check
    assert check.missed == 10 and check.recorded == 40


def test_a_value_the_record_saw_differently_is_a_stranger() -> None:
    rec = record(list(range(1, 41)))
    t, v = answer(list(range(1, 41)))
    v[10] = -1.0
    check = check_trace("ca://X", rec, t, v, 0, 41 * 100 * MS, 40)
    assert check.strangers == [(1100.0, -1.0)] and check.missed == 0
    # shown beside the recorded values around it
    assert check.near == [[(1000.0, 10.0, 7, 10), (1100.0, 11.0, 7, 11),
                           (1200.0, 12.0, 7, 12)]]  # fmt: skip
    assert not check.equal


def test_of_values_recorded_at_one_time_each_is_matched() -> None:
    extra = np.array([(1100 * MS, 99.0, 7, 41)], RECORD)  # another value at 1.1 s
    rec = np.sort(np.concatenate([record(list(range(1, 41))), extra]), order="t")
    t, v = answer(list(range(1, 41)))
    t, v = np.insert(t, 11, 1100.0), np.insert(v, 11, 99.0)  # both answered
    check = check_trace("ca://X", rec, t, v, 0, 41 * 100 * MS, 40)
    assert check.equal, check
