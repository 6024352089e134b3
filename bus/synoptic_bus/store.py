"""The JetStream last-value store: one message kept per ``val`` and ``meta`` subject.

Adapters publish with plain core-NATS publishes; the stream captures them, so live
consumers pay nothing for the store. Readers fetch many last values at once with
batched Direct Get (``multi_last``), which nats-py has no method for: the raw
``$JS.API.DIRECT.GET.<stream>`` request is answered by a burst of messages that ends
with a status message (204 EOB, 404 none, 408 timeout, 413 too many subjects).

Storage is memory by default: adapters republish every last value when they
(re)connect, so nothing is lost with a restarted server, and memory reads are the
fastest (see docs/decisions/0003-last-value-store.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from nats.aio.client import Client as NatsClient
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import DiscardPolicy, RePublish, StorageType, StreamConfig
from nats.js.errors import NotFoundError, ServiceUnavailableError
from nats.protocol.command import sub_cmd, unsub_cmd

from synoptic_bus.prereq import (
    MissingStreamError,
    jetstream_off,
    jetstream_off_error,
    missing_stream_error,
)
from synoptic_schemas.subjects import DEFAULT_PREFIX

log = logging.getLogger(__name__)

#: The server answers at most this many subjects per multi_last request.
MAX_SUBJECTS_PER_REQUEST = 1024


class StoreError(RuntimeError):
    """The last-value store could not be read or created."""


@dataclass(frozen=True)
class StoreConfig:
    """How the last-value stream is laid out in one deployment."""

    prefix: str = DEFAULT_PREFIX
    storage: Literal["memory", "file"] = "memory"
    replicas: int = 1
    max_bytes: int = -1  # -1: no limit; each subject keeps one message anyway

    @property
    def stream(self) -> str:
        return stream_name(self.prefix)

    @property
    def subjects(self) -> list[str]:
        return [
            f"{self.prefix}.val.>",
            f"{self.prefix}.meta.>",
            f"{self.prefix}.sync.>",
        ]

    @property
    def barrier_subject(self) -> str:
        """Where readers publish barriers (see :func:`store_barrier`)."""
        return f"{self.prefix}.sync.barrier"

    def stream_config(self) -> StreamConfig:
        return StreamConfig(
            name=self.stream,
            description="Synoptic last values and metadata, one message per subject",
            subjects=self.subjects,
            storage=StorageType.MEMORY
            if self.storage == "memory"
            else StorageType.FILE,
            num_replicas=self.replicas,
            max_msgs_per_subject=1,
            max_bytes=self.max_bytes,
            discard=DiscardPolicy.OLD,
            allow_direct=True,
        )


def stream_name(prefix: str) -> str:
    """The stream's name for a subject prefix (``cs`` → ``CS_LAST``)."""
    return prefix.upper().replace(".", "_").replace("-", "_") + "_LAST"


async def wait_for_store(
    nc: NatsClient,
    config: StoreConfig,
    *,
    retry: float = 2.0,
    say_every: float = 30.0,
) -> None:
    """:func:`ensure_store`, waiting while the stream is missing and cannot be
    created here (``synoptic bus init`` may be on its way): the reason is logged
    at once and every ``say_every`` seconds. JetStream off raises
    :class:`~synoptic_bus.prereq.JetStreamOffError` at once."""
    said = float("-inf")
    while True:
        try:
            await ensure_store(nc, config)
        except MissingStreamError as exc:
            now = asyncio.get_running_loop().time()
            if now - said >= say_every:
                said = now
                log.error("%s; waiting for it", exc)
            await asyncio.sleep(retry)
            continue
        if said > float("-inf"):
            log.info("last-value stream %s found", config.stream)
        return


def history_stream_name(prefix: str) -> str:
    """The history stream's name for a subject prefix (``cs`` → ``CS_HIST``;
    :mod:`synoptic_bus.history`)."""
    return stream_name(prefix).removesuffix("_LAST") + "_HIST"


def history_feed(prefix: str) -> RePublish:
    """What the last-value stream republishes for the history streams to keep:
    everything it stores, under ``<prefix>.hist`` (values to ``hist.val`` for
    ``CS_HIST``, metadata to ``hist.meta`` for ``CS_META``; the store barrier's
    copy goes to no stream)."""
    return RePublish(src=f"{prefix}.>", dest=f"{prefix}.hist.>")


