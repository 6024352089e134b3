"""areaDetector's NTNDArray codecs, decompressed in the adapter (p4p does not).

An NTNDArray compressed by areaDetector's codec plugin carries the codec's name
in ``codec.name``, the compressed bytes in ``value`` and the *uncompressed*
element type in ``codec.parameters`` (areaDetector's ``NDDataType``: Int8, UInt8,
Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64); ``dimension``
keeps the uncompressed shape. Decoded here:

- ``lz4``: one LZ4 block (no frame) of the whole array;
- ``bslz4``: bitshuffle + LZ4 blocks as ``bshuf_compress_lz4`` writes them (no
  header; the library's default block size);
- ``blosc``: a Blosc buffer (self-describing);
- ``jpeg``: 8-bit mono or RGB (interleaved, whatever the colour mode was).

Each decoder is given the exact size the dimensions promise and refuses any
other: a corrupt or hostile buffer raises :class:`CodecError` (the channel shows
why), never a partial image or an unbounded allocation.
"""

from __future__ import annotations

import blosc
import lz4.block
import numpy as np
import simplejpeg

#: areaDetector NDDataType → numpy dtype (the index is the enum's value).
ND_DTYPES = ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")
#: Codec names decompressed here.
CODECS = ("lz4", "bslz4", "blosc", "jpeg")
#: Bitshuffle: blocks hold a multiple of 8 elements, ~8 KiB by default.
_BSHUF_MULT = 8
_BSHUF_TARGET_BYTES = 8192
_BSHUF_MIN_BLOCK = 128


class CodecError(ValueError):
    """A compressed array that cannot be decoded; the message says why."""


def require(codec: str) -> None:
    """Raise :class:`CodecError` unless ``codec`` is one decoded here."""
    if codec not in CODECS:
        raise CodecError(
            f"image compressed with codec {codec!r}: not one the adapter "
            f"decompresses ({', '.join(CODECS)})"
        )


def original_dtype(parameters: object) -> np.dtype:
    """The uncompressed element type from ``codec.parameters``."""
    if isinstance(parameters, bool) or not isinstance(parameters, int):
        raise CodecError(
            f"codec.parameters {parameters!r} does not name the uncompressed "
            "data type (an areaDetector NDDataType number)"
        )
    if not 0 <= parameters < len(ND_DTYPES):
        raise CodecError(f"unknown NDDataType {parameters} in codec.parameters")
    return np.dtype(ND_DTYPES[parameters]).newbyteorder("<")


def decompress(codec: str, data: np.ndarray, dtype: np.dtype, count: int) -> np.ndarray:
    """``count`` elements of ``dtype`` (1-D; jpeg: ``[h, w]`` or ``[h, w, 3]``
    uint8) from the compressed bytes ``data``."""
    require(codec)
    raw = np.ascontiguousarray(data).view(np.uint8).tobytes()
    nbytes = count * dtype.itemsize
    try:
        if codec == "lz4":
            out = lz4.block.decompress(raw, uncompressed_size=nbytes)
        elif codec == "bslz4":
            return bitshuffle_lz4(raw, dtype, count)
        elif codec == "blosc":
            out = _blosc(raw, nbytes)
        else:
            return _jpeg(raw, count)
    except CodecError:
        raise
    except Exception as exc:  # the libraries' own errors: corrupt data
        raise CodecError(f"{codec} data could not be decompressed: {exc}") from exc
    if len(out) != nbytes:
        raise CodecError(f"{codec} data gave {len(out)} bytes, not {nbytes}")
    return np.frombuffer(out, dtype)


def _blosc(raw: bytes, nbytes: int) -> bytes:
    if len(raw) < 16:
        raise CodecError("blosc data shorter than its header")
    declared = blosc.get_cbuffer_sizes(raw)[0]
    if declared != nbytes:  # checked before anything is allocated
        raise CodecError(f"blosc data holds {declared} bytes, not {nbytes}")
    return blosc.decompress(raw)


