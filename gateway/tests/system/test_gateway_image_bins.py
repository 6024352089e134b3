"""Images sized to the screen (real gateway, real nats-server): ``sub.pts`` of an
image channel gets the image binned to fit, each pixel the maximum of its block of
the full image, in the same dtype, with ``bin`` and the full shape ``n``; a channel
subscribed without ``pts`` (a zoomed widget) gets the full image."""

from __future__ import annotations

import numpy as np
import pytest

from synoptic_gateway.client import GatewayClient
from synoptic_gateway.testing import GatewayProc, Publisher

pytestmark = pytest.mark.system

RNG = np.random.default_rng(5)
#: 700 × 500 16-bit (700 KB: inside nats-server's 1 MiB), a hot pixel at (601, 433)
MONO = RNG.integers(0, 4000, (700, 500), dtype="<u2")
MONO[601, 433] = 65535
RGB = RNG.integers(0, 255, (300, 200, 3), dtype="u1")


def block_max(full: np.ndarray, factor: int) -> np.ndarray:
    """Each ``factor`` × ``factor`` block's maximum (edge blocks padded with the
    dtype's minimum), per colour channel: vectorised, so the test's event loop
    (its socket's pings) is never held for seconds."""
    h, w = full.shape[:2]
    bh, bw = -(-h // factor), -(-w // factor)
    lowest = np.iinfo(full.dtype).min
    padded = np.full((bh * factor, bw * factor, *full.shape[2:]), lowest, full.dtype)
    padded[:h, :w] = full
    blocks = padded.reshape(bh, factor, bw, factor, *full.shape[2:])
    return blocks.max(axis=(1, 3))


def assert_block_max(value: dict, full: np.ndarray, factor: int) -> None:
    v = np.asarray(value["v"])
    assert value["bin"] == factor and list(value["n"]) == list(full.shape)
    assert v.dtype == full.dtype
    np.testing.assert_array_equal(v, block_max(full, factor))


async def test_binned_image_max_per_block_equals_the_full_images(
    gateway: GatewayProc, publisher: Publisher, names: list[str]
) -> None:
    mono, rgb = names[:2]
    await publisher.value(mono, MONO)
    await publisher.value(rgb, RGB)
    await publisher.nc.flush()
    async with GatewayClient(gateway.ws_url) as client:
        # 400 px rounds up to 256 → 512: 700 rows need a factor of 2
        small = await client.subscribe([mono, rgb], points={mono: 400, rgb: 100})
        full = await client.subscribe([mono])
        assert_block_max(small.value(mono), MONO, 2)
        assert small.value(mono)["v"][300, 216] == 65535  # the hot pixel survives
        assert_block_max(small.value(rgb), RGB, 2)  # 300 rows into 256
        await full.wait_for(lambda s: s.value(mono) is not None)
        assert "bin" not in full.value(mono)
        np.testing.assert_array_equal(full.value(mono)["v"], MONO)
        # a live frame is binned the same way; 300 × 200 fits 512: sent as it is
        frame = MONO[::-1].copy()
        await publisher.value(mono, frame)
        # (a busy machine may make the socket start over: no value for a moment)
        await small.wait_for(lambda s: (m := s.value(mono)) is not None and m["n"]
                             and m["v"][0, 0] == frame[:2, :2].max())  # fmt: skip
        assert_block_max(small.value(mono), frame, 2)
        wide = await client.subscribe([rgb], points={rgb: 512})
        assert "bin" not in wide.value(rgb)
        np.testing.assert_array_equal(wide.value(rgb)["v"], RGB)