async def ensure_stream(
    nc: NatsClient,
    wanted: StreamConfig,
    what: str,
    *,
    update: bool = True,
    storage_asked: bool = True,
) -> StreamConfig | None:
    """Create stream ``wanted`` (``what`` it holds, for the log) or, with
    ``update``, apply its limits to the existing one, keeping that one's storage
    (storage cannot change in place; with ``storage_asked`` a different one is
    logged as a warning). Returns the existing stream's config as it was, or None
    when it was created."""
    js = nc.jetstream()
    try:
        info = await js.stream_info(wanted.name or "")
    except NotFoundError:
        await js.add_stream(wanted)
        log.info("created %s stream %s", what, wanted.name)
        return None
    if update:
        if storage_asked and info.config.storage != wanted.storage:
            log.warning(
                "stream %s uses %s storage, asked for %s: storage cannot change in place",
                wanted.name, info.config.storage, wanted.storage,
            )  # fmt: skip
        wanted.storage = info.config.storage
        await js.update_stream(wanted)
    return info.config


async def ensure_store(
    nc: NatsClient, config: StoreConfig, *, layout: bool = False
) -> None:
    """Create the stream if it is missing (idempotent), and repair what the
    contract needs of an existing one (subjects, one message per subject, direct
    gets). Storage and replicas of an existing stream are the operator's choice and
    are kept, unless ``layout`` asks to apply ``config``'s replicas too
    (``synoptic bus init``); storage cannot change in place."""
    js = nc.jetstream()
    wanted = config.stream_config()
    try:
        info = await js.stream_info(config.stream)
    except (ServiceUnavailableError, NoRespondersError) as exc:
        if jetstream_off(exc):
            raise jetstream_off_error(nc) from None
        raise
    except NotFoundError:
        try:  # re-created (a memory stream after a restart): the history feed too
            await js.stream_info(history_stream_name(config.prefix))
        except (NotFoundError, NatsTimeoutError):  # none, or not ours to see
            pass
        else:
            wanted.republish = history_feed(config.prefix)
        try:
            await js.add_stream(wanted)
        except Exception as exc:  # a concurrent creator wins: re-check below
            log.debug("add_stream raced: %s", exc)
            try:
                await js.stream_info(config.stream)
            except NotFoundError:  # not created: no permission, no resources
                raise MissingStreamError(
                    f"{missing_stream_error(config.stream, 'last-value')} (creating "
                    f"it here failed: {str(exc) or type(exc).__name__})"
                ) from None
        else:
            log.info("created last-value stream %s", config.stream)
        return
    current = info.config
    differs = (
        sorted(current.subjects or []) != sorted(wanted.subjects or [])
        or current.max_msgs_per_subject != 1
        or not current.allow_direct
        or (layout and current.num_replicas != wanted.num_replicas)
    )
    if layout and current.storage != wanted.storage:
        log.warning(
            "stream %s uses %s storage, asked for %s: storage cannot change in place",
            config.stream, current.storage, wanted.storage,
        )  # fmt: skip
    if differs:
        wanted.storage = current.storage
        wanted.republish = current.republish  # the history stream's feed
        if not layout:
            wanted.num_replicas = current.num_replicas
            wanted.max_bytes = current.max_bytes
        await js.update_stream(wanted)
        log.info("updated last-value stream %s", config.stream)


@dataclass
class Snapshot:
    """Last messages of many subjects.

    Each subject unchanged since ``up_to_seq`` holds its value as of that stream
    sequence; a subject that changed while the read ran holds its newer value
    (the store keeps one message per subject, so nothing older exists).
    """

    messages: dict[str, bytes] = field(default_factory=dict)
    up_to_seq: int = 0
    #: each message's raw header block (``NATS/1.0\r\n…``), when asked for
    headers: dict[str, bytes] | None = None

    def missing(self, subjects: Sequence[str]) -> list[str]:
        """Subjects asked for that the store has no message for."""
        return [s for s in subjects if s not in self.messages]


