"""Gateway ⇄ browser WebSocket frames (protocol version 1): op names, error and
close codes, builders and validators. Pure functions, no I/O.

``docs/protocol.md`` describes every frame in words and
``json/frames.schema.json`` as JSON Schema; this package is the code of record.
Frames are maps with an ``op`` key, msgpack by default (typed arrays as ext type 1)
or JSON text (typed arrays as ``{"dtype", "shape", "b64"}``).

One concern per module, all of it used through this namespace
(``frames.sub(...)``, ``frames.Op``): :mod:`.codes` (version, ops, close codes,
limits), :mod:`.errors` (``err``, its codes, :class:`FrameError`),
:mod:`.encoding` (msgpack and JSON), :mod:`.validate` (client frames checked),
:mod:`.client_frames` and :mod:`.server_frames` (builders), :mod:`.shift` (the
shift form of array updates), :mod:`.order` (order keys of bus payloads read
without decoding them) and :mod:`.raw` (batches assembled from payload bytes).
"""

from synoptic_schemas.frames.client_frames import (
    auth,
    cmd,
    hist,
    ping,
    put,
    sub,
    unsub,
    watch,
)
from synoptic_schemas.frames.codes import (
    CLIENT_OPS,
    MAX_HIST_PX,
    MAX_ID_CHARS,
    MAX_SAFE_INT,
    MAX_TOKEN_CHARS,
    MAX_WATCH_SCREENS,
    POINT_SIZES,
    PROTOCOL_VERSION,
    RECONNECT_CODES,
    CloseCode,
    Op,
)
from synoptic_schemas.frames.encoding import from_json, pack, to_json, unpack
from synoptic_schemas.frames.errors import ErrorCode, FrameError, err
from synoptic_schemas.frames.order import meta_order, value_order
from synoptic_schemas.frames.raw import pack_batch, pack_snap
from synoptic_schemas.frames.rewind import (
    END_ERROR,
    END_HALT,
    END_NOW,
    MAX_PLAY_SPEED,
    at,
    at_reply,
    halt,
    halt_ack,
    pb,
    play,
    step,
    step_reply,
)
from synoptic_schemas.frames.server_frames import (
    auth_state,
    bus,
    cmd_reply,
    hello,
    hist_reply,
    meta,
    pong,
    put_reply,
    screen,
    snap,
    src,
    stats,
    unsub_ack,
    upd,
    watch_ack,
)
from synoptic_schemas.frames.shift import (
    SHIFT,
    SHIFT_BASE,
    SHIFT_TAIL,
    is_shifted,
    unshift,
)
from synoptic_schemas.frames.validate import round_points, validate_client_frame

__all__ = [
    "CLIENT_OPS",
    "END_ERROR",
    "END_HALT",
    "END_NOW",
    "MAX_HIST_PX",
    "MAX_ID_CHARS",
    "MAX_PLAY_SPEED",
    "MAX_SAFE_INT",
    "MAX_TOKEN_CHARS",
    "MAX_WATCH_SCREENS",
    "POINT_SIZES",
    "PROTOCOL_VERSION",
    "RECONNECT_CODES",
    "SHIFT",
    "SHIFT_BASE",
    "SHIFT_TAIL",
    "CloseCode",
    "ErrorCode",
    "FrameError",
    "Op",
    "at",
    "at_reply",
    "auth",
    "auth_state",
    "bus",
    "cmd",
    "cmd_reply",
    "err",
    "from_json",
    "halt",
    "halt_ack",
    "hello",
    "hist",
    "hist_reply",
    "is_shifted",
    "meta",
    "meta_order",
    "pack",
    "pack_batch",
    "pack_snap",
    "pb",
    "ping",
    "play",
    "pong",
    "put",
    "put_reply",
    "round_points",
    "screen",
    "snap",
    "src",
    "stats",
    "step",
    "step_reply",
    "sub",
    "to_json",
    "unpack",
    "unshift",
    "unsub",
    "unsub_ack",
    "upd",
    "validate_client_frame",
    "value_order",
    "watch",
    "watch_ack",
]
