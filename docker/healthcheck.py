"""Container health probes for the Synoptic images (Docker HEALTHCHECK, compose).

One probe per kind of process, each bounded by ``--timeout`` seconds, exit
status 0 when healthy and 1 (with the reason on stderr) when not:

- ``http URL``: the URL answers 2xx (the gateway's ``/readyz``).
- ``heartbeat``: the adapter named by ``SYNOPTIC_ADAPTER_ID`` publishes a valid
  heartbeat on ``<prefix>.hb.<id>`` at ``SYNOPTIC_NATS_URL`` (so "healthy" means
  running *and* connected to NATS, not merely a live PID).
- ``stream``: the last-value stream of ``SYNOPTIC_SUBJECT_PREFIX`` exists at
  ``SYNOPTIC_NATS_URL`` (an adapter's init container waits on it, so adapters
  never create it themselves with the wrong storage or replicas).
- ``blocks``: the growing-block stream (``synoptic rollup``) exists and, once it
  holds blocks, got one within the last 30 s (the rollup republishes every
  channel's growing block at least every 10 s).
- ``alarms``: the alarm service (``synoptic alarms run``) publishes a valid
  heartbeat on ``<prefix>.alarm.hb`` (running, connected, following the tree).
- ``archive``: the HDB++ database at ``SYNOPTIC_ARCHIVE_DSN`` answers and holds
  the HDB++ tables (the archiver's; its init step creates them).
- ``ca PV``: a Channel Access read of PV on this host answers (the soft IOC).
- ``pva PV``: a PV Access read of PV on this host answers (the simulated server).
- ``tango DEVICE``: the Tango device answers a ping (the device server).

Environment: ``SYNOPTIC_NATS_URL`` (default ``nats://nats:4222``),
``SYNOPTIC_ADAPTER_ID``, ``SYNOPTIC_SUBJECT_PREFIX`` (default ``cs``),
``SYNOPTIC_ARCHIVE_DSN``.
``--wait SECONDS`` retries a failing probe until it passes or the time is up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.request


def probe_http(url: str, timeout: float) -> None:
    """Raise unless ``url`` answers with a 2xx status within ``timeout`` s."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        if not 200 <= response.status < 300:
            raise RuntimeError(f"{url}: HTTP {response.status}")


async def probe_heartbeat(
    url: str, adapter_id: str, prefix: str, timeout: float
) -> None:
    """Raise unless a decodable heartbeat of ``adapter_id`` arrives in time."""
    import nats

    from synoptic_schemas import Subjects, decode_heartbeat

    subject = Subjects(prefix).hb(adapter_id)
    nc = await nats.connect(
        url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0
    )
    try:
        sub = await nc.subscribe(subject, max_msgs=1)
        msg = await sub.next_msg(timeout=timeout)
        beat = decode_heartbeat(msg.data)
        if beat["id"] != adapter_id:
            raise RuntimeError(f"{subject}: heartbeat names {beat['id']!r}")
    finally:
        await nc.close()


async def probe_alarms(url: str, prefix: str, timeout: float) -> None:
    """Raise unless the alarm service's heartbeat arrives in time."""
    import nats

    from synoptic_schemas import Subjects, decode

    nc = await nats.connect(
        url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0
    )
    try:
        sub = await nc.subscribe(Subjects(prefix).alarm_heartbeat(), max_msgs=1)
        beat = decode((await sub.next_msg(timeout=timeout)).data)
        if not isinstance(beat.get("id"), str):
            raise RuntimeError("the alarm heartbeat names no service")
    finally:
        await nc.close()


async def probe_stream(url: str, prefix: str, timeout: float) -> None:
    """Raise unless the last-value stream of ``prefix`` exists."""
    import nats

    from synoptic_bus.store import stream_name

    nc = await nats.connect(
        url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0
    )
    try:
        await nc.jetstream(timeout=timeout).stream_info(stream_name(prefix))
    finally:
        await nc.close()


async def probe_blocks(url: str, prefix: str, timeout: float) -> None:
    """Raise unless the growing-block stream of ``prefix`` exists and is being
    written."""
    import nats

    from synoptic_bus.history import parse_rfc3339
    from synoptic_bus.rollup import open_stream_name

    nc = await nats.connect(
        url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0
    )
    try:
        reply = await nc.request(
            f"$JS.API.STREAM.INFO.{open_stream_name(prefix)}", b"", timeout=timeout
        )
    finally:
        await nc.close()
    info = json.loads(reply.data)
    if "error" in info:
        raise RuntimeError(info["error"].get("description", "no block stream"))
    state = info.get("state", {})
    if state.get("messages"):
        age = time.time() - parse_rfc3339(state["last_ts"]) / 1e9
        if age > 30:
            raise RuntimeError(f"no history block written for {age:.0f} s")


