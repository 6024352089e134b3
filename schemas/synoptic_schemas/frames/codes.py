"""The protocol's version, op names, close codes and request limits."""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
MAX_ID_CHARS: Final = 64
#: Integer ids, like every integer a browser reads, stay within JavaScript's safe range.
MAX_SAFE_INT: Final = 2**53 - 1
#: The widest plot a history request may ask for, in pixels.
MAX_HIST_PX: Final = 10_000
#: The point counts a subscription's ``pts`` are rounded up to: viewers of plots of
#: similar widths share one reduced array (and one group); more than the largest
#: is refused (leave the channel out of ``pts`` for its full array).
POINT_SIZES: Final = (256, 512, 1024, 2048, 4096, 8192, 16384)


class Op:
    """Frame op names."""

    # client → server
    SUB = "sub"
    UNSUB = "unsub"
    PUT = "put"
    CMD = "cmd"  # both ways: a Tango command request and its answer
    PING = "ping"
    HIST = "hist"  # both ways: the request and its answer
    WATCH = "watch"  # both ways: the request and its acknowledgement
    ALARMS = "alarms"  # both ways: follow the alarms; the list or counts
    SCREEN = "screen"  # server: a watched screen has a new revision
    AUTH = "auth"  # both ways: a renewed token, and what the socket may now do
    AT = "at"  # both ways: values at a moment, and the answer (also to ``play``)
    PLAY = "play"  # client: play back from a moment (answered by ``at``, ``pb``)
    HALT = "halt"  # both ways: stop a playback, and its acknowledgement
    STEP = "step"  # both ways: a channel's previous/next change, and its time
    # server → client
    HELLO = "hello"
    SNAP = "snap"
    UPD = "upd"
    META = "meta"
    STATS = "stats"
    ERR = "err"
    PONG = "pong"
    BUS = "bus"
    SRC = "src"
    PB = "pb"  # one frame of a playback


CLIENT_OPS: Final = frozenset(
    {Op.SUB, Op.UNSUB, Op.PUT, Op.CMD, Op.PING, Op.HIST, Op.WATCH, Op.AUTH, Op.AT,
     Op.PLAY, Op.HALT, Op.STEP, Op.ALARMS}
)  # fmt: skip
#: The longest token an ``auth`` frame may carry (characters).
MAX_TOKEN_CHARS: Final = 16 * 1024
#: The most screen names one ``watch`` may name.
MAX_WATCH_SCREENS: Final = 64


class CloseCode:
    """WebSocket close codes the gateway uses."""

    NORMAL = 1000
    GOING_AWAY = 4000  # gateway shutting down: reconnect at once, elsewhere
    SLOW_CONSUMER = 4001  # stalled past the limit: reconnect with backoff
    UNAUTHORIZED = 4401  # missing/invalid/expired token: do not retry blindly
    INTERNAL = 4500  # unexpected error: reconnect with backoff


#: Close codes after which a client should reconnect (all but auth failures).
RECONNECT_CODES: Final = frozenset(
    {1001, 1006, 1011, 1012, 1013, CloseCode.GOING_AWAY, CloseCode.SLOW_CONSUMER,
     CloseCode.INTERNAL}
)  # fmt: skip
