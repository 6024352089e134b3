"""``synoptic rollup``: the history-block writer.

Reads every value the raw history stream ``CS_HIST`` stores (default all of
``cs.val.>``) through a consumer (:mod:`synoptic_bus.streamtap`: a rollup that
falls behind catches up instead of being cut off and losing values), cuts each
channel's values into blocks (:mod:`synoptic_bus.blockcut`) and publishes them
(``docs/bus.md``): a closed block once on ``cs.roll.0.<tail>`` (stream
``CS_ROLL``), the growing block every ``--tick`` seconds on ``cs.roll.open.<tail>``
(stream ``CS_ROLL_OPEN``, the latest of each channel only). Trends read blocks
instead of one message per value (ADR 0027).

It also keeps the large values (over :data:`LARGE_FROM` bytes: waveforms, spectra,
images), which the raw history stream refuses, thinned to each channel's share of
the ``CS_ARRAYS`` stream (:mod:`synoptic_bus.arrays`, ADR 0031): those it takes
from the live subjects, on a NATS connection of their own (if that one falls
behind and is cut off, some large values are not kept; the blocks go on).

Values are taken raw from the connection's parser and decoded as columns a
subject at a time (no message object or map per value): ~2 µs of CPU per
value. Pending values are bounded (:data:`MAX_PENDING`, :data:`MAX_PENDING_BYTES`):
while they are full the consumer asks for no more. Where the stream dropped values
before they were read (its limits), every growing block closes there, so that
blocks never claim what they lack.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from nats.aio.client import Client as NatsClient
from nats.errors import Error as NatsError
from nats.js.api import StreamConfig
from nats.js.errors import NotFoundError
from nats.protocol.command import sub_cmd, unsub_cmd

from synoptic_bus.arrays import (
    ArraysConfig,
    ArrayThinner,
    arrays_stream_name,
    ensure_arrays,
)
from synoptic_bus.blockcut import BlockCutter, Cut
from synoptic_bus.connect import connect
from synoptic_bus.demo import DemoContext, DemoProcess
from synoptic_bus.history import (
    DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_WINDOW_S,
    HistoryConfig,
    history_stream_name,
)
from synoptic_bus.procs import Process
from synoptic_bus.store import _raw_subscriptions, ensure_stream, stream_name
from synoptic_bus.streamtap import StreamTap
from synoptic_schemas import Subjects
from synoptic_schemas.blocks import encode_block
from synoptic_schemas.series import decode_columns
from synoptic_schemas.subjects import DEFAULT_PREFIX

log = logging.getLogger(__name__)

#: The longest block window a rollup may use (readers rely on it: a block holding
#: a value at ``t`` is stored by ``t + MAX_SPAN_S + grace``).
MAX_SPAN_S = 60.0
DEFAULT_SPAN_S = 60.0
DEFAULT_MAX_VALUES = 4096
#: Bytes of blocks kept by default.
DEFAULT_BLOCK_BYTES = 256 << 20
#: Values waiting for the next tick at most, and their bytes (arrays and images
#: are kept as NaN points: a trend draws numbers only).
MAX_PENDING = 500_000
MAX_PENDING_BYTES = 256 << 20
#: Room left for the republish headers (the source stream, subject, sequences and
#: time) below the raw history's message limit: a value payload over the limit
#: minus this is kept as a large value.
HEADER_ROOM = 512
#: Payload size from which a value is a large value (with the default raw limit).
LARGE_FROM = DEFAULT_MAX_VALUE_BYTES - HEADER_ROOM
#: A dropped stretch of the raw history is logged at most this often (seconds).
GAP_LOG_EVERY_S = 10.0
#: Large values waiting for the next tick at most (bytes); beyond, dropped and
#: counted.
MAX_LARGE_BYTES = 64 << 20


def rollup_stream_name(prefix: str) -> str:
    """``cs`` → ``CS_ROLL``: the closed blocks."""
    return stream_name(prefix).removesuffix("_LAST") + "_ROLL"


def open_stream_name(prefix: str) -> str:
    """``cs`` → ``CS_ROLL_OPEN``: each channel's growing block, the latest only."""
    return rollup_stream_name(prefix) + "_OPEN"


