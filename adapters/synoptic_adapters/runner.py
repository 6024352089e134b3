"""One adapter process: a :class:`Source` wired to NATS.

``run_adapter(source, config)`` connects to NATS (endless reconnects), creates the
last-value stream if needed, starts the publisher and the source, monitors the
configured channels this instance owns, follows demand leases, answers put
requests for owned channels (and command requests, for a source with commands), publishes a heartbeat every period, prints
``adapter <id> ready`` when it serves, and shuts down cleanly on SIGTERM/SIGINT
(its channels are published as disconnected, "adapter stopped", before it exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NatsClient

from synoptic_adapters.config import AdapterConfig
from synoptic_adapters.demand import Demand
from synoptic_adapters.metrics import serve_metrics
from synoptic_adapters.publisher import Publisher
from synoptic_adapters.sharding import Shard
from synoptic_adapters.source import CommandSource, Source
from synoptic_bus.connect import connect
from synoptic_bus.prereq import PrerequisiteError
from synoptic_bus.store import StoreConfig, ensure_store, wait_for_store
from synoptic_schemas import (
    SCHEMA_VERSION,
    ContractError,
    PutError,
    Subjects,
    decode_cmd,
    decode_put,
    encode,
)
from synoptic_schemas.subjects import Kind

log = logging.getLogger(__name__)

STOPPED_STATUS = "adapter stopped"
#: Heartbeats between two statistics lines in the log.
STATS_EVERY = 60


def default_adapter_id(proto: str, shard: Shard) -> str:
    """``<proto>-<host>-<i>of<n>``: stable across restarts of the same replica."""
    host = socket.gethostname().split(".")[0] or "host"
    return f"{proto}-{host}-{shard.index}of{shard.count}"


def put_reply(
    ok: bool, err: str | None = None, msg: str | None = None
) -> dict[str, Any]:
    """A ``PutReplyMsg`` dict."""
    reply: dict[str, Any] = {"ver": SCHEMA_VERSION, "ok": ok}
    if err is not None:
        reply["err"] = err
    if msg is not None:
        reply["msg"] = msg
    return reply


class Adapter:
    """The running parts of one adapter instance (see :func:`run_adapter`)."""

    def __init__(
        self,
        source: Source,
        config: AdapterConfig,
        *,
        shard: Shard | None = None,
        adapter_id: str | None = None,
        epoch_ms: int | None = None,
    ) -> None:
        self.source = source
        self.config = config
        self.shard = shard or Shard()
        self.id = (
            adapter_id or config.id or default_adapter_id(source.proto, self.shard)
        )
        self.subjects = Subjects(config.prefix)
        self.epoch_ms = epoch_ms or time.time_ns() // 1_000_000
        self.configured = [c for c in config.channels if self.shard.owns(c)]
        self.nc: NatsClient | None = None
        self.publisher: Publisher | None = None
        self.demand: Demand | None = None
        self._puts: set[asyncio.Task[None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._subs: list[Any] = []
        self.put_results: dict[str, int] = {}  # "ok" or PutError code -> count

    async def start(self) -> None:
        """Connect and start serving (returns once ready)."""
        self.nc = await connect(
            self.config.nats_url, name=self.id, on_reconnect=self._on_reconnect
        )
        await wait_for_store(self.nc, self._store_config())
        self.publisher = Publisher(
            self.nc,
            self.subjects,
            self.id,
            self.epoch_ms,
            max_queue=self.config.max_queue,
        )
        await self.publisher.start()
        await self.source.start(self.publisher)
        self.demand = Demand(
            self.nc, self.subjects, self.source, self.publisher,
            configured=self.configured, owns=self.shard.owns,
            max_lease=self.config.max_lease, sweep_period=self.config.sweep_period,
        )  # fmt: skip
        await self.source.monitor(self.configured)
        if self.config.demand_enabled:
            await self.demand.start()
        if self.config.put_enabled:
            for kind in self.request_kinds:
                subject = self.subjects.all_of(kind, self.source.proto)
                self._subs.append(await self.nc.subscribe(subject, cb=self.handle_put))
        await self.nc.flush()
        self._tasks.append(asyncio.create_task(self._heartbeat(), name="heartbeat"))
        if self.config.metrics_port:
            serve_metrics(self, self.config.metrics_port, self.config.metrics_addr)

    async def _on_reconnect(self) -> None:
        # Not awaited here: JetStream requests inside nats-py's reconnect flow
        # would wait for the reconnect to finish.
        self._tasks.append(asyncio.create_task(self._restore(), name="restore"))

    async def _restore(self) -> None:
        """After a reconnect: recreate the store (a restarted server may have lost
        a memory stream), then republish every last value and metadata."""
        assert self.nc is not None and self.publisher is not None
        for attempt in range(10):
            try:
                await ensure_store(self.nc, self._store_config())
                break
            except Exception as exc:
                log.warning("last-value store not ready after reconnect: %s", exc)
                await asyncio.sleep(min(0.5 * 2**attempt, 5.0))
        self.publisher.republish_all()

    def _store_config(self) -> StoreConfig:
        return StoreConfig(self.config.prefix, storage=self.config.storage)  # type: ignore[arg-type]

    def heartbeat_message(self) -> dict[str, Any]:
        assert self.publisher is not None and self.demand is not None
        return {
            "ver": SCHEMA_VERSION,
            "id": self.id,
            "proto": self.source.proto,
            "ep": self.epoch_ms,
            "t": time.time_ns(),
            "period": self.config.heartbeat_period,
            "n": len(self.demand.monitored),
            "conn": self.publisher.connected_count,
        }

    async def _heartbeat(self) -> None:
        assert self.nc is not None
        subject = self.subjects.hb(self.id)
        beats = 0
        while True:
            beats += 1
            if beats % STATS_EVERY == 0:
                self.log_stats()
            if self.nc.is_connected:
                try:
                    await self.nc.publish(subject, encode(self.heartbeat_message()))
                except Exception as exc:
                    log.warning("heartbeat not sent: %s", exc)
            await asyncio.sleep(self.config.heartbeat_period)

    def log_stats(self) -> None:
        """One log line with the publisher's counters (and the source's merges)."""
        assert self.publisher is not None
        stats = self.publisher.stats
        merged = getattr(self.source, "merged", None)
        log.info(
            "stats: %d channels (%d connected), received %d, published %d, "
            "dropped %d, offline %d, republished %d, queued %d%s",
            self.publisher.channel_count, self.publisher.connected_count,
            stats.received, stats.published, stats.dropped, stats.offline_dropped,
            stats.republished, self.publisher.queued,
            f", merged at source {merged}" if merged is not None else "",
        )  # fmt: skip

    @property
    def request_kinds(self) -> tuple[Kind, ...]:
        """The request subjects this adapter answers: ``put``, and ``cmd`` when its
        source has commands. Both follow the ``put`` settings (enabled, timeouts,
        in-flight limit): a command is a write."""
        commands = isinstance(self.source, CommandSource)
        return ("put", "cmd") if commands else ("put",)

    async def handle_put(self, msg: Any) -> None:
        """Answer one put or command request (``cs.put.…``/``cs.cmd.…`` with a
        reply subject): the adapter's request path, also used by a Tango worker
        for requests its supervisor relays."""
        if not msg.reply:
            return
        try:
            kind, channel = self.subjects.parse(msg.subject)
        except ContractError as exc:
            await self._respond(msg, put_reply(False, PutError.BAD_REQUEST, str(exc)))
            return
        if kind not in self.request_kinds or not self.shard.owns(channel):
            return  # another replica answers
        if len(self._puts) >= self.config.max_puts_in_flight:
            await self._respond(
                msg, put_reply(False, PutError.FAILED, "too many puts in flight")
            )
            return
        task = asyncio.create_task(self._serve(msg, channel, kind))
        self._puts.add(task)
        task.add_done_callback(self._puts.discard)

    async def _serve(self, msg: Any, channel: Any, kind: Kind) -> None:
        """Answer one put or command request; the source's reply, or why not."""
        try:
            request = (decode_put if kind == "put" else decode_cmd)(msg.data)
        except ContractError as exc:
            await self._respond(msg, put_reply(False, PutError.BAD_REQUEST, str(exc)))
            return
        timeout = request.get("timeout", self.config.put_timeout)
        timeout = min(max(float(timeout), 0.001), self.config.max_put_timeout)
        what = "put" if kind == "put" else "command"
        try:
            if kind == "put":
                reply = await self.source.put(channel, request["v"], timeout)
            else:
                assert isinstance(self.source, CommandSource)
                arg = request.get("v")
                reply = await self.source.command(channel, arg, timeout)  # type: ignore[assignment]
        except (
            Exception
        ) as exc:  # a source must reply, but never leave a caller hanging
            log.exception("%s on %s raised", what, channel.uri)
            reply = put_reply(False, PutError.FAILED, f"{type(exc).__name__}: {exc}")  # type: ignore[assignment]
        log.info(
            "%s %s by %s: %s", what, channel.uri, request.get("who", "?"),
            "ok" if reply["ok"] else reply.get("err"),
        )  # fmt: skip
        await self._respond(msg, dict(reply))

    async def _respond(self, msg: Any, reply: dict[str, Any]) -> None:
        result = "ok" if reply.get("ok") else str(reply.get("err", "failed"))
        self.put_results[result] = self.put_results.get(result, 0) + 1
        with contextlib.suppress(Exception):
            await msg.respond(encode(reply))

    async def stop(self) -> None:
        """Stop serving: channels published as disconnected, NATS flushed and closed."""
        for task in self._tasks:
            task.cancel()
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        if self.demand is not None:
            await self.demand.stop()
        for task in list(self._puts):
            task.cancel()
        await asyncio.gather(*self._tasks, *self._puts, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.source.stop()
        if self.publisher is not None:
            self.publisher.disconnect_all(STOPPED_STATUS)
            await self.publisher.stop()
            self.log_stats()
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.flush(timeout=2)
            with contextlib.suppress(Exception):
                await self.nc.close()


async def until_stopped(work: Awaitable[Any], stop: asyncio.Event) -> bool:
    """Await ``work`` unless ``stop`` is set first (then it is cancelled): a
    signal during a start that waits (NATS away, a missing stream) stops at once.
    Whether ``work`` finished."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        task.result()  # its exception, if any
        return True
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return False


async def run_adapter(
    source: Source,
    config: AdapterConfig,
    *,
    shard: Shard | None = None,
    adapter_id: str | None = None,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[Adapter], Awaitable[None]] | None = None,
    epoch_ms: int | None = None,
) -> int:
    """Run one adapter until SIGTERM/SIGINT (or ``stop`` is set); return 0.
    ``on_ready(adapter)`` is awaited once it serves, before the ready line;
    ``epoch_ms`` overrides its epoch (default: now, in ms)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    adapter = Adapter(
        source, config, shard=shard, adapter_id=adapter_id, epoch_ms=epoch_ms
    )
    try:
        try:
            if not await until_stopped(adapter.start(), stop):
                return 0  # a signal during the start
        except PrerequisiteError as exc:
            print(f"adapter {adapter.id} cannot start: {exc}", flush=True)
            return 2
        if on_ready is not None:
            await on_ready(adapter)
        print(
            f"adapter {adapter.id} ready: {len(adapter.configured)} configured "
            f"channels, shard {adapter.shard}, epoch {adapter.epoch_ms}",
            flush=True,
        )
        await stop.wait()
        log.info("adapter %s stopping", adapter.id)
    finally:
        await adapter.stop()
    return 0
