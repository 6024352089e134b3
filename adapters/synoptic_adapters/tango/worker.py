"""One subscription worker of a Tango adapter instance (``workers: N``).

A worker is a whole adapter (:func:`~synoptic_adapters.runner.run_adapter`: its own
NATS connection, publisher, heartbeat ``cs.hb.<instance id>-w<i>`` and epoch,
demand leases, puts) that owns only the devices the supervisor dealt to it
(:class:`~synoptic_adapters.tango.assignment.WorkerShard`). Its devices at start
come in a JSON file; devices dealt later come as requests on its control subject
(:func:`control_subject`, JSON ``{"devices": [...], "want": {"ch": [...],
"lease": s}}``, answered ``ok``), with the demand that made the supervisor deal
them. A worker does not subscribe the put subjects: the supervisor relays each put
to :func:`put_subject` (the original subject in the :data:`SUBJECT_HEADER` header)
once the worker holds the device, and the worker answers it as any adapter does
(so each put has one answer, whatever the order of a want, the hand-over and the
put). It prints one line each time every monitored attribute has a first value and
each time every event subscription is live (with the wall-clock time, for the
benchmark). It exits when its supervisor dies (``PR_SET_PDEATHSIG`` is set by the
supervisor; the parent pid is watched too).

Run by the supervisor as ``python -m synoptic_adapters.tango.worker``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from synoptic_adapters.tango.stages import stage
from synoptic_schemas import Channel, ChannelError, parse_channel
from synoptic_schemas.subjects import escape_token

log = logging.getLogger(__name__)

#: Seconds between checks of the subscription state while some is pending.
PROGRESS_PERIOD = 0.02
#: Seconds after which attributes still not live (or without a value) are
#: named in a warning (once per episode): a stuck subscription shows in the log.
STUCK_AFTER = 30.0
#: Header of a relayed put: the subject the caller sent it on.
SUBJECT_HEADER = "Synoptic-Put-Subject"


def control_subject(prefix: str, instance_id: str, worker: int) -> str:
    """The subject on which worker ``worker`` of ``instance_id`` takes devices."""
    return f"{prefix}.ctl.tango.{escape_token(instance_id)}.{worker}"


def put_subject(prefix: str, instance_id: str, worker: int) -> str:
    """The subject on which worker ``worker`` of ``instance_id`` gets relayed puts."""
    return f"{control_subject(prefix, instance_id, worker)}.put"


def worker_id(instance_id: str, worker: int) -> str:
    """Adapter id of worker ``worker`` (its heartbeat subject and NATS name)."""
    return f"{instance_id}-w{worker}"


def _parse(uris: list[str]) -> list[Channel]:
    channels = []
    for uri in uris:
        try:
            channels.append(parse_channel(uri))
        except ChannelError as exc:
            log.warning("control: %s", exc)
    return channels


class Progress:
    """Watches the source: prints when every attribute has a first value and
    when every event subscription is live (again)."""

    def __init__(self, source: Any, name: str) -> None:
        self.source = source
        self.name = name

    async def run(self) -> None:
        from synoptic_adapters.tango.device import Events

        def no_value(a: Any) -> bool:
            return a.last is None and not a.status

        def pending(a: Any) -> bool:  # a missing attribute is done once reported
            return a.events is Events.PENDING and (a.exists or not a.status)

        size = 0
        since = time.monotonic()  # the last time something got done
        warned = False
        waiting: dict[str, list[Any]] = {"values": [], "live": []}
        checks = {"values": no_value, "live": pending}
        stuck_what = {"values": "without a value", "live": "not live"}
        said = {
            "values": "first value of every attribute",
            "live": "every event subscription live",
        }
        while True:
            links = list(self.source.links.values())
            count = sum(len(link.attrs) for link in links)
            if count != size:  # attributes added or released: look at all again
                size, since, warned = count, time.monotonic(), False
                attrs = [a for link in links for a in link.attrs.values()]
                for key, check in checks.items():
                    waiting[key] = [a for a in attrs if check(a)]
                    if not waiting[key]:
                        self._say(said[key], size)
            for key, check in checks.items():
                if waiting[key]:  # only those not done at the last look
                    before = len(waiting[key])
                    waiting[key] = [a for a in waiting[key] if check(a)]
                    if len(waiting[key]) != before:
                        since, warned = time.monotonic(), False
                    if not waiting[key]:
                        self._say(said[key], size)
            busy = any(waiting.values())
            if busy and not warned and time.monotonic() - since > STUCK_AFTER:
                warned = True
                for key, stuck in waiting.items():
                    if stuck:
                        log.warning(
                            "worker %s: %d attributes still %s %.0f s after the "
                            "last progress, e.g. %s",
                            self.name, len(stuck), stuck_what[key], STUCK_AFTER,
                            ", ".join(f"{a.channel.uri} ({a.events.value}, "
                                      f"{a.status or 'no status'})"
                                      for a in stuck[:3]),
                        )  # fmt: skip
            await asyncio.sleep(PROGRESS_PERIOD if busy else 0.2)

    def _say(self, what: str, count: int) -> None:
        if not count:
            return
        print(
            f"tango worker {self.name}: {what} ({count} attributes) "
            f"at {time.time():.3f}",
            flush=True,
        )


async def serve(args: argparse.Namespace) -> int:
    """Run the worker adapter until SIGTERM."""
    from synoptic_adapters.config import load_config
    from synoptic_adapters.runner import Adapter, run_adapter
    from synoptic_adapters.sharding import Shard
    from synoptic_adapters.tango.assignment import WorkerShard
    from synoptic_adapters.tango.settings import TangoSettings, skip_pytango_telemetry

    skip_pytango_telemetry()  # before tango is imported
    from synoptic_adapters.tango.source import TangoSource

    config = load_config(args.config, "tango")
    if args.nats:
        config.nats_url = args.nats
    if config.metrics_port:  # one port per worker: base + 1 + index
        config.metrics_port += 1 + args.worker
    answers_puts, config.put_enabled = config.put_enabled, False  # relayed only
    settings = TangoSettings.from_section(config.section("tango"))
    parent = Shard.parse(args.shard)
    shard = WorkerShard(
        parent.index, parent.count, args.worker, args.workers,
        set(args.device_list),
    )  # fmt: skip
    source = TangoSource(settings)
    name = worker_id(args.instance, args.worker)
    parent_pid = os.getppid()
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def on_control(msg: Any) -> None:
        adapter = on_control.adapter  # type: ignore[attr-defined]
        try:
            request = json.loads(msg.data)
            shard.devices.update(request.get("devices", []))
            if request.get("want"):
                stage("control_want", name)
        except (ValueError, TypeError) as exc:
            log.warning("control: bad request: %s", exc)
            return
        if msg.reply:
            await adapter.nc.publish(msg.reply, b"ok")
        want = request.get("want")
        if want and adapter.demand is not None:
            channels = [c for c in _parse(want["ch"]) if shard.owns(c)]
            await adapter.demand.want(channels, float(want["lease"]))

    async def on_relayed_put(msg: Any) -> None:
        adapter = on_control.adapter  # type: ignore[attr-defined]
        subject = (msg.headers or {}).get(SUBJECT_HEADER)
        if not subject or not msg.reply:
            return
        msg.subject, msg.headers = subject, None  # as if sent there
        await adapter.handle_put(msg)  # the adapter's own put path (runner)

    async def on_ready(adapter: Adapter) -> None:
        on_control.adapter = adapter  # type: ignore[attr-defined]
        assert adapter.nc is not None
        subject = control_subject(config.prefix, args.instance, args.worker)
        await adapter.nc.subscribe(subject, cb=on_control)
        if answers_puts:
            relayed = put_subject(config.prefix, args.instance, args.worker)
            await adapter.nc.subscribe(relayed, cb=on_relayed_put)
        await adapter.nc.flush()
        tasks.append(asyncio.create_task(Progress(source, name).run()))
        tasks.append(asyncio.create_task(orphan_watch()))

    async def orphan_watch() -> None:
        while True:
            await asyncio.sleep(0.5)
            if os.getppid() != parent_pid:
                break
        log.warning("worker %s: supervisor gone; stopping", name)
        stop.set()

    try:
        return await run_adapter(
            source, config, shard=shard, adapter_id=name, stop=stop,
            on_ready=on_ready, epoch_ms=args.epoch,
        )  # fmt: skip
    finally:
        for task in tasks:
            task.cancel()


def main(argv: list[str] | None = None) -> int:
    """Entry point of a worker process (see the module docstring)."""
    import uvloop

    parser = argparse.ArgumentParser(description="Tango adapter subscription worker")
    parser.add_argument("--config", required=True)
    parser.add_argument("--nats")
    parser.add_argument("--shard", default="0/1")
    parser.add_argument("--instance", required=True, help="adapter instance id")
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--devices", required=True, help="JSON file: devices")
    parser.add_argument(
        "--epoch",
        type=int,
        help="its epoch in ms (the supervisor's, distinct per worker)",
    )
    args = parser.parse_args(argv)
    args.device_list = json.loads(Path(args.devices).read_text())
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s %(levelname)s w{args.worker} %(name)s: %(message)s",
        stream=sys.stderr,
    )
    code = uvloop.run(serve(args))
    # as `synoptic adapter tango`: no cppTango teardown (decision 0010)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