def rollup_stream_config(
    history: HistoryConfig, max_bytes: int | None = None
) -> StreamConfig:
    """The closed-block stream beside ``history``'s: its window, storage and
    replicas, and ``max_bytes`` (default :data:`DEFAULT_BLOCK_BYTES`: a block costs
    ~17 bytes a value, so ~15 million values, an hour of ~4 000 values/s). Only
    closed blocks go there, so it deletes nothing but its oldest messages (its
    limits): nats-server's search by time is wrong on a file stream with messages
    deleted inside it (ADR 0035)."""
    config = history.stream_config()
    config.name = rollup_stream_name(history.prefix)
    config.description = "Synoptic history blocks: many values of a channel a message"
    config.subjects = [f"{history.prefix}.roll.0.>"]
    config.max_msgs_per_subject = -1
    config.max_msg_size = -1
    config.max_bytes = DEFAULT_BLOCK_BYTES if max_bytes is None else max_bytes
    config.allow_rollup_hdrs = False
    return config


def open_stream_config(history: HistoryConfig) -> StreamConfig:
    """The growing-block stream beside ``history``'s: the latest block of each
    channel (rewritten every tick), with the history's storage and replicas."""
    config = history.stream_config()
    config.name = open_stream_name(history.prefix)
    config.description = "Synoptic growing history blocks: the latest of each channel"
    config.subjects = [f"{history.prefix}.roll.open.>"]
    config.max_msgs_per_subject = 1
    config.max_msg_size = -1
    config.max_bytes = -1
    config.max_msgs = -1
    config.allow_rollup_hdrs = True  # (a rollup of an earlier layout sends them)
    return config


async def ensure_rollup(
    nc: NatsClient,
    history: HistoryConfig,
    max_bytes: int | None = None,
    *,
    update: bool = True,
) -> None:
    """Create the closed- and growing-block streams beside ``history``'s or
    (``update``) apply their limits (idempotent; storage is kept as it is). A
    block stream of the earlier layout (both kinds in ``CS_ROLL``) keeps its closed
    blocks and gives the growing ones up to their own stream, whatever ``update``."""
    for wanted in (
        rollup_stream_config(history, max_bytes),
        open_stream_config(history),
    ):
        current = await ensure_stream(
            nc, wanted, "block", update=update, storage_asked=False
        )
        if current is not None and not update and current.subjects != wanted.subjects:
            current.subjects = wanted.subjects  # the earlier layout
            await nc.jetstream().update_stream(current)
            log.info("block stream %s now holds %s", wanted.name, wanted.subjects)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rollup", help="write history blocks of the value subjects")
    p.add_argument("--nats", help="NATS URL (default $SYNOPTIC_NATS_URL)")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help="subject prefix")
    p.add_argument("--subject", action="append", default=[],
                   help="value subjects (repeat; default PREFIX.val.>)")  # fmt: skip
    p.add_argument("--span", type=float, default=DEFAULT_SPAN_S,
                   help=f"seconds of source time per block (at most {MAX_SPAN_S:g})")  # fmt: skip
    p.add_argument("--max-values", type=int, default=DEFAULT_MAX_VALUES,
                   help="values per block at most")  # fmt: skip
    p.add_argument("--tick", type=float, default=1.0,
                   help="seconds between publishing growing blocks")  # fmt: skip
    p.add_argument("--window", type=float, default=DEFAULT_WINDOW_S,
                   help="seconds the stream keeps blocks (where it creates the stream)")  # fmt: skip
    p.set_defaults(func=run)


