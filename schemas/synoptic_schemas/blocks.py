"""History blocks: many values of one channel in one bus message (``cs.roll.*``).

The rollup service (``synoptic rollup``) cuts each channel's values into blocks of
a time window and publishes each block once, as typed arrays: a trend reading 15
minutes of 100 channels at 10 Hz reads about 1 500 messages instead of 900 000.

Payload (msgpack map)::

    ver  1
    lvl  0: every value (the only level so far)
    a    ns since the epoch: the block covers values with source time a <= t < b
    b    ns since the epoch (exclusive end)
    n    values in the block
    t    typed array <i8: source times (ns), in time order
    v    typed array <f8: values (NaN: not a number or disconnected)
    sev  typed array <u1: alarm severity 0..3

"Covers" is a promise: every value of the channel whose source time lies in
``[a, b)`` and that reached the rollup service is in the block, so a reader takes
the rest of a range from the raw history. A block closes when its window ends
(or when it is full); the growing block of each channel is published every second
on the ``open`` subject with ``b`` = its last value's time + 1, only the latest
kept (``Nats-Rollup: sub``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synoptic_schemas.codec import decode, encode
from synoptic_schemas.errors import DecodeError
from synoptic_schemas.messages import SCHEMA_VERSION
from synoptic_schemas.series import Columns

#: Levels a block can have (``lvl``): 0 holds every value.
LEVELS = (0,)

_DTYPES = {"t": np.dtype("<i8"), "v": np.dtype("<f8"), "sev": np.dtype("<u1")}


@dataclass(frozen=True)
class Block:
    """A decoded block: the window it covers and its values."""

    a: int
    b: int
    cols: Columns
    lvl: int = 0

    def covers(self, t: np.ndarray) -> np.ndarray:
        """Which of the times ``t`` (ns) lie in this block's window."""
        return (t >= self.a) & (t < self.b)


def encode_block(a: int, b: int, cols: Columns, lvl: int = 0) -> bytes:
    """The payload of a block covering ``[a, b)`` holding ``cols``."""
    if lvl not in LEVELS:
        raise ValueError(f"unknown block level {lvl}")
    if b < a:
        raise ValueError(f"block window ends ({b}) before it starts ({a})")
    return encode(
        {
            "ver": SCHEMA_VERSION, "lvl": lvl, "a": int(a), "b": int(b),
            "n": len(cols), "t": np.ascontiguousarray(cols.t, _DTYPES["t"]),
            "v": np.ascontiguousarray(cols.v, _DTYPES["v"]),
            "sev": np.ascontiguousarray(cols.sev, _DTYPES["sev"]),
        }
    )  # fmt: skip


def decode_block(data: bytes) -> Block:
    """Decode a block payload; :class:`DecodeError` names what is wrong."""
    msg = decode(data)
    for key in ("lvl", "a", "b", "n"):
        value = msg.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise DecodeError(f"block.{key} must be an integer, not {value!r}")
    if msg["lvl"] not in LEVELS:
        raise DecodeError(f"block.lvl {msg['lvl']} is not one of {LEVELS}")
    if msg["b"] < msg["a"]:
        raise DecodeError("block.b is before block.a")
    arrays = []
    for key, dtype in _DTYPES.items():
        array = msg.get(key)
        if not isinstance(array, np.ndarray) or array.dtype != dtype:
            raise DecodeError(f"block.{key} must be a typed array of {dtype.str}")
        if array.ndim != 1 or len(array) != msg["n"]:
            raise DecodeError(f"block.{key} must hold n = {msg['n']} elements")
        arrays.append(array)
    t, v, sev = arrays
    return Block(
        msg["a"], msg["b"], Columns(t.astype(np.int64, copy=False), v, sev), msg["lvl"]
    )


__all__ = ["LEVELS", "Block", "decode_block", "encode_block"]
