"""Arrays and images at a moment and in a playback at the resolution a widget
draws them (``at.pts``, ``play.pts``), through a real gateway against a real
nats-server with the bus's history streams and the rollup: a 10 000-point
waveform and a 1024 × 1024 16-bit image (the demo's) kept in ``CS_ARRAYS``. With
``pts`` the ``at`` answer holds the waveform's min/max envelope (``x``, ``n``,
each bucket's extremes the full array's) and the image binned by maximum
(``bin``, ``n``); a scalar and a short waveform come as they are; without
``pts`` the full values. A ``play`` with ``pts`` sends every array of its ``pb``
frames reduced the same way, one without sends them whole."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest
from nats.js.api import DeliverPolicy

from synoptic_bus.arrays import arrays_stream_name
from synoptic_bus.connect import NatsClient
from synoptic_bus.procs import Process
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import Changes, GatewayProc, Publisher
from synoptic_schemas import Subjects, decode, parse_channel
from synoptic_schemas.codec import MAX_PAYLOAD

pytestmark = [pytest.mark.system, pytest.mark.timeout(300)]

RNG = np.random.default_rng(11)
N = 10_000
POINTS = 512  # one of the sizes a count is rounded up to: the most points sent
PIXELS = 256  # an image 1024 wide binned by 4
SHORT = np.linspace(0.0, 1.0, 40)  # fits (and the raw history keeps it): as it is
_SUBJECTS = Subjects()
#: the root conftest's nats-server carries the demo's images (several MB a message)
NATS_MAX_PAYLOAD = MAX_PAYLOAD


def wave(k: int) -> np.ndarray:
    """The ``k``-th waveform: a noisy sine, another phase each time."""
    x = np.arange(N) / 300 + k
    return (np.sin(x) + RNG.normal(0, 0.2, N)).astype("<f8")


def image() -> np.ndarray:
    """A 16-bit image of the demo's size: a pattern and noise, a few hot pixels."""
    y, x = np.mgrid[0:1024, 0:1024]
    img = (20_000 + 10_000 * np.sin(x / 50) * np.cos(y / 70)).astype("<u2")
    img += RNG.integers(0, 500, img.shape, dtype="<u2")
    img[RNG.integers(0, 1024, 40), RNG.integers(0, 1024, 40)] = 65_535
    return img