class Rollup:
    """Value messages in, block messages out (on one NATS connection)."""

    def __init__(
        self,
        nc: NatsClient,
        prefix: str = DEFAULT_PREFIX,
        *,
        span: float = DEFAULT_SPAN_S,
        max_values: int = DEFAULT_MAX_VALUES,
        tick: float = 1.0,
        large_from: int = LARGE_FROM,
        thinner: ArrayThinner | None = None,
    ) -> None:
        if not 0 < span <= MAX_SPAN_S:
            raise ValueError(f"span must be in (0, {MAX_SPAN_S:g}] s, not {span}")
        self._nc = nc
        self._prefix = prefix
        self._subjects = Subjects(prefix)
        self._val_head = f"{prefix}.val."
        self._stored_head = f"{prefix}.hist.val."
        self._block_heads = (f"{prefix}.roll.0.", f"{prefix}.roll.open.")
        self._arr_head = f"{prefix}.hist.arr."
        self.large_from = large_from
        #: where large values are kept (None: they are not)
        self.thinner = thinner
        self._large: list[tuple[bytes, bytes]] = []
        self._large_bytes = 0
        self.cutter = BlockCutter(span, max_values, grace=1.0)
        self.tick = tick
        self._pending: dict[bytes, list[bytes]] = {}
        self._n_pending = 0
        self._pending_bytes = 0
        #: when (stream time) the stream dropped values before they were read
        self._dropped_at: int | None = None
        self._gap_logged = -GAP_LOG_EVERY_S
        self._live: NatsClient | None = None
        #: the consumer of the raw history, once :meth:`tap` made it
        self.stored: StreamTap | None = None
        self._subs: list[tuple[int, str]] = []
        self.values = 0
        self.dropped = 0
        self.bad = 0
        self.published = 0
        #: large values kept, and dropped for want of room before a tick
        self.large_kept = 0
        self.large_dropped = 0

    def _keep_large(self, subject: bytes, data: bytes) -> None:
        if self.thinner is None or not self.thinner.keep(
            subject, len(data), time.monotonic()
        ):
            return
        if self._large_bytes + len(data) > MAX_LARGE_BYTES:
            self.large_dropped += 1
            return
        self._large.append((subject, data))
        self._large_bytes += len(data)

    def full(self) -> bool:
        """No room for more values before the next tick."""
        return (
            self._n_pending >= MAX_PENDING or self._pending_bytes >= MAX_PENDING_BYTES
        )

    def on_stored(self, subject: bytes, data: bytes) -> None:
        """A value message as the raw history stored it (or any value message)."""
        self._pending_bytes += len(data)
        bucket = self._pending.get(subject)
        if bucket is None:
            bucket = self._pending[subject] = []
        bucket.append(data)
        self._n_pending += 1

    def gap(self, stream_ns: int) -> None:
        """The stream dropped values after ``stream_ns`` before they were read."""
        self.dropped += 1
        if self._dropped_at is None:
            self._dropped_at = stream_ns
        now = time.monotonic()
        if now - self._gap_logged >= GAP_LOG_EVERY_S:
            self._gap_logged = now
            behind = max(time.time_ns() - stream_ns, 0) / 1e9
            log.warning(
                "the raw history dropped values before the rollup read them "
                "(gap %d so far; reading %.1f s behind): blocks leave a gap there. "
                "Give the raw history a larger budget or the rollup more CPU",
                self.dropped, behind,
            )  # fmt: skip

    def tap(self, subjects: list[str]) -> StreamTap:
        """The consumer of the raw history for the value ``subjects`` (``start``
        it, then ``run`` it)."""
        head = f"{self._prefix}."
        filters = [f"{head}hist.{s.removeprefix(head)}" for s in subjects]
        self.stored = StreamTap(
            self._nc, history_stream_name(self._prefix), filters, self.on_stored,
            self.gap, self.full, whole=filters == [f"{self._stored_head}>"],
        )  # fmt: skip
        return self.stored

    def _on_live(
        self, subject: bytes, _reply: bytes, data: bytes, _headers: bytes | None
    ) -> None:
        if len(data) > self.large_from:
            self._keep_large(subject, data)

    async def watch_live(self, nc: NatsClient, subjects: list[str]) -> None:
        """Take the large values from the live ``subjects`` on connection ``nc``
        (subscribed raw: call :meth:`rewatch_live` after it reconnects)."""
        self._live = nc
        table = _raw_subscriptions(nc)
        for subject in subjects:
            nc._sid += 1
            table[nc._sid] = self._on_live
            self._subs.append((nc._sid, subject))
            await nc._send_command(sub_cmd(subject, "", nc._sid))
        await nc.flush()

    async def rewatch_live(self) -> None:
        """Subscribe again after the live connection reconnected."""
        if self._live is not None:
            for sid, subject in self._subs:
                await self._live._send_command(sub_cmd(subject, "", sid))

    async def close(self) -> None:
        if self.stored is not None:
            await self.stored.close()
        if self._live is not None:
            table = _raw_subscriptions(self._live)
            for sid, _ in self._subs:
                table.pop(sid, None)
                if self._live.is_connected:
                    await self._live._send_command(unsub_cmd(sid, 0))
        self._subs.clear()

    def take(self) -> list[Cut]:
        """Cut what arrived since the last call; returns the closed blocks."""
        pending, self._pending, self._n_pending = self._pending, {}, 0
        self._pending_bytes = 0
        closed: list[Cut] = []
        for raw, payloads in pending.items():
            subject = raw.decode()
            if subject.startswith(self._stored_head):
                key = subject[len(self._stored_head) :]
            elif subject.startswith(self._val_head):
                key = subject[len(self._val_head) :]
            else:
                continue
            cols = decode_columns(payloads)
            self.bad += cols.bad
            self.values += len(cols)
            if len(cols) > 1 and (cols.t[1:] < cols.t[:-1]).any():
                cols = type(cols).concat([cols])  # (sorted by time)
            closed.extend(self.cutter.add(key, cols))
        if self._dropped_at is not None:  # blocks promise nothing past a drop
            closed.extend(self.cutter.interrupt(self._dropped_at))
            self.cutter.resume(time.time_ns())
            self._dropped_at = None
        return closed

    async def publish(self, cuts: list[Cut], level: str) -> None:
        head = self._block_heads[0 if level == "0" else 1]
        for c in cuts:
            await self._nc.publish(head + c.key, encode_block(c.a, c.b, c.cols))
        self.published += len(cuts)

    async def publish_large(self) -> int:
        """Store the large values kept since the last tick; returns how many."""
        large, self._large, self._large_bytes = self._large, [], 0
        head = self._val_head.encode()
        for subject, data in large:
            if subject.startswith(head):
                tail = subject[len(head) :].decode()
                await self._nc.publish(self._arr_head + tail, data)
        self.large_kept += len(large)
        return len(large)

    async def step(self, now_ns: int | None = None) -> int:
        """One tick: cut what arrived, publish closed, expired and open blocks and
        the large values kept; returns the blocks published."""
        now = self._now() if now_ns is None else now_ns
        closed = self.take() + self.cutter.expire(now)
        opened = self.cutter.open_blocks(now, quiet_every=10 * self.tick)
        await self.publish(closed, "0")
        await self.publish(opened, "open")
        await self.publish_large()
        if self._nc.is_connected:  # (while reconnecting nats-py keeps them pending)
            try:
                await self._nc.flush(timeout=5)
            except (NatsError, TimeoutError) as exc:
                log.warning("flushing blocks: %s", exc)
        return len(closed) + len(opened)

    def _now(self) -> int:
        """The time blocks are closed by: the wall clock, or while the consumer
        catches up on the stream, the time of the last value it read (a block is
        not closed before its values have been read)."""
        now = time.time_ns()
        tap = self.stored
        if tap is not None and tap.behind and tap.last_ns:
            return min(now, tap.last_ns)
        return now

    async def run_forever(self) -> None:
        while True:
            started = time.monotonic()
            await self.step()
            await asyncio.sleep(max(self.tick - (time.monotonic() - started), 0.01))