async def fetch_last(
    nc: NatsClient,
    subjects: Sequence[str],
    *,
    stream: str = stream_name(DEFAULT_PREFIX),
    timeout: float = 5.0,
    headers: bool = False,
) -> Snapshot:
    """Read the last message of every subject (wildcards allowed) in batched
    Direct Get requests of at most 1024 subjects, run concurrently and pinned to
    one stream sequence (``headers``: keep each message's raw header block too;
    :func:`header` reads one)."""
    wanted = list(dict.fromkeys(subjects))
    snapshot = Snapshot(headers={} if headers else None)
    if not wanted:
        return snapshot
    chunks = [
        wanted[i : i + MAX_SUBJECTS_PER_REQUEST]
        for i in range(0, len(wanted), MAX_SUBJECTS_PER_REQUEST)
    ]
    async with asyncio.timeout(timeout):
        if len(chunks) == 1:  # one request is consistent by itself
            snapshot.up_to_seq = await _multi_last(
                nc, stream, chunks[0], None, snapshot
            )
            return snapshot
        snapshot.up_to_seq = await _last_seq(nc, stream)
        await asyncio.gather(
            *(_multi_last(nc, stream, c, snapshot.up_to_seq, snapshot) for c in chunks)
        )
        changed = [s for s in snapshot.missing(wanted) if "*" not in s and ">" not in s]
        if changed:  # updated after the pin: their only message is newer
            again = [
                changed[i : i + MAX_SUBJECTS_PER_REQUEST]
                for i in range(0, len(changed), MAX_SUBJECTS_PER_REQUEST)
            ]
            await asyncio.gather(
                *(_multi_last(nc, stream, c, None, snapshot) for c in again)
            )
    return snapshot


async def store_barrier(nc: NatsClient, subject: str, timeout: float = 5.0) -> int:
    """Publish an empty message into the stream and wait for its acknowledgement;
    return its stream sequence.

    A message published by anyone before this connection's previous commands
    (e.g. a ``SUB``) entered the stream's ingest before the barrier, so once the
    barrier is acknowledged the stream has stored it: a last-value read after the
    barrier (on a replica whose reply says it is up to at least the barrier's
    sequence) misses nothing the new subscription did not receive live. Raises
    :class:`StoreError` when no stream takes ``subject`` (an older stream layout:
    ``ensure_store`` adds it) or the stream refuses it."""
    try:
        reply = await nc.request(subject, b"", timeout=timeout)
    except NoRespondersError as exc:
        raise StoreError(f"no stream stores {subject}") from exc
    except NatsTimeoutError as exc:
        raise StoreError(f"barrier on {subject} not acknowledged: {exc}") from exc
    ack = json.loads(reply.data)
    if "error" in ack:
        raise StoreError(f"barrier on {subject}: {ack['error'].get('description')}")
    return int(ack["seq"])


async def _last_seq(nc: NatsClient, stream: str) -> int:
    try:
        reply = await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=5)
    except (NoRespondersError, NatsTimeoutError) as exc:
        raise StoreError(f"JetStream not available for stream {stream}: {exc}") from exc
    info = json.loads(reply.data)
    if "error" in info:
        raise StoreError(f"stream {stream}: {info['error'].get('description')}")
    return int(info["state"]["last_seq"])


#: ``(subject, reply, payload, header bytes or None)``
RawHandler = Callable[[bytes, bytes, bytes, bytes | None], None]


def _raw_subscriptions(nc: NatsClient) -> dict[int, RawHandler]:
    """Subscriptions whose messages go straight from nats-py's protocol parser to a
    handler as raw ``(subject, reply, payload, header bytes)``: a Direct Get burst costs no message
    object, header dict or queue per message (nats-py's header parsing alone cost
    ~100 µs a message here). Installed once per connection, chained with any other
    such hook; uses nats-py internals (``_process_msg``, ``_sid``,
    ``_send_command``), pinned to nats-py 2.16 and covered by the store's tests."""
    table: dict[int, RawHandler] | None = getattr(nc, "_synoptic_raw_subs", None)
    if table is None:
        table = {}
        original = nc._process_msg

        async def process_msg(
            sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes | None
        ) -> None:
            handler = table.get(sid)
            if handler is None:
                await original(sid, subject, reply, data, headers)
            else:
                handler(subject, reply, data, headers)

        nc._process_msg = process_msg  # type: ignore[method-assign]
        nc._synoptic_raw_subs = table  # type: ignore[attr-defined]
    return table