def _jpeg(raw: bytes, count: int) -> np.ndarray:
    if not simplejpeg.is_jpeg(raw):
        raise CodecError("jpeg data is not a JPEG image")
    height, width, colorspace, _ = simplejpeg.decode_jpeg_header(raw)
    gray = colorspace == "Gray"
    if height * width * (1 if gray else 3) != count:  # checked before decoding
        raise CodecError(
            f"jpeg image of {width}x{height} ({colorspace}) does not fit "
            f"{count} elements"
        )
    image = simplejpeg.decode_jpeg(raw, colorspace="GRAY" if gray else "RGB")
    return image[:, :, 0] if gray else image


def bshuf_block_size(itemsize: int) -> int:
    """Elements per block of ``bshuf_compress_lz4`` by default (~8 KiB)."""
    size = _BSHUF_TARGET_BYTES // itemsize // _BSHUF_MULT * _BSHUF_MULT
    return max(size, _BSHUF_MIN_BLOCK)


def _transpose_bits(x: np.ndarray) -> np.ndarray:
    """Each uint64 as an 8×8 bit matrix (byte i, bit j) transposed, in place."""
    for shift, mask in _TRANSPOSE_STEPS:
        t = ((x >> shift) ^ x) & mask
        x ^= t
        x ^= t << shift
    return x


_TRANSPOSE_STEPS = tuple(
    (np.uint64(shift), np.uint64(mask))
    for shift, mask in (
        (7, 0x00AA00AA00AA00AA),
        (14, 0x0000CCCC0000CCCC),
        (28, 0x00000000F0F0F0F0),
    )
)


def _unshuffle(shuffled: np.ndarray, blocks: int, size: int, itemsize: int) -> bytes:
    """Undo the bit transpose of ``blocks`` blocks of ``size`` elements each: per
    byte of an element, eight bit planes of ``size / 8`` bytes. Each 8 elements'
    byte is one 8×8 bit matrix (plane × element), transposed as a uint64."""
    planes = shuffled.reshape(blocks, itemsize, 8, size // 8)
    words = np.ascontiguousarray(planes.transpose(0, 1, 3, 2)).view("<u8")
    octets = _transpose_bits(words).view(np.uint8)  # (k, byte, group, element)
    return octets.reshape(blocks, itemsize, size).transpose(0, 2, 1).tobytes()


def bitshuffle_lz4(raw: bytes, dtype: np.dtype, count: int) -> np.ndarray:
    """Decode ``bshuf_compress_lz4`` output: LZ4 blocks (each a 4-byte big-endian
    length and its data) of bit-shuffled elements, then the last ``count % 8``
    elements as they are."""
    itemsize = dtype.itemsize
    block = bshuf_block_size(itemsize)
    sizes = [block] * (count // block)
    last = count % block - count % _BSHUF_MULT
    if last:
        sizes.append(last)
    pos = 0
    parts: list[bytes] = []
    for size in sizes:
        if pos + 4 > len(raw):
            raise CodecError("bslz4 data ends inside a block header")
        length = int.from_bytes(raw[pos : pos + 4], "big")
        pos += 4
        if length > len(raw) - pos:
            raise CodecError("bslz4 data ends inside a block")
        out = lz4.block.decompress(
            raw[pos : pos + length], uncompressed_size=size * itemsize
        )
        if len(out) != size * itemsize:
            raise CodecError("bslz4 block of the wrong size")
        parts.append(out)
        pos += length
    leftover = (count % _BSHUF_MULT) * itemsize
    if len(raw) - pos != leftover:
        raise CodecError(
            f"bslz4 data has {len(raw) - pos} bytes after its blocks, not {leftover}"
        )
    chunks: list[bytes] = []
    full = count // block
    if full:  # the full blocks in one vectorised pass
        joined = np.frombuffer(b"".join(parts[:full]), np.uint8)
        chunks.append(_unshuffle(joined, full, block, itemsize))
    if last:
        chunks.append(_unshuffle(np.frombuffer(parts[-1], np.uint8), 1, last, itemsize))
    chunks.append(raw[pos:])
    return np.frombuffer(b"".join(chunks), dtype)
