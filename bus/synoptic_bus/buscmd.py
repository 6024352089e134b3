"""Bus commands: ``synoptic bus init``, ``tail``, ``get``, ``put`` and ``command``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from nats.errors import BadSubjectError

from synoptic_bus.alarmstore import AlarmStreams, ensure_stream
from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.arrays import DEFAULT_ARRAY_BYTES, ArraysConfig, ensure_arrays
from synoptic_bus.connect import connect
from synoptic_bus.history import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_PER_SUBJECT,
    DEFAULT_WINDOW_S,
    HistoryConfig,
    ensure_history,
)
from synoptic_bus.learned import TANGO_READS_BUCKET, ensure_learned_bucket
from synoptic_bus.metahistory import (
    DEFAULT_META_BYTES,
    DEFAULT_META_WINDOW_S,
    MetaHistoryConfig,
    ensure_meta_history,
)
from synoptic_bus.prereq import insufficient_storage, storage_error
from synoptic_bus.retention import describe, retention
from synoptic_bus.rollup import (
    DEFAULT_BLOCK_BYTES,
    ensure_rollup,
    open_stream_name,
    rollup_stream_name,
)
from synoptic_bus.screencmd import default_seed_dir
from synoptic_bus.screens import ScreenBucket, ScreensConfig, StoreUnavailableError
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last
from synoptic_bus.viagateway import add_option as add_gateway_option
from synoptic_bus.viagateway import function as gateway_function
from synoptic_schemas import (
    SCHEMA_VERSION,
    ContractError,
    Subjects,
    decode_cmd_reply,
    decode_heartbeat,
    decode_meta,
    decode_put_reply,
    decode_value,
    encode,
    parse_channel,
)
from synoptic_schemas.screens import DEFAULT_BUCKET
from synoptic_schemas.subjects import escape_token

#: Seconds ``synoptic get`` waits for a channel it had to ask for: longer than an
#: adapter's connect timeout (5 s), so an unreachable server is reported as such.
DEFAULT_GET_WAIT = 8.0
#: Seconds ``get`` waits for the metadata of a channel whose value it has.
META_GRACE = 2.0
#: Lease of the demand ``get`` and ``tail`` announce, renewed while they run.
WANT_LEASE = 30.0


async def announce(nc: Any, subjects: Subjects, uris: list[str], by: str) -> None:
    """Ask the adapters for these channels for :data:`WANT_LEASE` seconds (a
    ``cs.want.<proto>`` announcement per protocol, as a gateway makes)."""
    by_proto: dict[str, list[str]] = {}
    for uri in uris:
        channel = parse_channel(uri)
        by_proto.setdefault(channel.proto, []).append(channel.uri)
    for proto, names in by_proto.items():
        want = {"ver": SCHEMA_VERSION, "ch": names, "lease": WANT_LEASE, "by": by}
        await nc.publish(subjects.want(proto), encode(want))
    await nc.flush()


def register(sub: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--nats", help="NATS URL (default $SYNOPTIC_NATS_URL)")
    common.add_argument("--prefix", default="cs", help="subject prefix (default cs)")

    bus = sub.add_parser("bus", help="manage the bus").add_subparsers(
        dest="bus_command", required=True
    )
    init = bus.add_parser(
        "init", parents=[common],
        help="create the last-value and history streams and the screens bucket "
        "(seeded)",
    )  # fmt: skip
    init.add_argument("--storage", choices=["memory", "file"], default="memory",
                      help="last-value stream storage")  # fmt: skip
    init.add_argument("--replicas", type=int, default=1,
                      help="replicas of every stream (3 on a 3-node cluster)")  # fmt: skip
    init.add_argument(
        "--history-window",
        type=float,
        default=DEFAULT_WINDOW_S,
        metavar="SECONDS",
        help=f"recent history kept on the bus (default {DEFAULT_WINDOW_S:g}; 0: none)",
    )
    init.add_argument(
        "--history-per-channel",
        type=int,
        default=DEFAULT_PER_SUBJECT,
        metavar="N",
        help=f"history messages kept per channel (default {DEFAULT_PER_SUBJECT})",
    )
    init.add_argument(
        "--history-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="BYTES",
        help=f"raw history bytes kept in all (default {DEFAULT_MAX_BYTES})",
    )
    init.add_argument(
        "--history-max-value",
        type=int,
        default=DEFAULT_MAX_VALUE_BYTES,
        metavar="BYTES",
        help="largest message the raw history keeps, headers included (default "
        f"{DEFAULT_MAX_VALUE_BYTES}); larger values are kept thinned in CS_ARRAYS",
    )
    init.add_argument(
        "--history-blocks-bytes",
        type=int,
        default=None,
        metavar="BYTES",
        help=f"history-block bytes kept in all (default {DEFAULT_BLOCK_BYTES})",
    )
    init.add_argument(
        "--history-arrays-bytes",
        type=int,
        default=None,
        metavar="BYTES",
        help="large-value (arrays, images) bytes kept in all (default "
        f"{DEFAULT_ARRAY_BYTES})",
    )
    init.add_argument(
        "--meta-history-window",
        type=float,
        default=DEFAULT_META_WINDOW_S,
        metavar="SECONDS",
        help="metadata history kept (units, limits, labels in force at each moment; "
        f"default {DEFAULT_META_WINDOW_S:g}: 400 days)",
    )
    init.add_argument(
        "--meta-history-bytes",
        type=int,
        default=DEFAULT_META_BYTES,
        metavar="BYTES",
        help=f"metadata history bytes kept in all (default {DEFAULT_META_BYTES})",
    )
    init.add_argument(
        "--history-storage",
        choices=["memory", "file"],
        default="file",
        help="storage of the history streams (default file: history survives a "
        "restart of NATS)",
    )
    init.add_argument("--screens", type=Path, default=None,
                      help="seed folder: its <name>.json files become screens whose "
                           "keys are absent (default $SYNOPTIC_SCREENS_DIR, else "
                           "./screens)")  # fmt: skip
    init.add_argument("--screens-bucket", default=DEFAULT_BUCKET,
                      help="the screens KV bucket")  # fmt: skip
    init.set_defaults(func=cmd_init)

    status = bus.add_parser(
        "status", parents=[common],
        help="how far back the bus's history reaches, per kind of value",
    )  # fmt: skip
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(func=cmd_status)

    tail = sub.add_parser("tail", parents=[common], help="print live updates")
    tail.add_argument(
        "pattern", help="channel URI, or a subject wildcard such as 'cs.val.ca.>'"
    )
    tail.add_argument("--count", type=int, default=0, help="stop after N updates")
    tail.add_argument("--json", action="store_true", help="one JSON object per line")
    tail.set_defaults(func=cmd_tail)

    get = sub.add_parser("get", parents=[common], help="last values and metadata")
    get.add_argument("uris", nargs="+", metavar="URI", help="channel URIs")
    get.add_argument("--json", action="store_true", help="one JSON object per line")
    get.add_argument(
        "--wait", type=float, default=DEFAULT_GET_WAIT, metavar="SECONDS",
        help="a channel the store holds nothing for is asked of its adapter, as a "
        "screen asks it: wait this long for its first value (0: do not ask)",
    )  # fmt: skip
    get.set_defaults(func=cmd_get)

    put = sub.add_parser("put", parents=[common], help="write a value")
    put.add_argument("uri", help="channel URI")
    put.add_argument(
        "value", help="JSON value (number, string, list); bare text is a string"
    )
    put.add_argument("--timeout", type=float, default=5.0,
                     help="seconds to wait for the adapter's answer")  # fmt: skip
    add_gateway_option(put)
    put.set_defaults(func=cmd_put)

    command = sub.add_parser(
        "command", parents=[common], help="run a Tango command (tango://…/Command)"
    )
    command.add_argument("uri", help="command URI (tango://host:port/d/f/m/Command)")
    command.add_argument(
        "arg", nargs="?", help="its argument, read like a put value; none if absent"
    )
    command.add_argument("--timeout", type=float, default=5.0,
                         help="seconds to wait for the adapter's answer")  # fmt: skip
    add_gateway_option(command)
    command.set_defaults(func=cmd_command)


@contextlib.contextmanager
def reserving(nc: Any, stream: str, budget: int | None = None) -> Iterator[None]:
    """Turn JetStream's "insufficient storage" while creating ``stream`` into a
    one-line :class:`~synoptic_bus.prereq.StorageError` saying what to change."""
    try:
        yield
    except Exception as exc:
        if insufficient_storage(exc):
            raise storage_error(nc, stream, budget) from None
        raise


async def cmd_init(args: argparse.Namespace) -> int:
    nc = await connect(args.nats, name="synoptic-cli", retry_on_failed_connect=False)
    config = StoreConfig(args.prefix, storage=args.storage, replicas=args.replicas)
    with reserving(nc, config.stream):
        await ensure_store(nc, config, layout=True)
    print(f"stream {config.stream} ready: subjects {', '.join(config.subjects)}")
    if args.history_window > 0:
        history = HistoryConfig(
            args.prefix,
            window_s=args.history_window,
            max_msgs_per_subject=args.history_per_channel,
            max_bytes=args.history_bytes,
            max_value_bytes=args.history_max_value,
            storage=args.history_storage,
            replicas=args.replicas,
        )
        with reserving(nc, history.stream, args.history_bytes):
            await ensure_history(nc, history)
        print(
            f"stream {history.stream} ready: {args.history_window:g} s of history, "
            f"at most {args.history_per_channel} messages per channel, "
            f"{args.history_bytes} bytes and {args.history_max_value} bytes a message"
        )
        blocks = rollup_stream_name(args.prefix)
        with reserving(nc, blocks, args.history_blocks_bytes):
            await ensure_rollup(nc, history, args.history_blocks_bytes)
        print(
            f"streams {blocks} and {open_stream_name(args.prefix)} ready: history "
            "blocks, closed and growing (synoptic rollup)"
        )
        arrays = ArraysConfig(history, args.history_arrays_bytes)
        with reserving(nc, arrays.stream, arrays.budget):
            await ensure_arrays(nc, arrays)
        print(
            f"stream {arrays.stream} ready: large values thinned to "
            f"{arrays.budget} bytes (synoptic rollup)"
        )
        meta = MetaHistoryConfig(
            args.prefix,
            window_s=args.meta_history_window,
            max_bytes=args.meta_history_bytes,
            storage=args.history_storage,
            replicas=args.replicas,
        )
        with reserving(nc, meta.stream, args.meta_history_bytes):
            await ensure_meta_history(nc, meta)
        print(
            f"stream {meta.stream} ready: {args.meta_history_window / 86400:g} days "
            f"of metadata history, {args.meta_history_bytes} bytes"
        )
    alarms = AlarmStreams(args.prefix, replicas=args.replicas)
    with reserving(nc, alarms.sev_stream, alarms.sev_bytes):
        await ensure_stream(nc, alarms.sev_config())
    with reserving(nc, alarms.alarm_stream):
        await ensure_stream(nc, alarms.alarm_config())
    await TreeStore.ensure(nc, TreeStoreConfig(replicas=args.replicas))
    print(
        f"streams {alarms.sev_stream} and {alarms.alarm_stream} ready: severity "
        f"transitions (the last {alarms.sev_per_channel} of each channel) and "
        "alarm states; the alarm tree's bucket too"
    )
    await ensure_learned_bucket(nc, TANGO_READS_BUCKET, args.replicas)
    print(
        f"bucket {TANGO_READS_BUCKET} ready: what Tango adapters learn about "
        "reading each attribute"
    )
    screens = ScreensConfig(args.screens_bucket, replicas=args.replicas)
    try:
        bucket = await ScreenBucket.ensure(nc, screens)
        folder = args.screens or default_seed_dir()
        report = await bucket.seed_folder(folder)
    except StoreUnavailableError as exc:
        print(f"screens bucket: {exc}", file=sys.stderr)
        return 3
    finally:
        await nc.close()
    print(
        f"bucket {screens.bucket} ready: seeded {len(report.created)} screen(s) from "
        f"{folder}, {len(report.present)} already present, "
        f"{len(report.refused)} refused"
    )
    for file, reason in report.refused.items():
        print(f"  refused {file}: {reason}", file=sys.stderr)
    return 0


async def cmd_status(args: argparse.Namespace) -> int:
    nc = await connect(args.nats, name="synoptic-cli", retry_on_failed_connect=False)
    try:
        streams = await retention(nc, args.prefix)
    finally:
        await nc.close()
    if args.json:
        print(json.dumps({"history": [r.as_json() for r in streams]}))
    else:
        for r in streams:
            print(describe(r))
    if not streams:
        print("no history streams: run `synoptic bus init`", file=sys.stderr)
        return 3
    return 0


def _subject_pattern(pattern: str, subjects: Subjects) -> str:
    if "://" in pattern:
        return subjects.val(parse_channel(pattern))
    return pattern


def format_value(v: Any) -> str:
    """Short human text of a decoded value."""
    if isinstance(v, np.ndarray):
        body = np.array2string(v.ravel()[:8], precision=6, separator=",")
        return f"{v.dtype.name}{list(v.shape)} {body}{'…' if v.size > 8 else ''}"
    return repr(v)


def _time(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds")


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    return obj


async def cmd_tail(args: argparse.Namespace) -> int:
    subjects = Subjects(args.prefix)
    pattern = _subject_pattern(args.pattern, subjects)
    nc = await connect(args.nats, name="synoptic-tail", retry_on_failed_connect=False)
    wanted = [args.pattern] if "://" in args.pattern else []
    done = asyncio.Event()
    seen = 0
    hb_head = f"{args.prefix}.hb."

    def count_one() -> None:
        nonlocal seen
        seen += 1
        if args.count and seen >= args.count:
            done.set()

    async def on_msg(msg: Any) -> None:
        if msg.subject.startswith(hb_head):
            try:
                beat = decode_heartbeat(msg.data)
            except ContractError as exc:
                print(f"{msg.subject}: undecodable: {exc}", file=sys.stderr)
                return
            print(
                f"{_time(beat['t'])} heartbeat {beat['id']} ({beat['proto']}) "
                f"epoch {beat['ep']}: {beat['conn']}/{beat['n']} channels connected",
                flush=True,
            )
            count_one()
            return
        try:
            kind, channel = subjects.parse(msg.subject)
            if kind != "val":
                return
            value = decode_value(msg.data)
        except ContractError as exc:
            print(f"{msg.subject}: undecodable: {exc}", file=sys.stderr)
            return
        if args.json:
            print(json.dumps({"ch": channel.uri, **_jsonable(value)}), flush=True)
        else:
            state = "" if value["c"] else " DISCONNECTED"
            print(
                f"{_time(value['t'])} {channel.uri} {format_value(value['v'])} "
                f"sev={value['sev']} {value['st']} seq={value['seq']}{state}",
                flush=True,
            )
        count_one()

    try:
        await nc.subscribe(pattern, cb=on_msg)
    except BadSubjectError:
        print(f"tail: {pattern!r} is not a valid subject or wildcard", file=sys.stderr)
        await nc.close()
        return 2
    await nc.flush()
    print(f"tailing {pattern}", file=sys.stderr, flush=True)
    renew: asyncio.Task[None] | None = None
    if wanted:  # a channel on demand: its adapter monitors it while this runs

        async def keep_wanted() -> None:
            while True:
                await announce(nc, subjects, wanted, "synoptic-tail")
                await asyncio.sleep(WANT_LEASE / 3)

        renew = asyncio.create_task(keep_wanted())
    try:
        await done.wait()
    finally:
        if renew is not None:
            renew.cancel()
        await nc.close()
    return 0


async def cmd_get(args: argparse.Namespace) -> int:
    subjects = Subjects(args.prefix)
    channels = [parse_channel(u) for u in args.uris]
    nc = await connect(args.nats, name="synoptic-get", retry_on_failed_connect=False)
    stream = StoreConfig(args.prefix).stream
    wanted = [s for c in channels for s in (subjects.val(c), subjects.meta(c))]
    snap = await fetch_last(nc, wanted, stream=stream)
    absent = [c for c in channels if subjects.val(c) not in snap.messages]
    if absent and args.wait > 0:
        snap.messages.update(await _ask(nc, subjects, absent, args.wait))
    await nc.close()
    missing = 0
    for channel in channels:
        raw_val = snap.messages.get(subjects.val(channel))
        raw_meta = snap.messages.get(subjects.meta(channel))
        value = decode_value(raw_val) if raw_val else None
        meta = decode_meta(raw_meta) if raw_meta else None
        missing += value is None
        if args.json:
            print(
                json.dumps({"ch": channel.uri, "value": _jsonable(value), "meta": meta})
            )
        elif value is None:
            asked = f", nor within {args.wait:g} s of asking" if args.wait > 0 else ""
            print(
                f"{channel.uri}: no value in the store{asked} (no adapter owns "
                "this channel: see docs/troubleshooting.md)"
            )
        else:
            unit = f" {meta['unit']}" if meta and meta.get("unit") else ""
            print(
                f"{channel.uri} = {format_value(value['v'])}{unit} sev={value['sev']} "
                f"{value['st']} at {_time(value['t'])}"
                f"{'' if value['c'] else ' DISCONNECTED'}"
            )
            if meta:
                print(
                    "  meta "
                    + json.dumps({k: v for k, v in meta.items() if k != "ver"})
                )
    return 1 if missing else 0


async def _ask(
    nc: Any, subjects: Subjects, channels: list[Any], wait: float
) -> dict[str, bytes]:
    """Announce demand for ``channels`` and collect their first value and
    metadata (subject -> payload): until each has a value or ``wait`` is over,
    then at most :data:`META_GRACE` more for metadata still on its way."""
    got: dict[str, bytes] = {}
    values = {subjects.val(c) for c in channels}
    metas = {subjects.meta(c) for c in channels}
    have_values, have_metas = asyncio.Event(), asyncio.Event()

    async def on_msg(msg: Any) -> None:
        got.setdefault(msg.subject, msg.data)
        values.discard(msg.subject)
        metas.discard(msg.subject)
        if not values:
            have_values.set()
        if not metas:
            have_metas.set()

    subs = []
    for channel in channels:
        for subject in (subjects.val(channel), subjects.meta(channel)):
            subs.append(await nc.subscribe(subject, cb=on_msg))
    await announce(nc, subjects, [c.uri for c in channels], "synoptic-get")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(wait):
            await have_values.wait()
        async with asyncio.timeout(min(META_GRACE, max(deadline - loop.time(), 0))):
            await have_metas.wait()
    for sub in subs:
        await sub.unsubscribe()
    return got


def parse_put_value(text: str) -> Any:
    """A put value from the command line: JSON if it parses, else the bare string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