async def _ensure_streams(nc: NatsClient, prefix: str, window: float) -> None:
    """The block and large-value streams where missing (``synoptic bus init``
    sizes them; the rollup only creates what it needs)."""
    history = HistoryConfig(prefix, window_s=window)
    await ensure_rollup(nc, history, update=False)
    await ensure_arrays(nc, ArraysConfig(history), update=False)


async def large_value_plan(nc: NatsClient, prefix: str) -> tuple[int, ArrayThinner]:
    """From the streams as they are: the payload size from which a value is large
    (the raw history's message limit less :data:`HEADER_ROOM`) and the thinning of
    the large-value stream (its bytes and window)."""
    js = nc.jetstream()
    large_from = LARGE_FROM
    try:
        raw = (await js.stream_info(history_stream_name(prefix))).config
    except NotFoundError:
        raw = None
    if raw is not None and raw.max_msg_size and raw.max_msg_size > 0:
        large_from = max(raw.max_msg_size - HEADER_ROOM, 0)
    arrays = (await js.stream_info(arrays_stream_name(prefix))).config
    window = arrays.max_age or DEFAULT_WINDOW_S
    budget = arrays.max_bytes if arrays.max_bytes and arrays.max_bytes > 0 else 1 << 30
    return large_from, ArrayThinner(budget, window)


