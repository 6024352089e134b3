"""The Go bus consumer of the user guide (docs/examples/go, built by `make
examples` with its modules from the Go proxy) decodes what the adapters publish:
scalars, strings, typed arrays, disconnected values, and flags a gap."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_schemas import Subjects, parse_channel
from synoptic_schemas.codec import encode_value

ROOT = Path(__file__).parents[2]
BINARY = ROOT / ".tools" / "examples" / "bustail"
GUIDE = ROOT / "docs" / "user-guide.md"


def test_the_guide_shows_the_example_as_it_is_built() -> None:
    source = (ROOT / "docs" / "examples" / "go" / "main.go").read_text(encoding="utf-8")
    guide = GUIDE.read_text(encoding="utf-8")
    assert "docs/examples/go/main.go" in guide
    for line in (
        "type Value struct {",
        "func (a *TypedArray) UnmarshalMsgpack(b []byte) error {",
    ):
        assert line in source and line in guide


async def test_the_go_consumer_decodes_the_bus(
    nats_server: NatsServer, nc: NatsClient
) -> None:
    if not BINARY.exists():
        pytest.fail(f"{BINARY.relative_to(ROOT)} is missing: run `make examples`")
    subjects = Subjects()
    sine = subjects.val(parse_channel("ca://GO:SINE"))
    wave = subjects.val(parse_channel("tango://tcs:10000/sr/d-ct/1/profile"))
    tail = Process(
        "bustail", [str(BINARY), "-n", "6", "cs.val.>"],
        env={"SYNOPTIC_NATS_URL": nats_server.url},
    )  # fmt: skip
    try:
        tail.wait_for(r"^subscribed cs\.val\.>$", timeout=30)  # live from here
        now = time.time_ns()
        for payload, subject in [
            (encode_value(1.5, now, 0, "NO_ALARM", 1, 7, True), sine),
            (encode_value(2.5, now, 1, "HIGH", 2, 7, True), sine),
            (encode_value(4.5, now, 0, "NO_ALARM", 4, 7, True), sine),  # 3 is missing
            (encode_value(None, now, 3, "IOC down", 5, 7, False), sine),
            (encode_value(np.arange(6.0).reshape(2, 3), now, 0, "", 1, 9, True), wave),
            (encode_value("hello", now, 0, "", 2, 9, True), wave),
        ]:
            await nc.publish(subject, payload)
        await nc.flush()
        tail.wait_for(r"hello sev 0 ok$", timeout=30)
        lines = tail.output().splitlines()[1:]
        assert lines == [
            f"{sine} 1.5 sev 0 ok",
            f"{sine} 2.5 sev 1 ok",
            f"{sine} 4.5 sev 0 gap",
            f"{sine} <nil> sev 3 disconnected: IOC down",
            f"{wave} array(dtype 10, shape [2 3], 48 bytes) sev 0 ok",
            f"{wave} hello sev 0 ok",
        ]
    finally:
        tail.stop()
