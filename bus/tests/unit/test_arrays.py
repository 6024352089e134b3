"""Thinning of large values: every channel reaches back the whole window within its
share of the large-value stream's bytes."""

from __future__ import annotations

import itertools

from synoptic_bus.arrays import FILL, ArrayThinner

MB = 1 << 20


def kept_times(thinner: ArrayThinner, key: str, size: int, rate_hz: float,
               seconds: float, start: float = 0.0) -> list[float]:  # fmt: skip
    out = []
    for i in range(int(seconds * rate_hz)):
        now = start + i / rate_hz
        if thinner.keep(key, size, now):
            out.append(now)
    return out


def test_a_channel_alone_keeps_what_its_budget_pays_for() -> None:
    # 100 MiB over 100 s: 0.9 MiB/s for the one channel; 2 MiB images at 10 Hz
    thinner = ArrayThinner(100 * MB, 100.0)
    kept = kept_times(thinner, "img", 2 * MB, 10, 60)
    assert kept[0] == 0.0  # the first value always
    # one 2 MiB image per 2 / 0.9 s (a tenth of a second of slack: 10 Hz)
    gaps = [b - a for a, b in itertools.pairwise(kept)]
    assert all(abs(g - 2 / FILL) <= 0.1 + 1e-9 for g in gaps)
    assert len(kept) * 2 * MB <= FILL * 100 * MB * 60 / 100 + 2 * MB


def test_channels_share_the_budget_equally_and_a_small_one_keeps_every_value() -> None:
    thinner = ArrayThinner(64 * MB, 64.0)  # 0.9 MiB/s in all
    kept: dict[str, int] = {"img": 0, "wf": 0}
    for i in range(600):  # 60 s at 10 Hz, both channels interleaved
        now = i / 10
        kept["img"] += thinner.keep("img", 2 * MB, now)
        kept["wf"] += thinner.keep("wf", 8000, now)
    assert kept["wf"] == 600  # 80 kB/s, within its 0.45 MiB/s
    # the image keeps ~0.45 MiB/s: one every ~4.4 s (plus the first)
    assert 12 <= kept["img"] <= 15
    assert thinner.kept == kept["img"] + kept["wf"]
    assert thinner.thinned == 1200 - thinner.kept


def test_a_quiet_channel_saves_no_burst_and_a_gone_one_frees_its_share() -> None:
    thinner = ArrayThinner(10 * MB, 10.0)  # 0.9 MiB/s
    assert thinner.keep("a", MB, 0.0)
    assert thinner.keep("b", MB, 0.0)
    # a long quiet spell: one value kept, not a burst of saved-up ones
    assert thinner.keep("a", MB, 100.0)
    assert not thinner.keep("a", MB, 100.1)
    # "b" has not been seen for longer than the window: "a" gets it all
    assert thinner.rate() == FILL * 10 * MB / 10.0
