"""The consumer example in docs/bus.md runs, decodes, and detects a gap."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_schemas import Subjects, encode, parse_channel

DOC = Path(__file__).parents[1] / "bus.md"


def example_code() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## A consumer in 15 lines", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_example_is_short() -> None:
    lines = [line for line in example_code().splitlines() if line.strip()]
    assert (
        len(lines) <= 17
    )  # 15 lines of logic plus the two import groups' blank-free form


async def test_the_example_consumer_prints_values_and_gaps(
    nats_server: NatsServer, nc: NatsClient, tmp_path: Path
) -> None:
    script = tmp_path / "consumer.py"
    script.write_text(example_code(), encoding="utf-8")
    consumer = Process(
        "consumer", [sys.executable, str(script), "1000"],
        env={"SYNOPTIC_NATS_URL": nats_server.url},
    )  # fmt: skip
    try:
        channel = parse_channel("ca://DOC:EXAMPLE")
        subject = Subjects().val(channel)
        # The consumer subscribes asynchronously; publish seq 1 until it is seen.
        deadline = time.monotonic() + 30
        while (
            not consumer.output() and time.monotonic() < deadline and consumer.alive()
        ):
            await nc.publish(subject, payload(1.0, 1))
            await nc.flush()
            await nc.request(
                "$JS.API.INFO", b"", timeout=2
            )  # a round trip, not a sleep
        await nc.publish(subject, payload(2.0, 2))
        await nc.publish(subject, payload(4.0, 4))  # seq 3 is missing: a gap
        await nc.flush()
        consumer.wait_for(r"^ca://DOC:EXAMPLE 4\.0 sev 0 gap$", timeout=30)
        lines = consumer.output().splitlines()
        assert lines[-2:] == [
            "ca://DOC:EXAMPLE 2.0 sev 0 ok",
            "ca://DOC:EXAMPLE 4.0 sev 0 gap",
        ]
        assert set(lines[:-2]) == {"ca://DOC:EXAMPLE 1.0 sev 0 ok"}
    finally:
        consumer.stop()


def payload(v: float, seq: int) -> bytes:
    return encode({"ver": 1, "v": v, "t": time.time_ns(), "sev": 0, "st": "NO_ALARM",
                   "seq": seq, "ep": 7, "c": True})  # fmt: skip
