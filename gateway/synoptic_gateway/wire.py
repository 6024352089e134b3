"""A faster reader of the NATS protocol stream for the gateway's live messages.

nats-py parses each ``MSG`` with regular expressions, a dict of arguments, a
delete at the front of its buffer and two awaited calls (plus one per chained
``_process_msg`` hook): ~4 µs of Python per message, a third of the gateway's CPU
under a 50 000 updates/s burst. :class:`FastParser` takes over the connection's
parser (``nc._ps.parse``): the ``MSG`` lines of live subscriptions are split by
hand and their payloads handed to the handler synchronously (~1 µs); anything
else (``HMSG``, ``PING``, ``INFO``, ``-ERR``, messages of other subscriptions) is
given, one complete command at a time, to nats-py's own parser and dispatch.

A payload longer than one read (a detector image of MiBs arrives in nats-py's
32 KiB reads) is appended read by read and parsed once it is whole: parsing the
buffer again on every read copied it each time, quadratic in the payload's size
(a third of a core for a 2 MiB image at 10 Hz; now ~2 %).

It also yields to the event loop every :data:`YIELD_AFTER` seconds of parsing:
nats-py reads and parses for as long as the socket has data, so a burst larger
than the gateway can parse at once would otherwise hold back every group's flush
timer and every socket's sender until the whole burst is in, instead of sending
the first updates while the rest is still being read.

Uses nats-py internals (``_ps``, its ``buf``/``state``/``parse``,
``_process_msg``), pinned to nats-py 2.16 and covered by the gateway's system
tests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from nats.protocol.parser import AWAITING_CONTROL_LINE

#: Seconds of parsing after which the parser lets the event loop run (timers,
#: senders) before going on with the rest of what was read: a burst shorter than
#: this (e.g. one 100-channel scan) is read whole, so its group leaves in one frame.
YIELD_AFTER = 0.002
#: A parse call that starts this long after the previous one returned follows a
#: turn of the loop (nats-py's reader returns at once while its buffer has data).
RESUMED_AFTER = 0.0002
#: Messages between two looks at the clock (~3 µs each with the gateway's handler:
#: the yield comes at most ~50 µs late; a clock read per message cost ~5 %).
CLOCK_EVERY = 16

_MSG = b"MSG "
_HMSG = b"HMSG "
_CRLF = b"\r\n"


class FastParser:
    """Replaces ``parse`` of one nats-py connection's protocol parser.

    ``live`` maps a subscription id to ``(subject, handler)``; the handler gets
    ``(subject, payload)`` and must not await."""

    def __init__(
        self, nc: Any, live: dict[int, tuple[str, Callable[[bytes, bytes], None]]]
    ) -> None:
        self._nc = nc
        self._ps = nc._ps
        self._slow = nc._ps.parse  # nats-py's own parse (bound)
        self._live = live
        self._yielded = time.perf_counter()  # the loop last ran other work
        self._returned = 0.0  # the last parse call returned
        #: bytes the buffer must hold before a parse can complete the message it
        #: begins with (its whole payload): until then a read is only appended
        self._need = 0

    def install(self) -> None:
        """Take over the connection's parser (idempotent per connection)."""
        self._ps.parse = self.parse

    async def parse(self, data: bytes = b"") -> None:
        """Consume ``data`` (and what was left of earlier reads)."""
        ps = self._ps
        if ps.state != AWAITING_CONTROL_LINE:  # mid-message from nats-py's parser
            await self._slow(data)
            return
        buf = ps.buf  # holds only what a previous read left incomplete
        if buf:
            buf.extend(data)
            if len(buf) < self._need:  # a large payload still arriving: no copy
                return
            data = bytes(buf)
            buf.clear()
        live_get = self._live.get
        find = data.find
        startswith = data.startswith
        clock = time.perf_counter
        began = clock()
        if began - self._returned > RESUMED_AFTER:  # the loop ran meanwhile
            self._yielded = began
        yield_at = self._yielded + YIELD_AFTER
        countdown = CLOCK_EVERY
        self._need = 0
        pos = 0
        size = len(data)
        while pos < size:
            end = find(_CRLF, pos)
            if end < 0:
                break  # a partial line: wait for more
            if startswith(_MSG, pos):
                args = data[pos + 4 : end].split()
                start = end + 2
                stop = start + int(args[-1])
                if stop + 2 > size:  # a partial payload: wait for all of it
                    self._need = stop + 2 - pos
                    break
                pos = stop + 2
                sid = int(args[1])
                entry = live_get(sid)
                if entry is not None:
                    entry[1](args[0], data[start:stop])
                else:
                    reply = args[2] if len(args) == 4 else b""
                    payload = data[start:stop]
                    await self._nc._process_msg(sid, args[0], reply, payload, None)
            else:
                stop = end + 2
                if startswith(_HMSG, pos):
                    stop += int(data[pos:end].split()[-1]) + 2
                    if stop > size:
                        self._need = stop - pos
                        break
                if not await self._dispatch_slow(data[pos:stop], buf):
                    return  # the connection was reset meanwhile
                pos = stop
            countdown -= 1
            if not countdown:
                countdown = CLOCK_EVERY
                if clock() > yield_at:
                    await asyncio.sleep(0)  # (the rest stays in ``data`` meanwhile)
                    if ps.buf is not buf:
                        return  # reset meanwhile (reconnect)
                    self._yielded = clock()
                    yield_at = self._yielded + YIELD_AFTER
        if pos < size:
            buf.extend(data[pos:] if pos else data)
        self._returned = clock()

    async def _dispatch_slow(self, command: bytes, buf: bytearray) -> bool:
        """Let nats-py's parser handle one complete command; False when the
        parser was reset meanwhile (a reconnect)."""
        ps = self._ps
        own = bytearray()
        ps.buf = own
        try:
            await self._slow(command)
        finally:
            reset = ps.buf is not own
            if not reset:
                ps.buf = buf
        return not reset
