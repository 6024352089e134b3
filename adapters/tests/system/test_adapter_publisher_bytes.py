"""The publisher's value payloads, byte for byte: the bus contract's msgpack of the
message dict (``encode_value`` is only a faster way to the same bytes), for scalar,
text, missing and array values, through a real nats-server."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import numpy as np

from synoptic_adapters.publisher import Publisher
from synoptic_bus.connect import NatsClient
from synoptic_schemas import SCHEMA_VERSION, Subjects, parse_channel
from synoptic_schemas.codec import _packer_options

SUBJECTS = Subjects()
VALUES: list[Any] = [
    0.5, -3, 2**40, True, None, "ON", "température", "x" * 300,
    np.arange(4, dtype=np.float32), [1, 2, 3], np.float64(2.25),
]  # fmt: skip


async def test_each_value_payload_is_the_contracts_msgpack(nc: NatsClient) -> None:
    channel = parse_channel("ca://PUB:BYTES")
    received: list[bytes] = []
    done = asyncio.Event()

    async def on_msg(msg: Any) -> None:
        received.append(msg.data)
        if len(received) == len(VALUES):
            done.set()

    await nc.subscribe(SUBJECTS.val(channel), cb=on_msg)
    await nc.flush()
    publisher = Publisher(nc, SUBJECTS, "bytes-test", epoch_ms=1_700_000_000_123)
    await publisher.start()
    for i, v in enumerate(VALUES):
        publisher.value(channel, v, t=1_700_000_000_000_000_000 + i, sev=i % 4, st="S")
    async with asyncio.timeout(10):
        await done.wait()
    await publisher.stop()
    for i, (v, raw) in enumerate(zip(VALUES, received, strict=True)):
        expected = {"ver": SCHEMA_VERSION, "v": v, "t": 1_700_000_000_000_000_000 + i,
                    "sev": i % 4, "st": "S", "seq": i + 1, "ep": 1_700_000_000_123,
                    "c": True}  # fmt: skip
        assert raw == msgpack.packb(expected, **_packer_options), f"value {v!r}"
