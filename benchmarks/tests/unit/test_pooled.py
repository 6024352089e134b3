"""The pooled p99 ratio of windows in pairs, and its interval over the pairs."""

import numpy as np

from synoptic_benchmarks.history.bench import pooled, ratio_interval


def _windows(seed: int, pairs: int, scale: float = 1.0) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [list((rng.exponential(3e6, 500) * scale).astype(int)) for _ in range(pairs)]


def test_the_interval_holds_the_ratio_and_narrows_to_it_where_pairs_agree() -> None:
    alone = _windows(1, 8)
    same = pooled(alone, alone)
    assert same["p99_ratio"] == 1.0 and same["p99_ratio_90"] == [1.0, 1.0]
    doubled = pooled(alone, [[2 * x for x in w] for w in alone])
    assert doubled["p99_ratio"] == 2.0 and doubled["p99_ratio_90"] == [2.0, 2.0]


def test_one_window_s_hiccup_widens_the_interval_not_the_ratio_alone() -> None:
    alone, during = _windows(2, 12), _windows(3, 12)
    during[5] = during[5][:-20] + [200_000_000] * 20  # one 200-ms stall
    report = pooled(alone, during)
    low, high = report["p99_ratio_90"]
    assert low <= report["p99_ratio"] <= high
    assert low < 1.5 < high  # without that window the ratio would be near 1
    quiet = pooled(alone, _windows(3, 12))["p99_ratio_90"]
    assert quiet[1] - quiet[0] < high - low


def test_no_interval_under_three_pairs() -> None:
    assert ratio_interval(_windows(4, 2), _windows(5, 2)) is None
    assert pooled(_windows(4, 1), _windows(5, 1))["p99_ratio_90"] is None
