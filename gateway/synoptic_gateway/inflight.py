"""How much data may be on its way to a socket's peer?

A session's mailbox bounds what waits *in the gateway*; a written frame then waits
in the asyncio transport's buffer and the kernel's send buffer until the peer takes
it. For a reader on a slow link that wait is those buffers divided by its rate:
512 KiB at 20 KiB/s is 25 s of old data the mailbox never sees.
:class:`InflightBudget` bounds it by time instead of bytes: data in flight may be at
most ``horizon`` seconds of what the peer has been taking (its measured drain rate),
and at least ``floor`` bytes. Above the budget the session conflates instead of
writing more updates (Linux: ``SIOCOUTQ`` for the kernel queue, ``TCP_INFO``'s
``tcpi_bytes_acked`` for the drain rate; inert for other transports).

Cheap on the hot path: the kernel is asked once per ``RATE_INTERVAL`` while a
socket is written to (or sooner when the bytes written since could cross the
budget), not per frame. A burst over the budget that the peer takes within
``GRACE`` does not count.
"""

from __future__ import annotations

import contextlib
import fcntl
import socket
import struct
import termios
from collections import deque
from typing import Any

#: Seconds between two drain-rate samples of one socket.
RATE_INTERVAL = 0.25
#: The drain rate is averaged over at least this many seconds (a reader takes data
#: in bursts: one big frame, then nothing for a while).
RATE_WINDOW = 1.0
#: Seconds a socket must stay over its budget before it counts as over: a healthy
#: reader takes a burst (a big frame) within that, a slow link does not.
GRACE = 0.1
#: Offset of ``tcpi_bytes_acked`` (u64) in Linux's ``struct tcp_info`` (since 4.1).
_BYTES_ACKED_OFFSET = 120
_TCP_INFO_LEN = _BYTES_ACKED_OFFSET + 8
_OUTQ_ARG = b"\0\0\0\0"


class InflightBudget:
    """Whether one TCP socket has more data in flight than ``horizon`` seconds of
    its peer's drain rate (at least ``floor``, at most ``ceiling`` bytes)."""

    __slots__ = (
        "_acked_at",
        "_ceiling",
        "_fd",
        "_floor",
        "_horizon",
        "_over_since",
        "_queued",
        "_samples",
        "_sock",
        "_transport",
        "_unseen",
        "budget",
    )

    def __init__(
        self, transport: Any, *, horizon: float, floor: int, ceiling: int
    ) -> None:
        self._transport = transport
        self._horizon = horizon
        self._floor = floor
        self._ceiling = max(floor, ceiling)
        #: bytes that may be in flight now (the drain rate × horizon, clamped)
        self.budget = self._ceiling
        self._over_since: float | None = None
        self._sock: Any = None
        self._fd = -1
        self._queued = 0  # in flight when last asked
        self._unseen = 0  # written since
        self._samples: deque[tuple[float, int]] = deque()  # (time, bytes acked)
        self._acked_at = float("-inf")
        get_extra_info = getattr(transport, "get_extra_info", None)
        sock = get_extra_info("socket") if get_extra_info is not None else None
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                _bytes_acked(sock)
                self._sock = sock
                self._fd = sock.fileno()

    @property
    def active(self) -> bool:
        """Whether the kernel state of this socket can be seen."""
        return self._sock is not None

    def wrote(self, nbytes: int) -> None:
        """Count ``nbytes`` just written (no system call)."""
        self._unseen += nbytes

    def over(self, now: float) -> bool:
        """Whether more than :attr:`budget` bytes have been in flight for at least
        ``GRACE``. Asks the kernel once per ``RATE_INTERVAL``, or sooner when the
        bytes written since it was last asked could have crossed the budget."""
        if self._sock is None:
            return False
        if (
            self._over_since is None
            and self._queued + self._unseen <= self.budget
            and now - self._acked_at < RATE_INTERVAL
        ):
            return False
        try:
            self._queued = _outq(self._fd) + self._transport.get_write_buffer_size()
            self._unseen = 0
            if now - self._acked_at >= RATE_INTERVAL:
                self._sample_rate(now)
        except OSError:  # the socket closed under us
            self._sock = None
            return False
        if self._queued <= self.budget:
            self._over_since = None
            return False
        if self._over_since is None:
            self._over_since = now
        return now - self._over_since >= GRACE

    def _sample_rate(self, now: float) -> None:
        acked = _bytes_acked(self._sock)
        samples = self._samples
        samples.append((now, acked))
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW:
            samples.popleft()  # keep the newest sample at least RATE_WINDOW old
        since, acked_then = samples[0]
        if now > since:
            rate = (acked - acked_then) / (now - since)
            self.budget = int(
                min(self._ceiling, max(self._floor, rate * self._horizon))
            )
        self._acked_at = now


def _outq(fd: int) -> int:
    """Bytes in the kernel send queue of ``fd`` not yet acknowledged by the peer."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.TIOCOUTQ, _OUTQ_ARG))[0]


def _bytes_acked(sock: Any) -> int:
    """``tcpi_bytes_acked`` of ``sock``: bytes its peer has received."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LEN)
    if len(raw) < _TCP_INFO_LEN:
        raise OSError("tcp_info without tcpi_bytes_acked (Linux < 4.1)")
    return struct.unpack_from("Q", raw, _BYTES_ACKED_OFFSET)[0]
