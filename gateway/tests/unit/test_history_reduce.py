"""Columns from value payloads, and the reduction to at most 2 points per pixel."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from synoptic_gateway.history.reduce import reduce_columns
from synoptic_schemas import encode
from synoptic_schemas.series import Columns, decode_columns


def payload(v: object, t: int, sev: int = 0, c: bool = True) -> bytes:
    return encode({"ver": 1, "v": v, "t": t, "sev": sev, "st": "", "seq": 1, "ep": 1,
                   "c": c})  # fmt: skip


def test_decode_columns_fast_and_generic_paths_agree() -> None:
    payloads = [
        payload(1.5, 10, 1),  # an adapter's float: the numpy path
        payload(7, 20),  # an int: the generic path
        payload(None, 30, 3, c=False),  # disconnected: NaN
        payload("text", 40),  # not a number: NaN
        b"\x93junk",  # undecodable: skipped, counted
        payload(np.arange(3.0), 50),  # an array: NaN
    ]
    cols = decode_columns(payloads)
    assert cols.t.tolist() == [10, 20, 30, 40, 50] and cols.bad == 1
    assert cols.v[:2].tolist() == [1.5, 7.0] and np.isnan(cols.v[2:]).all()
    assert cols.sev.tolist() == [1, 0, 3, 0, 0]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=True, allow_infinity=False, width=32), min_size=1,
        max_size=400,
    ),
    px=st.integers(1, 50),
    sevs=st.lists(st.integers(0, 3), min_size=1, max_size=400),
)  # fmt: skip
def test_reduction_bounds_and_keeps_what_matters(
    values: list[float], px: int, sevs: list[int]
) -> None:
    n = len(values)
    t = np.sort(np.random.default_rng(n).integers(0, 10**9, n)).astype(np.int64)
    v = np.array(values, np.float64)
    sev = np.resize(np.array(sevs, np.uint8), n)
    out = reduce_columns(Columns(t, v, sev), 0, 10**9, px)
    assert len(out) <= 2 * px
    assert np.all(np.diff(out.t) >= 0)
    assert out.t[0] == t[0] and out.t[-1] == t[-1]
    if n > 2 * px and px > 1 and np.isfinite(v).any():  # px 1: first and last
        assert np.nanmax(out.v) == np.nanmax(v) and np.nanmin(out.v) == np.nanmin(v)
    if n <= 2 * px:
        assert len(out) == n


def test_range_outside_is_cut_and_sev_changes_are_kept_within_budget() -> None:
    t = np.arange(1000, dtype=np.int64)
    v = np.zeros(1000)
    sev = np.zeros(1000, np.uint8)
    sev[500:510] = 2
    out = reduce_columns(Columns(t, v, sev), 100, 899, 20)
    assert out.t[0] == 100 and out.t[-1] == 899 and len(out) <= 40
    assert 500 in out.t.tolist() and 510 in out.t.tolist()


_FIRST_ANSWER = """
import sys
import numpy as np
from synoptic_gateway.history import service
before = set(sys.modules)
n = 10_000
t = np.arange(n, dtype=np.int64) * 1_000_000
v = np.sin(np.arange(n) * 0.37)
cols = service.Columns(t, v, (np.arange(n) % 3).astype(np.uint8))
series = service._reduce_all([service.ChannelHistory(cols)], 0, int(t[-1]), 800)
reply = service.frames.hist_reply(1, 0.0, 1e4, 800, ["ca://X"], series, [None], ["bus"])
service.frames.pack(reply)
print(sorted(set(sys.modules) - before))
"""


def _first_answer_loads() -> str:
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_ANSWER],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_first_trend_after_start_loads_no_module() -> None:
    """The first trend a user opens waits for no module to load: the reduction
    keeps its points by a mask, not by ``np.unique`` (which loads ``numpy.ma`` on
    first use, 0.5 s without compiled bytecode)."""
    assert _first_answer_loads() == "[]"
