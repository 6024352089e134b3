"""Typed arrays on the wire: msgpack ext type 1 holding dtype, shape and raw LE bytes.

Ext payload layout (all little-endian)::

    u8 dtype code | u8 ndim | ndim × u32 dims | raw element bytes

A browser wraps the raw bytes in a typed array (``Float64Array`` …) after one
``slice`` to align them; Python gets a read-only numpy view with no per-element
work.
"""

from __future__ import annotations

import struct

import numpy as np

from synoptic_schemas.errors import DecodeError

EXT_NDARRAY = 1

#: dtype code on the wire ⇄ numpy dtype (little-endian). Codes are part of the contract.
DTYPE_CODES: dict[int, np.dtype] = {
    1: np.dtype("<i1"),
    2: np.dtype("<u1"),
    3: np.dtype("<i2"),
    4: np.dtype("<u2"),
    5: np.dtype("<i4"),
    6: np.dtype("<u4"),
    7: np.dtype("<i8"),
    8: np.dtype("<u8"),
    9: np.dtype("<f4"),
    10: np.dtype("<f8"),
    11: np.dtype("?"),
}
#: The same, by numpy dtype (native byte order accepted on encode).
CODES_BY_DTYPE: dict[np.dtype, int] = {dt: code for code, dt in DTYPE_CODES.items()}
#: Names used in metadata and the browser (``f8`` → Float64Array …).
DTYPE_NAMES: dict[int, str] = {
    1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4",
    7: "i8", 8: "u8", 9: "f4", 10: "f8", 11: "bool",
}  # fmt: skip
MAX_NDIM = 4


def pack_ndarray(array: np.ndarray) -> bytes:
    """Encode an array as the ext payload (copies only to make it contiguous LE)."""
    dtype = (
        array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
    )
    code = CODES_BY_DTYPE.get(dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype)
    if code is None:
        raise TypeError(f"arrays of dtype {array.dtype} have no wire encoding")
    if array.ndim == 0 or array.ndim > MAX_NDIM:
        raise TypeError(f"arrays must have 1..{MAX_NDIM} dimensions, not {array.ndim}")
    data = np.ascontiguousarray(array, dtype=DTYPE_CODES[code])
    header = struct.pack(f"<BB{array.ndim}I", code, array.ndim, *array.shape)
    return header + data.tobytes()


def unpack_ndarray(payload: bytes) -> np.ndarray:
    """Decode an ext payload into a read-only numpy array; :class:`DecodeError` if bad."""
    if len(payload) < 2:
        raise DecodeError("typed array: truncated header")
    code, ndim = payload[0], payload[1]
    dtype = DTYPE_CODES.get(code)
    if dtype is None:
        raise DecodeError(f"typed array: unknown dtype code {code}")
    if not 1 <= ndim <= MAX_NDIM:
        raise DecodeError(f"typed array: bad dimension count {ndim}")
    offset = 2 + 4 * ndim
    if len(payload) < offset:
        raise DecodeError("typed array: truncated shape")
    shape = struct.unpack_from(f"<{ndim}I", payload, 2)
    count = 1
    for dim in shape:
        count *= dim
    if len(payload) - offset != count * dtype.itemsize:
        raise DecodeError(
            f"typed array: {len(payload) - offset} data bytes for shape {shape} "
            f"of {DTYPE_NAMES[code]}"
        )
    return np.frombuffer(payload, dtype=dtype, count=count, offset=offset).reshape(
        shape
    )