def probe_archive(dsn: str, timeout: float) -> None:
    """Raise unless the database at ``dsn`` answers and has the HDB++ tables."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=max(1, round(timeout))) as conn:
        found = conn.execute("SELECT to_regclass('att_conf')").fetchone()
        if found is None or found[0] is None:
            raise RuntimeError("no HDB++ tables (att_conf) in the archive database")


async def probe_ca(pv: str, timeout: float) -> None:
    """Raise unless the local IOC answers a read of ``pv`` in time."""
    os.environ.setdefault("EPICS_CA_ADDR_LIST", "127.0.0.1")
    os.environ["EPICS_CA_AUTO_ADDR_LIST"] = "NO"
    from aioca import caget

    await caget(pv, timeout=timeout)


def probe_pva(pv: str, timeout: float) -> None:
    """Raise unless the local PV Access server answers a read of ``pv`` in time
    (its port from ``EPICS_PVA_SERVER_PORT``, default 5075)."""
    from p4p.client.thread import Context

    port = os.environ.get("EPICS_PVA_SERVER_PORT", "5075")
    conf = {"EPICS_PVA_NAME_SERVERS": f"127.0.0.1:{port}",
            "EPICS_PVA_AUTO_ADDR_LIST": "NO", "EPICS_PVA_ADDR_LIST": ""}  # fmt: skip
    with Context("pva", conf=conf, useenv=False) as ctx:
        ctx.get(pv, timeout=timeout)


def probe_tango(device: str) -> None:
    """Raise unless the Tango device answers a ping."""
    import tango

    tango.DeviceProxy(device).ping()


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds")
    parser.add_argument("--wait", type=float, default=0.0, help="retry for seconds")
    sub = parser.add_subparsers(dest="kind", required=True)
    sub.add_parser("http").add_argument("url")
    sub.add_parser("heartbeat")
    sub.add_parser("stream")
    sub.add_parser("blocks")
    sub.add_parser("alarms")
    sub.add_parser("archive")
    sub.add_parser("ca").add_argument("pv")
    sub.add_parser("pva").add_argument("pv")
    sub.add_parser("tango").add_argument("device")
    return parser


def run_probe(args: argparse.Namespace) -> None:
    """Run the chosen probe once; raise when unhealthy."""
    url = os.environ.get("SYNOPTIC_NATS_URL", "nats://nats:4222")
    prefix = os.environ.get("SYNOPTIC_SUBJECT_PREFIX", "cs")
    if args.kind == "http":
        probe_http(args.url, args.timeout)
    elif args.kind == "heartbeat":
        adapter_id = os.environ.get("SYNOPTIC_ADAPTER_ID", "")
        if not adapter_id:
            raise RuntimeError("SYNOPTIC_ADAPTER_ID is not set")
        asyncio.run(probe_heartbeat(url, adapter_id, prefix, args.timeout))
    elif args.kind == "stream":
        asyncio.run(probe_stream(url, prefix, args.timeout))
    elif args.kind == "blocks":
        asyncio.run(probe_blocks(url, prefix, args.timeout))
    elif args.kind == "alarms":
        asyncio.run(probe_alarms(url, prefix, args.timeout))
    elif args.kind == "archive":
        dsn = os.environ.get("SYNOPTIC_ARCHIVE_DSN", "")
        if not dsn:
            raise RuntimeError("SYNOPTIC_ARCHIVE_DSN is not set")
        probe_archive(dsn, args.timeout)
    elif args.kind == "ca":
        asyncio.run(probe_ca(args.pv, args.timeout))
    elif args.kind == "pva":
        probe_pva(args.pv, args.timeout)
    else:
        probe_tango(args.device)


def main(argv: list[str] | None = None) -> int:
    """Run one probe; 0 healthy, 1 unhealthy (reason on stderr)."""
    args = build_parser().parse_args(argv)
    deadline = time.monotonic() + args.wait
    while True:
        try:
            run_probe(args)
        except Exception as exc:  # any failure is "unhealthy", with its reason
            print(f"unhealthy: {type(exc).__name__}: {exc}", file=sys.stderr)
            if time.monotonic() >= deadline:
                return 1
            time.sleep(1.0)
        else:
            return 0


if __name__ == "__main__":
    sys.exit(main())
