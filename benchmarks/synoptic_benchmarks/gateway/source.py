"""The source of the gateway benchmark: N counting channels at 10 Hz on NATS, from
a soft IOC read by the EPICS adapter, or from a synthetic publisher that writes
the adapters' value messages straight to NATS (``fanout publish``)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from synoptic_bus.procs import Process, free_udp_tcp_port
from synoptic_gateway.testing import ca_env

RATE_HZ = 10.0
#: The synthetic publisher writes after every this many encoded records of a tick,
#: as the adapters' ``Publisher`` does: it hands each encoded record to nats-py and
#: yields to the loop every 2000 (``publisher._YIELD_EVERY``), when nats-py's
#: flusher writes what is pending. (0: one write after encoding the whole tick.)
PUBLISH_CHUNK = 2000


def synoptic_command() -> str:
    beside = Path(sys.executable).parent / "synoptic"
    return str(beside) if beside.exists() else "synoptic"


def has_adapters() -> bool:
    """Whether the adapters package (``synoptic sim ioc``, ``synoptic adapter
    epics``) is installed."""
    from importlib.util import find_spec

    return find_spec("synoptic_adapters") is not None


class Source:
    """The processes that put N counting channels at 10 Hz on NATS."""

    def __init__(
        self,
        kind: str,
        records: int,
        nats_url: str,
        workdir: Path,
        chunk: int = PUBLISH_CHUNK,
        storage: str = "memory",
    ) -> None:
        self.kind = kind
        self.records = records
        self.procs: dict[str, Process] = {}
        prefix = "BENCH:"
        width = max(5, len(str(records - 1)))
        self.uris = [f"ca://{prefix}CNT:{i:0{width}d}" for i in range(records)]
        if kind == "synthetic":
            argv = [sys.executable, "-m", "synoptic_benchmarks.gateway.fanout", "publish",
                    "--nats", nats_url, "--records", str(records),
                    "--chunk", str(chunk), "--storage", storage]  # fmt: skip
            self.procs["publisher"] = Process("publisher", argv)
            self.procs["publisher"].wait_for(r"publisher ready", 30)
            return
        port = free_udp_tcp_port()
        env = ca_env(port)
        ioc = [synoptic_command(), "sim", "ioc", "--records", str(records), "--rate", "10",
               "--prefix", prefix, "--port", str(port), "--no-extras"]  # fmt: skip
        self.procs["ioc"] = Process("ioc", ioc, env=env, keep_stdin_open=True)
        self.procs["ioc"].wait_for(r"sim ioc ready", 60)
        config = workdir / f"adapter-{records}.yaml"
        lines = ["id: bench-epics", "nats:", f"  url: {nats_url}",
                 f"  storage: {storage}", "channels:"]  # fmt: skip
        config.write_text("\n".join(lines + [f"  - {u}" for u in self.uris]) + "\n")
        adapter = [synoptic_command(), "adapter", "epics", "--config", str(config)]
        self.procs["adapter"] = Process("adapter", adapter, env=env)
        self.procs["adapter"].wait_for(r"adapter \S+ ready", 120)

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            proc.stop()


async def publish(
    nats_url: str, records: int, chunk: int = PUBLISH_CHUNK, storage: str = "memory"
) -> None:
    """The synthetic source: N counters, all published every 100 ms.

    Each tick is one IOC scan: one time stamp ``t`` for all N records, taken before
    the first is encoded. Speaks the NATS text protocol on a plain socket and writes
    the PUBs of every ``chunk`` records in one call (~10x less CPU than a publish
    call per message), so that the source, not the gateway, is never what saturates
    on a small machine; ``chunk`` 0 writes the whole tick at once."""
    from urllib.parse import urlparse

    from synoptic_bus.connect import connect
    from synoptic_bus.store import StoreConfig, ensure_store
    from synoptic_schemas import Subjects, encode, parse_channel
    from synoptic_schemas.codec import encode_value

    nc = await connect(nats_url, name="bench-publisher")
    await ensure_store(nc, StoreConfig(storage=storage))  # as an adapter does
    await nc.close()
    url = urlparse(nats_url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    await reader.readline()  # INFO
    writer.write(
        b'CONNECT {"verbose":false,"pedantic":false,"name":"bench-pub"}\r\nPING\r\n'
    )
    while not (await reader.readline()).startswith(b"PONG"):
        pass

    async def answer_pings() -> None:
        while line := await reader.readline():
            if line.startswith(b"PING"):
                writer.write(b"PONG\r\n")

    pinger = asyncio.create_task(answer_pings())
    subjects = Subjects()
    width = max(5, len(str(records - 1)))
    names = [subjects.val(parse_channel(f"ca://BENCH:CNT:{i:0{width}d}")).encode()
             for i in range(records)]  # fmt: skip
    ep = int(time.time() * 1000)
    hb_subject = subjects.hb("bench-publisher").encode()
    print("publisher ready", flush=True)
    seq = 0
    next_tick = time.monotonic()
    first_ms: list[float] = []  # per tick: stamp -> first write, stamp -> last
    last_ms: list[float] = []
    while not pinger.done():
        seq += 1
        t = time.time_ns()
        parts = []
        every = chunk or records + 1
        if seq % int(RATE_HZ) == 1:  # a heartbeat a second, as an adapter sends
            beat = encode({"ver": 1, "id": "bench-publisher", "proto": "ca", "ep": ep,
                           "t": t, "period": 1.0, "n": records, "conn": records})  # fmt: skip
            parts.append(b"PUB %s %d\r\n%s\r\n" % (hb_subject, len(beat), beat))
        for n, subject in enumerate(names, 1):
            # the adapters' own encoder (synoptic_adapters.publisher)
            payload = encode_value(float(seq), t, 0, "NO_ALARM", seq, ep, True)
            parts.append(b"PUB %s %d\r\n%s\r\n" % (subject, len(payload), payload))
            if n == every:
                writer.write(b"".join(parts))
                parts.clear()
                every += chunk
                if len(first_ms) < len(last_ms) + 1:
                    first_ms.append((time.time_ns() - t) / 1e6)
        if parts:
            writer.write(b"".join(parts))
        last_ms.append((time.time_ns() - t) / 1e6)
        if len(first_ms) < len(last_ms):
            first_ms.append(last_ms[-1])
        if len(last_ms) == int(RATE_HZ):  # one line a second, for the runner
            print("publisher ticks " + json.dumps({"at": t / 1e9, "first_ms": first_ms,
                  "last_ms": last_ms}), flush=True)  # fmt: skip
            first_ms, last_ms = [], []
        await writer.drain()
        next_tick += 1 / RATE_HZ
        await asyncio.sleep(max(0.0, next_tick - time.monotonic()))


def publisher_stages(source: Source, start: float, end: float) -> dict[str, Any]:
    """Stamp -> first / last write of the synthetic publisher's ticks in [start,
    end) (ms, p50 and max): the source's own share of a burst's latency."""
    proc = source.procs.get("publisher")
    if proc is None:
        return {}
    first: list[float] = []
    last: list[float] = []
    for line in proc.output().splitlines():
        if line.startswith("publisher ticks "):
            ticks = json.loads(line.removeprefix("publisher ticks "))
            if start <= ticks["at"] < end:
                first += ticks["first_ms"]
                last += ticks["last_ms"]
    if not last:
        return {}
    return {
        "first_write_ms": {"p50": round(float(np.median(first)), 2),
                           "max": round(max(first), 2)},
        "last_write_ms": {"p50": round(float(np.median(last)), 2),
                          "max": round(max(last), 2)},
    }  # fmt: skip
