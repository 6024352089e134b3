"""Compressing images as areaDetector's codec plugin does, for the simulated PV
Access server: the counterpart of :mod:`synoptic_adapters.pva.codecs` (``lz4``,
``bslz4``, ``blosc``, ``jpeg``), so that the adapter's decoding is tested against
the formats, not against itself (its bitshuffle decoder is also checked against
vectors made by the bitshuffle library)."""

from __future__ import annotations

import blosc
import lz4.block
import numpy as np
import simplejpeg

from synoptic_adapters.pva.codecs import ND_DTYPES, bshuf_block_size


def nd_data_type(dtype: np.dtype) -> int:
    """areaDetector's NDDataType number of a numpy dtype."""
    return ND_DTYPES.index(dtype.newbyteorder("=").str[1:])


def _shuffle(block: np.ndarray, itemsize: int) -> bytes:
    """The bit transpose of one block of elements (a multiple of 8 of them)."""
    elements = block.view(np.uint8).reshape(-1, itemsize)
    bits = np.unpackbits(elements, axis=-1, bitorder="little").reshape(-1, itemsize, 8)
    return np.packbits(bits.transpose(1, 2, 0), axis=-1, bitorder="little").tobytes()


def bitshuffle_lz4(array: np.ndarray) -> bytes:
    """``bshuf_compress_lz4`` with its default block size."""
    flat = np.ascontiguousarray(array).reshape(-1)
    itemsize = flat.dtype.itemsize
    block = bshuf_block_size(itemsize)
    whole = len(flat) - len(flat) % 8
    out: list[bytes] = []
    for start in range(0, whole, block):
        part = flat[start : min(start + block, whole)]
        data = lz4.block.compress(_shuffle(part, itemsize), store_size=False)
        out += [len(data).to_bytes(4, "big"), data]
    out.append(flat[whole:].tobytes())
    return b"".join(out)


def encode(codec: str, image: np.ndarray) -> bytes:
    """``image``'s bytes compressed with ``codec`` (jpeg: 8-bit ``[h, w]`` or
    ``[h, w, 3]``)."""
    raw = np.ascontiguousarray(image)
    if codec == "lz4":
        return lz4.block.compress(raw.tobytes(), store_size=False)
    if codec == "bslz4":
        return bitshuffle_lz4(raw)
    if codec == "blosc":
        return blosc.compress(raw.tobytes(), typesize=raw.dtype.itemsize)
    if codec == "jpeg":
        if raw.ndim == 2:
            return simplejpeg.encode_jpeg(raw[:, :, None], 95, colorspace="GRAY")
        return simplejpeg.encode_jpeg(raw, 95, colorspace="RGB")
    raise ValueError(f"unknown codec {codec!r}")