async def cmd_put(args: argparse.Namespace) -> int:
    return await _request(args, "put", parse_put_value(args.value))


async def cmd_command(args: argparse.Namespace) -> int:
    arg = None if args.arg is None else parse_put_value(args.arg)
    return await _request(args, "cmd", arg)


async def _request(args: argparse.Namespace, kind: str, value: Any) -> int:
    """A put (or command, ``value`` None: no argument) through the owning adapter;
    prints the result (and a command's output)."""
    channel = parse_channel(args.uri)
    what = "put" if kind == "put" else "command"
    if args.gateway:
        try:
            request_via = gateway_function("request")
            reply = await request_via(args.gateway, kind, channel.uri, value,
                                      args.timeout)  # fmt: skip
        except ConnectionError as exc:
            print(f"{what} {channel.uri}: {exc}")
            return 2
        return _said(what, channel.uri, reply)
    nc = await connect(
        args.nats, name=f"synoptic-{what}", retry_on_failed_connect=False
    )
    request: dict[str, Any] = {"ver": SCHEMA_VERSION, "who": "cli",
                               "timeout": args.timeout}  # fmt: skip
    if kind == "put" or value is not None:
        request["v"] = value
    subjects = Subjects(args.prefix)
    subject = subjects.put(channel) if kind == "put" else subjects.cmd(channel)
    try:
        msg = await nc.request(subject, encode(request), timeout=args.timeout + 1)
        reply = (decode_put_reply if kind == "put" else decode_cmd_reply)(msg.data)
    except Exception as exc:  # no responder, timeout
        print(f"{what} {channel.uri}: no adapter answered ({type(exc).__name__})")
        return 2
    finally:
        await nc.close()
    return _said(what, channel.uri, reply)


def _said(what: str, uri: str, reply: dict[str, Any]) -> int:
    """Print a put or command reply; 0 if it succeeded, else 1."""
    if reply["ok"]:
        output = reply.get("v")
        print(f"{what} {uri}: ok"
              + ("" if output is None else f" → {format_value(output)}"))  # fmt: skip
        return 0
    print(f"{what} {uri}: {reply.get('err')}: {reply.get('msg', '')}")
    return 1


__all__ = ["escape_token", "format_value", "parse_put_value", "register"]
