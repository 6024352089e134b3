"""Value payloads as columns: many ``ValueMsg`` payloads of one channel decoded
into time, value and severity arrays at once (history reads, trends).

An adapter's scalar float payload has one byte layout up to its severity (see
``synoptic_schemas.frames.order._CANONICAL_VALUE``): those are read with numpy, without unpacking a
map per payload; every other payload takes :func:`decode_value`. A value that is
not a number (string, array, a disconnected source's nil) becomes NaN; a payload
that does not decode is skipped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synoptic_schemas.codec import decode_value
from synoptic_schemas.errors import ContractError
from synoptic_schemas.messages import SCHEMA_VERSION

#: ``{ver, v: float64, t: uint64, sev: ...`` — the first 33 bytes of an adapter's
#: scalar float value: fixmap 8, "ver", 1, "v", f64 (8 bytes BE), "t", u64 (8
#: bytes BE), "sev", fixint.
_HEAD = b"\x88\xa3ver" + bytes((SCHEMA_VERSION,)) + b"\xa1v\xcb"
_MID = b"\xa1t\xcf"
_SEV = b"\xa3sev"
_N = 33


@dataclass
class Columns:
    """One channel's values in time order: ``t`` int64 ns since the epoch, ``v``
    float64, ``sev`` uint8."""

    t: np.ndarray
    v: np.ndarray
    sev: np.ndarray
    #: payloads that did not decode
    bad: int = 0

    def __len__(self) -> int:
        return len(self.t)

    @classmethod
    def empty(cls) -> Columns:
        return cls(
            np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.uint8)
        )

    @classmethod
    def concat(cls, parts: Sequence[Columns]) -> Columns:
        """Parts joined and sorted by time (stable)."""
        parts = [p for p in parts if len(p)]
        bad = sum(p.bad for p in parts)
        if not parts:
            return cls(*cls.empty().arrays(), bad=bad)
        t = np.concatenate([p.t for p in parts])
        v = np.concatenate([p.v for p in parts])
        sev = np.concatenate([p.sev for p in parts])
        if len(t) > 1 and np.any(t[1:] < t[:-1]):
            order = np.argsort(t, kind="stable")
            t, v, sev = t[order], v[order], sev[order]
        return cls(t, v, sev, bad)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.t, self.v, self.sev


def _number(v: object) -> float:
    if isinstance(v, bool | int | float) and not isinstance(v, np.ndarray):
        return float(v)
    return float("nan")


def decode_columns(payloads: Sequence[bytes]) -> Columns:
    """Columns of many value payloads (in their order)."""
    n = len(payloads)
    if n == 0:
        return Columns.empty()
    heads = np.frombuffer(
        b"".join(p[:_N].ljust(_N, b"\0") for p in payloads), np.uint8
    ).reshape(n, _N)
    fast = (
        (heads[:, :9] == np.frombuffer(_HEAD, np.uint8)).all(axis=1)
        & (heads[:, 17:20] == np.frombuffer(_MID, np.uint8)).all(axis=1)
        & (heads[:, 28:32] == np.frombuffer(_SEV, np.uint8)).all(axis=1)
        & (heads[:, 32] < 0x80)
    )
    t = heads[:, 20:28].copy().view(">u8").ravel().astype(np.int64)
    v = heads[:, 9:17].copy().view(">f8").ravel().astype(np.float64)
    sev = heads[:, 32].copy()
    keep = fast.copy()
    bad = 0
    for i in np.flatnonzero(~fast):
        try:
            msg = decode_value(payloads[i])
        except ContractError:
            bad += 1
            continue
        t[i] = msg["t"]
        v[i] = _number(msg["v"]) if msg["c"] else float("nan")
        sev[i] = min(max(int(msg["sev"]), 0), 3)
        keep[i] = True
    if bad:
        t, v, sev = t[keep], v[keep], sev[keep]
    return Columns(t, v, sev, bad)


__all__ = ["Columns", "decode_columns"]
