"""Every message a stream stores from now on, in order, handed raw to a callback:
an ephemeral pull consumer read through the connection's protocol parser (no
message object per message), for services that must see every value however busy
their machine is (the rollup).

A core subscription that falls behind is cut off by nats-server as a slow
consumer, and what was published meanwhile is gone. A consumer keeps the reader's
place instead: a reader that falls behind catches up from the stream, a lost
consumer (a restart of NATS, an inactivity timeout) is made again from the next
stream sequence, and only what the stream itself dropped before it was read (its
limits) is lost, which the reader is told (``on_gap``), so it never claims to
have seen it. While the reader's own buffer is full (``paused``), no more is
asked for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.protocol.command import sub_cmd, unsub_cmd

from synoptic_bus.store import _raw_subscriptions

log = logging.getLogger(__name__)

#: Messages and bytes asked for per pull request, and how long one waits.
BATCH = 10_000
BATCH_BYTES = 8 << 20
EXPIRES_S = 0.5
#: Messages waiting from which the reader is behind the stream.
BEHIND = 100
#: JetStream's status lines that end a pull request (the next one is sent).
_END = (b"404", b"408", b"409")


class StreamTap:
    """Reads ``stream`` (messages of ``filters``) from the moment :meth:`run`
    starts: ``on_message(subject, payload)`` for each, ``on_gap(stream_ns)`` when
    the stream dropped messages before they were read (``stream_ns``: when the
    last message read was stored). Gaps are seen where ``filters`` take the whole
    stream (``whole``): its sequence numbers are then consecutive."""

    def __init__(
        self,
        nc: NatsClient,
        stream: str,
        filters: list[str],
        on_message: Callable[[bytes, bytes], None],
        on_gap: Callable[[int], None],
        paused: Callable[[], bool] = lambda: False,
        *,
        whole: bool = True,
    ) -> None:
        self._nc = nc
        self._stream = stream
        self._filters = filters
        self._on_message = on_message
        self._on_gap = on_gap
        self._paused = paused
        self._whole = whole
        self._consumer = ""
        #: the next stream sequence wanted (0: from now on)
        self.next_seq = 0
        self.last_ns = 0
        #: more than :data:`BEHIND` messages are waiting for this reader
        self.behind = False
        self.messages = 0
        self.gaps = 0
        self._sid = 0
        self._inbox = ""
        self._done: asyncio.Future[bytes] | None = None
        self._got = 0
        self._want = 0

    # -- the raw subscription --------------------------------------------------------

    def _on_raw(
        self, subject: bytes, reply: bytes, data: bytes, headers: bytes | None
    ) -> None:
        if headers and not headers.startswith(b"NATS/1.0\r\n"):  # a status line
            self._finish(headers.split(b"\r\n", 1)[0])
            return
        # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ns>.<pending>
        parts = reply.rsplit(b".", 5)
        seq, ns = int(parts[2]), int(parts[4])
        if self._whole and self.next_seq and seq > self.next_seq:
            self.gaps += 1
            self._on_gap(self.last_ns)
        self.next_seq, self.last_ns = seq + 1, ns
        self.behind = int(parts[5]) > BEHIND
        self.messages += 1
        self._on_message(subject, data)
        self._got += 1
        if self._got >= self._want:
            self._finish(b"")

    def _finish(self, status: bytes) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(status)

    async def _subscribe(self) -> None:
        table = _raw_subscriptions(self._nc)
        if not self._sid:
            self._inbox = self._nc.new_inbox()
            self._nc._sid += 1
            self._sid = self._nc._sid
        table[self._sid] = self._on_raw
        await self._nc._send_command(sub_cmd(self._inbox, "", self._sid))

    async def resubscribe(self) -> None:
        """After a reconnect (nats-py does not know this subscription)."""
        if self._sid:
            await self._nc._send_command(sub_cmd(self._inbox, "", self._sid))

    # -- the consumer ----------------------------------------------------------------

    async def _api(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = await self._nc.request(subject, json.dumps(body).encode(), timeout=10)
        answer: dict[str, Any] = json.loads(reply.data)
        return answer

    async def _make_consumer(self) -> None:
        name = f"tap_{secrets.token_hex(6)}"
        config: dict[str, Any] = {
            "name": name,
            "ack_policy": "none",
            "mem_storage": True,
            "num_replicas": 1,
            "inactive_threshold": 60_000_000_000,
            "max_batch": BATCH,
            "max_bytes": BATCH_BYTES,
        }
        if self.next_seq:
            config["deliver_policy"] = "by_start_sequence"
            config["opt_start_seq"] = self.next_seq
        else:
            config["deliver_policy"] = "new"
        if len(self._filters) == 1:
            config["filter_subject"] = self._filters[0]
        else:
            config["filter_subjects"] = self._filters
        answer = await self._api(
            f"$JS.API.CONSUMER.CREATE.{self._stream}.{name}",
            {"stream_name": self._stream, "config": config, "action": "create"},
        )
        if "error" in answer:
            raise RuntimeError(answer["error"].get("description", "consumer refused"))
        self._consumer = name
        if not self.next_seq:  # from now on: the stream's next sequence
            self.next_seq = int(answer.get("delivered", {}).get("stream_seq", 0)) + 1

    async def _pull(self) -> bytes:
        """One pull request; the status that ended it (``b""``: batch full)."""
        loop = asyncio.get_running_loop()
        self._done, self._got, self._want = loop.create_future(), 0, BATCH
        request = {"batch": BATCH, "max_bytes": BATCH_BYTES,
                   "expires": int(EXPIRES_S * 1e9)}  # fmt: skip
        await self._nc.publish(
            f"$JS.API.CONSUMER.MSG.NEXT.{self._stream}.{self._consumer}",
            json.dumps(request).encode(),
            reply=self._inbox,
        )
        try:
            return await asyncio.wait_for(self._done, EXPIRES_S + 5)
        except TimeoutError:  # the request or its answer was lost (a reconnect)
            return b"lost"

    async def start(self) -> None:
        """Subscribe and make the consumer: every message stored from now on will
        be read (raises where the stream cannot be read)."""
        await self._subscribe()
        await self._make_consumer()

    async def run(self) -> None:
        """Read until cancelled (after :meth:`start`); makes the consumer again
        whenever it is gone."""
        try:
            while True:
                if not self._nc.is_connected:
                    await asyncio.sleep(0.2)
                    continue
                if self._paused():
                    await asyncio.sleep(0.05)
                    continue
                if not self._consumer:
                    try:
                        await self._make_consumer()
                    except Exception as exc:  # no stream yet, NATS away: try again
                        log.warning("reading %s: %s; trying again", self._stream, exc)
                        await asyncio.sleep(1.0)
                        continue
                status = await self._pull()
                code = status[9:12]
                if (
                    status == b"lost"
                    or (code == b"409" and b"Deleted" in status)
                    or (code == b"404" and b"No Messages" not in status)
                ):
                    self._consumer = ""  # gone: made again from next_seq
                elif status and code not in _END and b"MaxBytes" not in status:
                    log.warning("reading %s: %s", self._stream, status.decode())
                    self._consumer = ""
        finally:
            await self.close()

    async def close(self) -> None:
        _raw_subscriptions(self._nc).pop(self._sid, None)
        if self._nc.is_connected:
            if self._sid:
                await self._nc._send_command(unsub_cmd(self._sid, 0))
            if self._consumer:
                try:
                    await self._nc.publish(
                        f"$JS.API.CONSUMER.DELETE.{self._stream}.{self._consumer}", b""
                    )
                except Exception as exc:  # it lapses after inactive_threshold
                    log.debug("deleting consumer %s: %s", self._consumer, exc)
        self._consumer = ""
