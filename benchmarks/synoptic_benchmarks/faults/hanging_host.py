"""A hanging Tango host beside ten healthy devices: their first values.

One ``synoptic sim tango`` server with ten devices (``sim/test/1`` … ``10``), and
a loopback listener that accepts connections and never answers (a host that
drops packets looks the same to omniORB), named first in the adapter's
configuration as a device server without a database. ``synoptic adapter tango``
monitors two attributes of each of the eleven devices: seconds from its ready
line to the first value of each healthy device (p50 and max), and what the
silent device's channels said (and what a healthy device without a value said,
if any).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from synoptic_adapters.sim.tango_command import READY
from synoptic_adapters.testing import SIM, synoptic_command
from synoptic_bus.connect import connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_port
from synoptic_schemas import Subjects, decode_value

DEVICES = 10
ATTRIBUTES = ("double", "long")


async def hanging_host(devices: int = DEVICES) -> dict[str, Any]:
    """The case above, once."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    silent = await asyncio.start_server(hold, "127.0.0.1", 0)
    silent_host = f"127.0.0.1:{silent.sockets[0].getsockname()[1]}"
    port = free_port()
    host = f"127.0.0.1:{port}"
    sim = Process("sim-tango", [*SIM, "tango", "--port", str(port), "--rate", "10",
                                "--devices", str(devices)])  # fmt: skip
    first: dict[str, float] = {}
    last: dict[str, dict[str, Any]] = {}
    subjects = Subjects()
    try:
        with tempfile.TemporaryDirectory(prefix="synoptic-bench-hang-") as tmp:
            nats = NatsServer(store_dir=Path(tmp) / "js").start()
            nc = await connect(nats.url, name="bench-hang")

            async def on_msg(msg: Any) -> None:
                _, channel = subjects.parse(msg.subject)
                value = decode_value(msg.data)
                last[channel.uri] = dict(value)
                if value["c"] and value["v"] is not None:
                    first.setdefault(channel.tango_device, time.time())

            await nc.subscribe("cs.val.tango.>", cb=on_msg)
            await nc.flush()
            hanging = [f"tango://{silent_host}/sim/hang/1/{a}" for a in ATTRIBUTES]
            healthy = [f"tango://{host}/sim/test/{d}/{a}"
                       for d in range(1, devices + 1) for a in ATTRIBUTES]  # fmt: skip
            config = {
                "id": "bench-faults-hang", "nats": {"url": nats.url},
                "channels": hanging + healthy,
                "tango": {"no_database_hosts": [silent_host, host]},
            }  # fmt: skip
            path = Path(tmp) / "adapter.yaml"
            path.write_text(json.dumps(config))  # JSON is YAML
            adapter = Process(
                "bench-hang-adapter",
                [synoptic_command(), "adapter", "tango", "--config", str(path)],
            )
            try:
                await asyncio.to_thread(sim.wait_for, READY, 60)
                await asyncio.to_thread(adapter.wait_for, r"adapter \S+ ready", 60)
                ready = time.time()
                wanted = {f"{host}/sim/test/{d}" for d in range(1, devices + 1)}
                deadline = time.monotonic() + 60
                while not wanted <= first.keys() and time.monotonic() < deadline:  # noqa: ASYNC110 - a tap's dict
                    await asyncio.sleep(0.05)
                await asyncio.sleep(3.0)  # what the silent device says meanwhile
                times = sorted(first[d] - ready for d in wanted if d in first)
                said = {uri: last.get(uri, {}).get("st") for uri in hanging[:1]}
                not_valued = {  # what a healthy device without a value said
                    uri: last.get(uri, {}).get("st")
                    for uri in healthy
                    if uri.rsplit("/", 1)[0].removeprefix("tango://") not in first
                }
            finally:
                adapter.stop()
                await nc.close()
                nats.close()
    finally:
        sim.stop()
        silent.close()
        for writer in held:
            writer.close()
    return {
        "healthy_devices": devices,
        "valued_devices": len(times),
        "first_values_p50_s": round(statistics.median(times), 2) if times else None,
        "first_values_max_s": round(times[-1], 2) if times else None,
        "hanging_device_status": said,
        "not_valued_status": not_valued,
    }
