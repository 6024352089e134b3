"""Frames as bytes: msgpack (typed arrays as ext type 1) or JSON text (typed
arrays as ``{"dtype", "shape", "b64"}``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgpack

from synoptic_schemas.codec import _ext_hook, encode, to_json_view
from synoptic_schemas.frames.errors import ErrorCode, FrameError


def pack(frame: Mapping[str, Any]) -> bytes:
    """Encode a frame as msgpack (numpy arrays as ext type 1)."""
    return encode(frame)


def unpack(data: bytes) -> Any:
    """Decode a msgpack frame (ext type 1 → read-only numpy arrays).

    Raises :class:`FrameError` (``bad_frame``) on malformed input.
    """
    try:
        return msgpack.unpackb(
            data, ext_hook=_ext_hook, raw=False, strict_map_key=False
        )
    except Exception as exc:  # msgpack raises a zoo of types for bad input
        raise FrameError(ErrorCode.BAD_FRAME, f"malformed msgpack: {exc}") from None


def to_json(frame: Mapping[str, Any]) -> str:
    """Encode a frame as JSON text (typed arrays as ``{"dtype","shape","b64"}``)."""
    return json.dumps(to_json_view(dict(frame)), separators=(",", ":"))


def from_json(text: str | bytes) -> Any:
    """Decode a JSON frame; :class:`FrameError` (``bad_frame``) if malformed."""
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise FrameError(ErrorCode.BAD_FRAME, f"malformed JSON: {exc}") from None