async def run(args: argparse.Namespace) -> int:
    rollups: list[Rollup] = []

    async def on_reconnect() -> None:  # a restarted server may have lost a memory
        await _ensure_streams(nc, args.prefix, args.window)  # stream: make it again
        for r in rollups:
            if r.stored is not None:
                await r.stored.resubscribe()

    async def on_live_reconnect() -> None:
        for r in rollups:
            await r.rewatch_live()

    nc = await connect(args.nats, name="synoptic-rollup", on_reconnect=on_reconnect)
    live = await connect(args.nats, name="synoptic-rollup-large",
                         on_reconnect=on_live_reconnect)  # fmt: skip
    await _ensure_streams(nc, args.prefix, args.window)
    large_from, thinner = await large_value_plan(nc, args.prefix)
    rollup = Rollup(nc, args.prefix, span=args.span, max_values=args.max_values,
                    tick=args.tick, large_from=large_from, thinner=thinner)  # fmt: skip
    rollups.append(rollup)
    subjects = args.subject or [f"{args.prefix}.val.>"]
    tap = rollup.tap(subjects)
    while True:
        try:
            await tap.start()
            break
        except Exception as exc:
            print(f"rollup: cannot read {history_stream_name(args.prefix)} ({exc}): "
                  "waiting for `synoptic bus init`", file=sys.stderr, flush=True)  # fmt: skip
            await asyncio.sleep(2.0)
    rollup.cutter.resume(time.time_ns())  # blocks cover what the consumer reads
    await rollup.watch_live(live, subjects)
    print(
        f"rollup ready: {', '.join(subjects)} from {history_stream_name(args.prefix)} "
        f"into {rollup_stream_name(args.prefix)}, values over {large_from} bytes into "
        f"{arrays_stream_name(args.prefix)} ({thinner.budget} bytes over "
        f"{thinner.window_s:g} s)",
        flush=True,
    )
    reading = asyncio.create_task(tap.run())
    try:
        await rollup.run_forever()
    finally:
        reading.cancel()
        await rollup.close()
        await live.close()
        await nc.close()
    return 0


def demo_components(ctx: DemoContext) -> list[DemoProcess]:
    """The demo's rollup: history blocks of every channel."""
    argv = [sys.executable, "-m", "synoptic_bus.cli", "rollup", "--nats",
            ctx.nats_url]  # fmt: skip
    return [
        DemoProcess(
            name="rollup",
            argv=argv,
            ready=r"rollup ready",
            order=30,
            banner="history blocks for trends (CS_ROLL, CS_ROLL_OPEN), large values "
            "thinned (CS_ARRAYS)",
        )
    ]


def start_rollup(nats_url: str, *args: str) -> Process:
    """``synoptic rollup`` as a child process (tests, benchmarks); returns once it
    is subscribed. Stop it with ``.kill()``."""
    argv = [sys.executable, "-m", "synoptic_bus.cli", "rollup", "--nats", nats_url,
            *args]  # fmt: skip
    return Process.started(f"rollup-{time.monotonic_ns()}", argv, r"rollup ready")
