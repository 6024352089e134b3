"""``upd``, ``meta`` and ``snap`` msgpack frames assembled from bus payloads as
they are (already msgpack-encoded, never decoded): the same bytes
:func:`~synoptic_schemas.frames.pack` would give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgpack

from synoptic_schemas.frames.codes import Op

_HEAD_UPD = msgpack.packb("op") + msgpack.packb(Op.UPD)
_HEAD_META = msgpack.packb("op") + msgpack.packb(Op.META)
_K_SID, _K_I = msgpack.packb("sid"), msgpack.packb("i")
_K_VAL, _K_META = msgpack.packb("val"), msgpack.packb("meta")


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    if n < 0x10000:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def pack_batch(
    kind: str, sid: int, indexes: Sequence[int], payloads: Sequence[bytes]
) -> bytes:
    """An ``upd`` (kind ``"upd"``) or ``meta`` msgpack frame built from bus payloads
    already msgpack-encoded, without decoding them: the same bytes
    :func:`pack` would give for the decoded payloads."""
    head, key = (_HEAD_UPD, _K_VAL) if kind == Op.UPD else (_HEAD_META, _K_META)
    return b"".join(
        (
            b"\x84",
            head,
            _K_SID,
            msgpack.packb(sid),
            _K_I,
            msgpack.packb(list(indexes)),
            key,
            _array_header(len(payloads)),
            *payloads,
        )
    )


def pack_snap(
    req_id: Any,
    sid: int,
    channels: Sequence[str],
    values: Sequence[bytes | None],
    metas: Sequence[bytes | None],
    stale: Sequence[int] = (),
    more: Sequence[int] = (),
) -> bytes:
    """A ``snap`` msgpack frame built from msgpack-encoded bus payloads (``None``
    for a channel with nothing stored, or whose value follows: ``more``): the same
    bytes :func:`pack` would give."""
    nil = b"\xc0"
    tail = (msgpack.packb("stale") + msgpack.packb(list(stale))) if stale else b""
    if more:
        tail += msgpack.packb("more") + msgpack.packb(list(more))
    return b"".join(
        (
            bytes((0x80 | (6 + bool(stale) + bool(more)),)),
            msgpack.packb("op"),
            msgpack.packb(Op.SNAP),
            msgpack.packb("id"),
            msgpack.packb(req_id),
            _K_SID,
            msgpack.packb(sid),
            msgpack.packb("ch"),
            msgpack.packb(list(channels)),
            _K_VAL,
            _array_header(len(values)),
            *(v if v is not None else nil for v in values),
            _K_META,
            _array_header(len(metas)),
            *(m if m is not None else nil for m in metas),
            tail,
        )
    )
