"""``synoptic alarms …``: run the alarm service; read and write the alarm tree;
import a Phoebus alarm configuration; list alarms; acknowledge and shelve.

``run`` prints ``alarm service <id> ready`` once it follows the bus.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import signal
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from synoptic_alarms.service import AlarmService
from synoptic_alarms.settings import AlarmSettings
from synoptic_bus.alarmstore import AlarmStreams
from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.connect import connect, nats_url
from synoptic_bus.screens import ConflictError, StoreUnavailableError
from synoptic_bus.store import fetch_last, stream_subjects
from synoptic_importer.phoebus_alarms import AlarmImportError, import_phoebus_alarms
from synoptic_schemas import SCHEMA_VERSION, DecodeError, Subjects, encode
from synoptic_schemas.alarms import decode_alarm, decode_alarm_reply, is_active
from synoptic_schemas.alarmtree import (
    DEFAULT_BUCKET,
    AlarmTreeError,
    dump_tree_file,
    parse_tree_file,
)
from synoptic_schemas.subjects import DEFAULT_PREFIX

log = logging.getLogger(__name__)
SEVERITIES = ("NONE", "MINOR", "MAJOR", "INVALID")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``synoptic alarms`` to the ``synoptic`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--nats", default=None, help="NATS URL ($SYNOPTIC_NATS_URL)")
    common.add_argument("--prefix", default=DEFAULT_PREFIX, help="subject prefix")
    common.add_argument("--bucket", default=DEFAULT_BUCKET, help="the tree's bucket")
    alarms = sub.add_parser("alarms", help="the alarm service and the alarm tree")
    cmds = alarms.add_subparsers(
        dest="alarms_command", required=True, metavar="COMMAND"
    )

    run = cmds.add_parser("run", parents=[common], help="run the alarm service")
    run.add_argument("--id", default="alarms", help="this instance's name")
    run.add_argument(
        "--tree", type=Path, help="tree file (YAML/JSON) to seed an empty bucket"
    )
    run.add_argument("--storage", choices=["file", "memory"], default="file",
                     help="storage of the alarm streams and the tree's bucket")  # fmt: skip
    run.add_argument("--replicas", type=int, default=1,
                     help="replicas of the alarm streams and the tree's bucket")  # fmt: skip
    run.add_argument("--metrics-port", type=int, default=0,
                     help="serve Prometheus /metrics on this port (0: none)")  # fmt: skip
    run.add_argument("--no-data-after", type=float, default=15.0,
                     help="seconds before a listed channel nothing is heard of shows no data")  # fmt: skip
    run.set_defaults(func=run_on_uvloop)

    tree = cmds.add_parser("tree", help="the alarm tree").add_subparsers(
        dest="tree_command", required=True, metavar="ACTION"
    )
    get = tree.add_parser("get", parents=[common], help="print the tree as YAML")
    get.set_defaults(func=cmd_tree_get)
    put = tree.add_parser("put", parents=[common], help="write a tree file (YAML/JSON)")
    put.add_argument("file", type=Path, help="the tree file")
    put.add_argument("--summary", default="",
                     help="what changed (default: from FILE)")  # fmt: skip
    put.add_argument("--who", default="cli", help="the author of the revision")
    put.set_defaults(func=cmd_tree_put)
    imp = tree.add_parser(
        "import", parents=[common], help="convert a Phoebus alarm configuration (XML)"
    )
    imp.add_argument("file", type=Path, help="the Phoebus alarm configuration")
    imp.add_argument("--put", action="store_true", help="write it to the bus too")
    imp.add_argument("--out", type=Path, help="write it as YAML to this file")
    imp.add_argument("--who", default="cli", help="the author of the revision (--put)")
    imp.set_defaults(func=cmd_tree_import)

    lst = cmds.add_parser("list", parents=[common], help="the active alarms")
    lst.add_argument("--json", action="store_true", help="one JSON state a line")
    lst.set_defaults(func=cmd_list)

    for op, text in (("ack", "acknowledge"), ("unack", "unacknowledge"),
                     ("shelve", "shelve"), ("unshelve", "unshelve")):  # fmt: skip
        req = cmds.add_parser(op, parents=[common], help=f"{text} alarms")
        req.add_argument("uris", nargs="+", metavar="URI", help="the alarms' channels")
        req.add_argument("--who", required=True, help="the person it is done for")
        if op == "shelve":
            req.add_argument("--why", required=True, help="the reason, audited")
            req.add_argument("--minutes", type=float, required=True,
                             help="how long it stays shelved")  # fmt: skip
        req.set_defaults(func=cmd_request, op=op)


def run_on_uvloop(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """:func:`cmd_run` on uvloop (the ``synoptic`` command runs the coroutine)."""
    import uvloop

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return cmd_run(args)


async def cmd_run(args: argparse.Namespace) -> int:
    settings = AlarmSettings(
        nats_url=nats_url(args.nats), prefix=args.prefix, id=args.id,
        tree_bucket=args.bucket, tree_file=args.tree, storage=args.storage,
        replicas=args.replicas, metrics_port=args.metrics_port,
        no_data_after=args.no_data_after,
    )  # fmt: skip
    service: AlarmService | None = None

    async def reconnected() -> None:
        if service is not None:
            service.on_reconnect()

    nc = await connect(settings.nats_url, name=f"synoptic-alarms-{settings.id}",
                       on_reconnect=reconnected)  # fmt: skip
    service = AlarmService(nc, settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await service.start()
    if settings.metrics_port:
        from synoptic_alarms.metrics import serve_metrics

        serve_metrics(service, settings.metrics_port, settings.metrics_addr)
    ready = asyncio.create_task(service.ready.wait())
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if service.ready.is_set():
        # The alarms, the tree's index and what the start read live as long as the
        # process: out of the collector's sight, a full collection no longer walks
        # the ~10^6 objects of 100 000 alarms (~100 ms on a quiet core, during
        # which no acknowledgement is served).
        gc.collect()
        gc.freeze()
        print(f"alarm service {settings.id} ready: {len(service.alarms)} alarms, "
              f"tree revision {service.index.revision}", flush=True)  # fmt: skip
        await stop.wait()
    ready.cancel()
    await service.stop()
    await nc.close()
    return 0


async def _store(args: argparse.Namespace) -> tuple[Any, TreeStore]:
    nc = await connect(nats_url(args.nats), name="synoptic-cli",
                       retry_on_failed_connect=False)  # fmt: skip
    return nc, await TreeStore.ensure(nc, TreeStoreConfig(args.bucket))


async def cmd_tree_get(args: argparse.Namespace) -> int:
    nc, store = await _store(args)
    try:
        entry = await store.latest()
    finally:
        await nc.close()
    if entry.tree is None:
        print("no alarm tree yet", file=sys.stderr)
        return 1
    print(f"# alarm tree revision {entry.revision}, saved by {entry.rev.by or '?'} "
          f"at {entry.rev.at or '?'}")  # fmt: skip
    sys.stdout.write(dump_tree_file(entry.tree))
    return 0


async def _put(args: argparse.Namespace, tree: dict[str, Any], summary: str) -> int:
    nc, store = await _store(args)
    try:
        current = await store.latest()
        entry = await store.put(tree, current.revision, args.who, summary)
    except (ConflictError, StoreUnavailableError, AlarmTreeError) as exc:
        print(f"not written: {exc}", file=sys.stderr)
        return 1
    finally:
        await nc.close()
    print(f"alarm tree revision {entry.revision} written")
    return 0


async def cmd_tree_put(args: argparse.Namespace) -> int:
    try:
        tree = parse_tree_file(args.file.read_bytes())
    except AlarmTreeError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    return await _put(args, tree, args.summary or f"from {args.file.name}")


async def cmd_tree_import(args: argparse.Namespace) -> int:
    try:
        tree, report = import_phoebus_alarms(args.file.read_bytes(), args.file.name)
    except (AlarmImportError, OSError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(report.text(), file=sys.stderr)
    if args.out:
        args.out.write_text(dump_tree_file(tree), encoding="utf-8")
    if args.put:
        return await _put(args, tree, f"imported from {args.file.name}")
    if not args.out:
        sys.stdout.write(dump_tree_file(tree))
    return 0


async def cmd_list(args: argparse.Namespace) -> int:
    nc = await connect(nats_url(args.nats), name="synoptic-cli",
                       retry_on_failed_connect=False)  # fmt: skip
    subjects = Subjects(args.prefix)
    stream = AlarmStreams(args.prefix).alarm_stream
    try:
        names = await stream_subjects(nc, stream, subjects.alarms())
        snap = await fetch_last(nc, names, stream=stream, timeout=60)
    finally:
        await nc.close()
    states = []
    for data in snap.messages.values():
        try:
            state = decode_alarm(data)
        except DecodeError:
            continue
        if is_active(state):
            states.append(state)
    states.sort(key=lambda s: (-s["lat"], -s["since"]))
    for s in states:
        if args.json:
            print(json.dumps(s))
            continue
        flags = ("ACK " if s["ackd"] else "    ") + ("SHELVED " if "shelf" in s else "")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s["since"] / 1e9))
        print(f"{SEVERITIES[s['lat']]:<8}{flags}{since}  {s['ch']}  "
              f"({s['area']}; now {SEVERITIES[s['sev']]} {s['st']})")  # fmt: skip
    return 0


async def cmd_request(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"ver": SCHEMA_VERSION, "op": args.op, "ch": args.uris,
                            "who": args.who, "by": "cli"}  # fmt: skip
    if args.op == "shelve":
        body["why"] = args.why
        body["until"] = time.time_ns() + int(args.minutes * 60e9)
    nc = await connect(nats_url(args.nats), name="synoptic-cli",
                       retry_on_failed_connect=False)  # fmt: skip
    try:
        reply = await nc.request(Subjects(args.prefix).alarm_request(), encode(body),
                                 timeout=10)  # fmt: skip
        answer = decode_alarm_reply(reply.data)
    except Exception as exc:
        print(f"no answer from the alarm service: {exc}", file=sys.stderr)
        return 1
    finally:
        await nc.close()
    print(json.dumps(answer))
    return 0 if answer["ok"] else 1