def assert_envelope(value: dict[str, Any], full: np.ndarray, points: int) -> None:
    """``value`` is ``full``'s envelope: at most ``points`` points, the first and
    last, and per bucket the full array's minimum and maximum."""
    x, v = np.asarray(value["x"]), np.asarray(value["v"])
    assert value["n"] == len(full) and 0 < len(v) <= points and len(x) == len(v)
    assert x[0] == 0 and x[-1] == len(full) - 1
    np.testing.assert_array_equal(v, full[x])
    b = points // 2 - 1
    starts = sorted({(i * len(full)) // b for i in range(b)})
    for lo, hi in zip(starts, [*starts[1:], len(full)], strict=True):
        inside = (x >= lo) & (x < hi)
        assert v[inside].min() == full[lo:hi].min()
        assert v[inside].max() == full[lo:hi].max()


def assert_binned(value: dict[str, Any], full: np.ndarray) -> None:
    """``value`` is ``full`` binned by 4, each pixel its block's maximum."""
    assert value["bin"] == 4 and list(value["n"]) == [1024, 1024]
    v = np.asarray(value["v"])
    assert v.shape == (PIXELS, PIXELS) and v.dtype == full.dtype
    np.testing.assert_array_equal(v, full.reshape(256, 4, 256, 4).max(axis=(1, 3)))


class Kept(Changes):
    """Every large value the rollup stores in ``CS_ARRAYS`` from now on: a
    JetStream consumer (stored messages only), with the store time of each."""

    def __init__(self) -> None:
        super().__init__()
        self.stored: list[tuple[str, float, dict[str, Any]]] = []

    async def start(self, nc: NatsClient) -> Kept:
        async def on_msg(msg: Any) -> None:
            _, channel = _SUBJECTS.parse(msg.subject.replace(".hist.arr.", ".val.", 1))
            when = msg.metadata.timestamp.timestamp() * 1e3
            self.stored.append((channel.uri, when, decode(msg.data)))
            self.note()

        self._sub = await nc.jetstream().subscribe(
            "cs.hist.arr.>", stream=arrays_stream_name("cs"), cb=on_msg,
            ordered_consumer=True, deliver_policy=DeliverPolicy.NEW,
        )  # fmt: skip
        return self

    def of(self, uri: str) -> list[tuple[float, dict[str, Any]]]:
        return [(t, m) for u, t, m in self.stored if u == uri]

    async def close(self) -> None:
        await self._sub.unsubscribe()


async def test_at_answers_arrays_and_images_at_the_points_asked(
    rewind_streams: Process, gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    wf, img, short, scalar = (parse_channel(u).uri for u in names[:4])
    full_wave, full_image = wave(0), image()
    kept = await Kept().start(nc)
    publisher = Publisher(nc)
    try:
        await publisher.value(scalar, 4.25)
        await publisher.value(short, SHORT)
        await publisher.value(wf, full_wave)
        await publisher.value(img, full_image)
        await kept.until(lambda: kept.of(wf) and kept.of(img))
    finally:
        await kept.close()
    t = max(when for _, when, _ in kept.stored) + 1  # ms: after both were kept
    uris = [wf, img, short, scalar]
    async with GatewayClient([gateway.ws_url]) as client:
        whole = await client.at(uris, t)
        reduced = await client.at(
            uris, t, points={wf: 400, img: PIXELS, short: POINTS, scalar: POINTS}
        )
        assert await client.ping() < 5
    assert whole["src"][:2] == reduced["src"][:2] == ["arrays", "arrays"]
    assert whole["err"] == reduced["err"] == [None] * 4
    # without pts: the full values
    np.testing.assert_array_equal(whole["val"][0]["v"], full_wave)
    np.testing.assert_array_equal(whole["val"][1]["v"], full_image)
    assert not {"x", "n", "bin"} & (whole["val"][0].keys() | whole["val"][1].keys())
    # with pts (400 rounded up to 512, as a live subscription's): reduced, the
    # value's other keys kept
    assert_envelope(reduced["val"][0], full_wave, POINTS)
    assert_binned(reduced["val"][1], full_image)
    for k in (0, 1):
        for key in ("t", "sev", "seq", "ep", "c", "kt"):
            assert reduced["val"][k][key] == whole["val"][k][key], key
    # what fits comes as it is
    np.testing.assert_array_equal(reduced["val"][2]["v"], SHORT)
    assert "x" not in reduced["val"][2] and reduced["val"][3]["v"] == 4.25
    assert reduced["meta"] == whole["meta"]


async def test_a_playback_sends_its_arrays_at_the_points_asked(
    rewind_streams: Process, gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    wf, img, scalar = (parse_channel(u).uri for u in names[10:13])
    full_image = image()
    published: dict[int, np.ndarray] = {}  # the waveform's seq -> its array
    kept = await Kept().start(nc)
    publisher = Publisher(nc)
    start = time.time() * 1e3
    try:
        for k in range(20):  # 4 Hz for 5 s; the rollup keeps what its share allows
            published[k + 1] = wave(k + 1)
            await publisher.value(wf, published[k + 1])
            await publisher.value(scalar, float(k))
            if k == 2:
                await publisher.value(img, full_image)
            await asyncio.sleep(0.25)  # the publishing rate, not a condition
        await kept.until(lambda: len(kept.of(wf)) >= 3 and kept.of(img))
    finally:
        await kept.close()

    async def play(points: dict[str, int] | None) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        ended = asyncio.Event()

        def on_frame(frame: dict[str, Any]) -> None:
            if frame["op"] == "pb":
                got.append(frame)
                if "end" in frame:
                    ended.set()

        async with GatewayClient([gateway.ws_url], on_frame=on_frame) as client:
            answer = await client.play(
                [wf, img, scalar], start - 200, 10, points=points
            )
            assert answer["val"] == [None, None, None]  # nothing of them before
            await asyncio.wait_for(ended.wait(), 120)
            assert client.errors == []
        assert got[-1]["end"] == "now", got[-1]
        return got[:-1]

    def values(frames: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
        return [v for f in frames for i, v in zip(f["i"], f["val"], strict=True)
                if i == index]  # fmt: skip

    frames = await play({wf: POINTS, img: PIXELS, scalar: POINTS})
    waves, images, scalars = (values(frames, i) for i in range(3))
    assert len(waves) >= 3 and images and scalars
    for value in waves:
        assert_envelope(value, published[value["seq"]], POINTS)
    for value in images:
        assert_binned(value, full_image)
    assert all("x" not in v and isinstance(v["v"], float) for v in scalars)
    # the same playback without pts: whole arrays and images
    frames = await play(None)
    waves, images = values(frames, 0), values(frames, 1)
    assert len(waves) >= 3 and images
    for value in waves:
        np.testing.assert_array_equal(value["v"], published[value["seq"]])
        assert "x" not in value
    for value in images:
        np.testing.assert_array_equal(value["v"], full_image)
