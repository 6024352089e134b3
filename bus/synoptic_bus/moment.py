"""Reading a stream as it stood at a moment: batched Direct Gets by stream time.

JetStream's Direct Get answers these questions a rewound screen or a trend
asks of a stream without a consumer, each in one request per 1024 subjects:

- :func:`last_at`: the last message of each subject stored at or before a time
  (``multi_last`` with ``up_to_time``): the raw history's value of every channel
  of a screen then, or the metadata in force then;
- :func:`run_from`: the messages of one subject stored from a time on
  (``next_by_subj`` with ``start_time`` and ``batch``);
- :func:`read_run`: the same until a time, in as many batches as it takes (a
  trend's few history blocks of a channel in one round trip);
- :func:`first_kept`: the oldest message a stream still holds of a subject (how
  far back its history of that channel reaches).

Each message comes with its stream sequence and the time it was stored. Messages
go straight from nats-py's parser to a handler (no message objects), as for the
last-value store's batched reads.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from nats.aio.client import Client as NatsClient
from nats.protocol.command import sub_cmd, unsub_cmd

from synoptic_bus.history import parse_rfc3339, rfc3339
from synoptic_bus.store import (
    MAX_SUBJECTS_PER_REQUEST,
    StoreError,
    _raw_subscriptions,
    _status,
)


def _answer_header(headers: bytes, name: bytes) -> bytes | None:
    """A header Direct Get adds to its answer: the *last* of that name (a message
    the last-value stream republished keeps its own ``Nats-Subject``,
    ``Nats-Sequence`` … before them)."""
    start = headers.rfind(b"\r\n" + name + b":")
    if start < 0:
        return None
    start += len(name) + 3
    end = headers.find(b"\r\n", start)
    return headers[start : end if end >= 0 else len(headers)].strip()


class Stored:
    """One stored message: its payload, stream sequence and store time (ns; read
    from the answer's RFC 3339 stamp when first asked: a screen's answer holds
    thousands of messages whose store time is rarely needed)."""

    __slots__ = ("_ns", "_stamp", "data", "seq", "subject")

    def __init__(self, subject: str, data: bytes, seq: int, stamp: str | int) -> None:
        self.subject = subject
        self.data = data
        self.seq = seq
        self._stamp = stamp
        self._ns: int | None = stamp if isinstance(stamp, int) else None

    @property
    def stored_ns(self) -> int:
        if self._ns is None:
            self._ns = parse_rfc3339(str(self._stamp))
        return self._ns

    def __repr__(self) -> str:
        return f"Stored({self.subject!r}, seq={self.seq}, stored_ns={self.stored_ns})"


async def _direct(
    nc: NatsClient, stream: str, request: dict[str, object], timeout: float
) -> list[Stored]:
    """One batched Direct Get: the messages it answers with, in order, until the
    end-of-batch status (none for 404). Raises :class:`StoreError`."""
    out: list[Stored] = []
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[bytes, bytes]] = loop.create_future()

    def on_message(_s: bytes, _r: bytes, data: bytes, headers: bytes | None) -> None:
        if not headers:
            return
        status = None if headers.startswith(b"NATS/1.0\r\n") else _status(headers)
        if status is None:
            subject = _answer_header(headers, b"Nats-Subject")
            seq = _answer_header(headers, b"Nats-Sequence")
            stamp = _answer_header(headers, b"Nats-Time-Stamp")
            if subject is not None and seq is not None and stamp is not None:
                out.append(Stored(subject.decode(), data, int(seq), stamp.decode()))
        elif not done.done():
            done.set_result((status, headers))

    table = _raw_subscriptions(nc)
    inbox = nc.new_inbox()
    nc._sid += 1
    sid = nc._sid
    table[sid] = on_message
    try:
        async with asyncio.timeout(timeout):
            await nc._send_command(sub_cmd(inbox, "", sid))
            await nc.publish(
                f"$JS.API.DIRECT.GET.{stream}", json.dumps(request).encode(),
                reply=inbox,
            )  # fmt: skip
            status, headers = await done
    finally:
        del table[sid]
        if nc.is_connected:
            await nc._send_command(unsub_cmd(sid, 0))
    if status in (b"204", b"404"):
        return out
    if status == b"503":
        raise StoreError(f"stream {stream} not found or JetStream unavailable")
    line = headers.split(b"\r\n", 1)[0].decode(errors="replace")
    raise StoreError(f"direct get on {stream} failed: {line}")


async def last_at(
    nc: NatsClient,
    stream: str,
    subjects: Sequence[str],
    at_ns: int,
    *,
    timeout: float = 5.0,
) -> dict[str, Stored]:
    """The last message of each of ``subjects`` stored at or before ``at_ns`` (by
    subject; none for a subject with no such message still kept). Requests of at
    most 1024 subjects run concurrently; raises :class:`StoreError`."""
    wanted = list(dict.fromkeys(subjects))
    if not wanted:
        return {}
    chunks = [
        wanted[i : i + MAX_SUBJECTS_PER_REQUEST]
        for i in range(0, len(wanted), MAX_SUBJECTS_PER_REQUEST)
    ]
    # JetStream's ``up_to_time`` is exclusive: a message stored at ``at_ns`` is one
    # nanosecond before the next
    stamp = rfc3339(at_ns + 1)
    answers = await asyncio.gather(
        *(
            _direct(nc, stream, {"multi_last": c, "up_to_time": stamp}, timeout)
            for c in chunks
        )
    )
    return {m.subject: m for found in answers for m in found}


async def run_from(
    nc: NatsClient,
    stream: str,
    subject: str,
    start_ns: int,
    batch: int,
    *,
    timeout: float = 5.0,
) -> list[Stored]:
    """At most ``batch`` messages of ``subject`` stored from ``start_ns`` on,
    oldest first. Raises :class:`StoreError`."""
    request = {"next_by_subj": subject, "start_time": rfc3339(start_ns),
               "batch": max(batch, 1)}  # fmt: skip
    return await _direct(nc, stream, request, timeout)


async def read_run(
    nc: NatsClient,
    stream: str,
    subject: str,
    start_ns: int,
    end_ns: int,
    *,
    max_msgs: int,
    batch: int = 256,
    timeout: float = 5.0,
) -> tuple[list[Stored], bool]:
    """The messages of ``subject`` stored from ``start_ns`` until ``end_ns`` (ns),
    oldest first, in batched Direct Gets (one round trip for a short run, where a
    consumer takes three); the last batch may hold some stored after ``end_ns``.
    Returns them and whether ``max_msgs`` cut the run short. Raises
    :class:`StoreError` and :class:`TimeoutError`."""
    out: list[Stored] = []
    want = max(min(batch, max_msgs), 1)
    request: dict[str, object] = {"next_by_subj": subject,
                                  "start_time": rfc3339(start_ns), "batch": want}  # fmt: skip
    async with asyncio.timeout(timeout):
        while True:
            found = await _direct(nc, stream, request, timeout)
            out.extend(found)
            if len(out) >= max_msgs:
                del out[max_msgs:]
                return out, True
            if len(found) < want or found[-1].stored_ns > end_ns:
                return out, False
            want = max(min(batch, max_msgs - len(out)), 1)
            request = {"next_by_subj": subject, "seq": found[-1].seq + 1, "batch": want}


async def first_kept(
    nc: NatsClient, stream: str, subject: str, *, timeout: float = 5.0
) -> Stored | None:
    """The oldest message of ``subject`` that ``stream`` still holds, or None.
    Raises :class:`StoreError`."""
    found = await _direct(
        nc, stream, {"next_by_subj": subject, "seq": 1, "batch": 1}, timeout
    )
    return found[0] if found else None