def header(headers: bytes | None, name: str) -> str | None:
    """One header's value from a raw header block (:attr:`Snapshot.headers`)."""
    value = _header(headers, name.encode()) if headers else None
    return value.decode(errors="replace") if value is not None else None


def _header(headers: bytes, name: bytes) -> bytes | None:
    """One header's value from a raw NATS header block."""
    start = headers.find(b"\r\n" + name + b":")
    if start < 0:
        return None
    start += len(name) + 3
    end = headers.find(b"\r\n", start)
    return headers[start : end if end >= 0 else len(headers)].strip()


def _status(headers: bytes) -> bytes | None:
    """The status code of ``NATS/1.0 204 EOB``-style headers, or None."""
    first = headers[: headers.find(b"\r\n")] if b"\r\n" in headers else headers
    parts = first.split(b" ", 2)
    return parts[1] if len(parts) > 1 else None


async def _multi_last(
    nc: NatsClient,
    stream: str,
    subjects: list[str],
    up_to_seq: int | None,
    into: Snapshot,
) -> int:
    """One Direct Get batch; fills ``into.messages``; returns the EOB's up-to seq."""
    request: dict[str, object] = {"multi_last": subjects}
    if up_to_seq is not None:
        request["up_to_seq"] = up_to_seq
    messages = into.messages
    kept = into.headers
    done: asyncio.Future[tuple[bytes, bytes]] = (
        asyncio.get_running_loop().create_future()
    )

    def on_message(_s: bytes, _r: bytes, data: bytes, headers: bytes | None) -> None:
        if not headers:
            return
        if headers.startswith(b"NATS/1.0\r\n"):  # a message (a status has a code)
            subject = _header(headers, b"Nats-Subject")
            if subject is not None:
                messages[subject.decode()] = data
                if kept is not None:
                    kept[subject.decode()] = headers
            return
        status = _status(headers)
        if status is None:
            subject = _header(headers, b"Nats-Subject")
            if subject is not None:
                messages[subject.decode()] = data
                if kept is not None:
                    kept[subject.decode()] = headers
        elif not done.done():
            done.set_result((status, headers))

    table = _raw_subscriptions(nc)
    inbox = nc.new_inbox()
    nc._sid += 1
    sid = nc._sid
    table[sid] = on_message
    try:
        await nc._send_command(sub_cmd(inbox, "", sid))
        await nc.publish(
            f"$JS.API.DIRECT.GET.{stream}", json.dumps(request).encode(), reply=inbox
        )
        status, headers = await done
    finally:
        del table[sid]
        if nc.is_connected:
            await nc._send_command(unsub_cmd(sid, 0))
    if status == b"204":
        return int(_header(headers, b"Nats-UpTo-Sequence") or 0)
    if status == b"404":
        return up_to_seq or 0
    if status == b"503":
        raise StoreError(f"stream {stream} not found or JetStream unavailable")
    description = headers.split(b"\r\n", 1)[0].decode(errors="replace")
    raise StoreError(f"direct get on {stream} failed: {description}")


async def stream_subjects(
    nc: NatsClient, stream: str, subjects_filter: str, timeout: float = 10.0
) -> list[str]:
    """Every subject of ``stream`` that matches ``subjects_filter`` and holds a
    message (stream info pages of up to 100,000 subjects each)."""
    out: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            request = {"subjects_filter": subjects_filter, "offset": len(out)}
            try:
                reply = await nc.request(
                    f"$JS.API.STREAM.INFO.{stream}", json.dumps(request).encode(),
                    timeout=timeout,
                )  # fmt: skip
            except (NoRespondersError, NatsTimeoutError) as exc:
                raise StoreError(
                    f"JetStream not available for {stream}: {exc}"
                ) from exc
            info = json.loads(reply.data)
            if "error" in info:
                raise StoreError(f"stream {stream}: {info['error'].get('description')}")
            page = list((info.get("state", {}).get("subjects") or {}).keys())
            out.extend(page)
            if not page or len(out) >= int(info.get("total", 0)):
                return out
