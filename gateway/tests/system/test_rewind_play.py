"""Playback (``play``, ``pb``, ``halt``) through a real gateway against a real
nats-server with the bus's history streams: channels changing at 10 Hz (and a
change of metadata) are played back at 10×; the screen the frames build equals,
frame after frame, what a subscriber had seen by each frame's moment; the frames
come at the frame rate, end at the present (``now``); a ``halt`` stops another
playback at once; a ``play`` of the history process's child does the same."""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process
from synoptic_bus.store import fetch_last
from synoptic_gateway.client import GatewayClient, GatewayError
from synoptic_gateway.history.moment import MomentReader
from synoptic_gateway.history.playback import StretchReader
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_schemas import Subjects, decode, encode, parse_channel
from synoptic_schemas.blocks import decode_block

pytestmark = [pytest.mark.system, pytest.mark.timeout(300)]

RATE = 10.0  # Hz per channel
SECONDS = 8.0  # of history played back
SPEED = 10.0
MARGIN = 250_000_000  # ns: how late the subscriber's clock may read an arrival
_SUBJECTS = Subjects()


async def record_and_publish(
    nc: NatsClient, publisher: Publisher, uris: list[str], alarmed: str | None = None
) -> tuple[dict[str, list[tuple[int, dict[str, Any]]]], int, int]:
    """Publish every channel at RATE for SECONDS (the first channel's units
    change half-way; ``alarmed``'s values are in a MINOR alarm); return what a
    subscriber recorded (arrival ns, value), and when it began and ended."""
    seen: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    ticks = int(SECONDS * RATE)
    all_in = asyncio.Event()
    count = 0

    async def on_msg(msg: Any) -> None:
        nonlocal count
        _, channel = _SUBJECTS.parse(msg.subject)
        seen[channel.uri].append((time.time_ns(), decode(msg.data)))
        count += 1
        if count >= ticks * len(uris):
            all_in.set()

    sub = await nc.subscribe("cs.val.>", cb=on_msg)
    await nc.flush()
    for uri in uris:
        await publisher.meta(uri, "mA")
    began = time.time_ns()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    for k in range(ticks):
        if k == ticks // 2:
            await publisher.meta(uris[0], "A")
        for uri in uris:
            if uri == alarmed:
                await _publish_alarmed(nc, publisher, uri)
            else:
                await publisher.value(uri)
        await asyncio.sleep(max(t0 + (k + 1) / RATE - loop.time(), 0))  # the rate
    await nc.flush()
    await asyncio.wait_for(all_in.wait(), 30)
    await sub.unsubscribe()
    return seen, began, time.time_ns()


async def _publish_alarmed(nc: NatsClient, publisher: Publisher, uri: str) -> None:
    seq = publisher.seq[uri] = publisher.seq.get(uri, 0) + 1
    msg = {"ver": 1, "v": seq, "t": time.time_ns(), "sev": 1, "st": "HIGH",
           "seq": seq, "ep": publisher.ep, "c": True}  # fmt: skip
    await nc.publish(_SUBJECTS.val(parse_channel(uri)), encode(msg))


def candidates(book: list[tuple[int, dict[str, Any]]], t_ns: int) -> list[int]:
    """The values (each its seq) the subscriber may have seen at ``t_ns`` (its
    clock reads arrivals up to MARGIN late on a busy machine; None: none yet)."""
    before = [m["v"] for t, m in book if t <= t_ns - MARGIN][-1:] or [None]
    return before + [m["v"] for t, m in book if abs(t - t_ns) < MARGIN]


async def play_and_check(
    gateway: GatewayProc,
    uris: list[str],
    seen: dict[str, list[tuple[int, dict[str, Any]]]],
    began: int,
) -> None:
    got: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_frame(frame: dict[str, Any]) -> None:
        if frame["op"] == "pb":
            got.append({**frame, "wall": time.monotonic()})
            if "end" in frame:
                ended.set()

    async with GatewayClient([gateway.ws_url], on_frame=on_frame) as client:
        start_ms = (began - 500_000_000) / 1e6
        answer = await client.play(uris, start_ms, SPEED)
        assert answer["op"] == "at" and answer["ch"] == uris
        state = {uri: answer["val"][i] for i, uri in enumerate(uris)}
        units = {
            uri: (answer["meta"][i] or {}).get("unit") for i, uri in enumerate(uris)
        }
        await asyncio.wait_for(ended.wait(), SECONDS / SPEED * 3 + 60)
        assert got[-1]["end"] == "now", got[-1]
        assert client.errors == []
    compared = 0
    units_seen = set()
    for frame in got[:-1]:
        assert frame["id"] == answer["id"]
        for i, value in zip(frame["i"], frame["val"], strict=True):
            state[uris[i]] = value
        for i, meta in zip(frame.get("mi", []), frame.get("meta", []), strict=True):
            units[uris[i]] = meta.get("unit")
        t_ns = int(frame["t"] * 1e6)
        for uri in uris:
            maybe = candidates(seen[uri], t_ns)
            if maybe != [None]:
                v = state[uri]["v"] if state[uri] is not None else None
                assert v in maybe, (uri, frame["t"], state[uri], maybe)
                compared += 1
        units_seen.add(units[uris[0]])
    assert compared >= len(uris) * 20, compared
    assert units_seen == {"mA", "A"}, units_seen
    # the pace: frames at the frame rate, bus time at SPEED × wall time
    times = [f["t"] for f in got[:-1]]
    walls = [f["wall"] for f in got[:-1]]
    span_wall = walls[-1] - walls[0]
    assert (times[-1] - times[0]) / 1e3 / span_wall == pytest.approx(SPEED, rel=0.35)
    assert len(got) / span_wall >= 20  # 30 fps asked; a busy machine's margin
    assert times == sorted(times)


async def test_playback_rebuilds_the_screen_frame_by_frame(
    rewind_streams: Process, gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    uris = names[:20]
    alarmed = uris[1]
    seen, began, ended = await record_and_publish(nc, Publisher(nc), uris, alarmed)
    await play_and_check(gateway, uris, seen, began)
    await _blocks_cover(nc, seen)
    # a stretch read at its frames' ends gives the frames a read of every value
    # gives: at 1×, 10× and 60× (more values than a quarter of channels × frames);
    # read from the blocks, each frame shows what was the last value by source time
    # at its end (but the alarmed channel's: read raw, as the whole read)
    sampled, whole, blocks = (StretchReader(Settings(), lambda: nc) for _ in "swb")
    whole.sampling = False
    sampled.blocks = False
    anyone = Principal("test", ("*",), ())
    for speed in (1.0, 10.0, 60.0):
        t0 = (began + 1e9) / 1e6  # every channel has a value
        t1 = min(t0 + speed * 1e3, ended / 1e6)  # in the past: the same each time
        stretch = {"op": "pbread", "id": 7, "ch": uris, "t0": t0, "t1": t1,
                   "step": speed * 1e3 / 30, "json": False}  # fmt: skip
        reference = await whole.answer(stretch, anyone)
        assert await sampled.answer(stretch, anyone) == reference, speed
        by_stored = _screens(reference, uris)
        by_source = _screens(await blocks.answer(stretch, anyone), uris)
        assert len(by_source) == len(by_stored) >= 4
        for (t_ms, screen), (_, stored) in zip(by_source, by_stored, strict=True):
            for uri in uris:
                if uri == alarmed:
                    assert screen[uri] == stored[uri], (speed, t_ms, uri)
                    continue
                last = [m for _, m in seen[uri] if m["t"] <= t_ms * 1e6][-1]
                if screen[uri] is None:  # no change shown yet: none in the stretch
                    assert last["t"] <= t0 * 1e6, (speed, t_ms, uri)
                    continue
                shown = {k: screen[uri][k] for k in ("v", "t", "sev", "st", "c")}
                assert shown == {k: last[k] for k in shown}, (speed, t_ms, uri)
                assert type(shown["v"]) is int
    assert sampled.sampled >= 2 and whole.sampled == 0 and sampled.from_blocks == 0
    assert blocks.from_blocks == blocks.sampled >= 2
    # stretches of a playback found dense, read at once (other viewers' too), try
    # no whole read of their values
    tried = blocks.read_whole
    await asyncio.gather(*(blocks.answer(stretch, anyone) for _ in range(4)))
    assert blocks.read_whole == tried and blocks.from_blocks == blocks.sampled
    # nor do its quiet stretches (past the last values): the blocks show them
    for k in range(1, 3):
        t0 = ended / 1e6 + k
        quiet = {**stretch, "t0": t0, "t1": t0 + stretch["t1"] - stretch["t0"]}
        assert all(not s["i"] for _, s in _frames(await blocks.answer(quiet, anyone)))
    assert blocks.read_whole == tried and blocks.from_blocks == blocks.sampled


def _frames(answer: bytes) -> list[tuple[float, dict[str, Any]]]:
    """A stretch's frames, decoded, with their times."""
    return [(t_ms, msgpack.unpackb(frame)) for t_ms, frame in msgpack.unpackb(answer)]


def _screens(answer: bytes, uris: list[str]) -> list[tuple[float, dict[str, Any]]]:
    """The screen after each frame of a stretch (None: no value shown yet)."""
    state: dict[str, Any] = dict.fromkeys(uris)
    out = []
    for t_ms, frame in _frames(answer):
        for i, value in zip(frame["i"], frame["val"], strict=True):
            state[uris[i]] = value
        out.append((t_ms, dict(state)))
    return out


async def _blocks_cover(
    nc: NatsClient, seen: dict[str, list[tuple[int, dict[str, Any]]]]
) -> None:
    """Until each channel's growing block reaches its last value."""
    last = {_SUBJECTS.block(parse_channel(u), "open"): b[-1][1]["t"]
            for u, b in seen.items()}  # fmt: skip
    async with asyncio.timeout(30):
        while True:
            snap = await fetch_last(nc, list(last), stream="CS_ROLL_OPEN")
            if all(
                decode_block(data).b > last[subject]
                for subject, data in snap.messages.items()
            ) and len(snap.messages) == len(last):
                return
            await asyncio.sleep(0.2)


async def test_halt_stops_a_playback_and_a_new_play_replaces_it(
    rewind_streams: Process, gateway: GatewayProc, nc: NatsClient, names: list[str]
) -> None:
    uris = names[20:25]
    publisher = Publisher(nc)
    for uri in uris:
        await publisher.value(uri)
    ends: list[dict[str, Any]] = []
    frames_seen: list[int] = []
    ended = asyncio.Event()

    def on_frame(frame: dict[str, Any]) -> None:
        if frame["op"] == "pb":
            frames_seen.append(frame["id"])
            if "end" in frame:
                ends.append(frame)
                ended.set()

    async with GatewayClient([gateway.ws_url], on_frame=on_frame) as client:
        t = time.time() * 1e3 - 600e3
        first = await client.play(uris, t, 1.0)
        second = await client.play(uris, t, 1.0)  # replaces the first
        await asyncio.wait_for(ended.wait(), 10)
        assert ends[0]["id"] == first["id"] and ends[0]["end"] == "halt"
        ended.clear()
        ack = await client.halt(second["id"])
        assert ack["op"] == "halt" and ack["play"] == second["id"]
        await asyncio.wait_for(ended.wait(), 10)
        assert ends[1]["id"] == second["id"] and ends[1]["end"] == "halt"
        # a halt of a playback that is over is acknowledged all the same
        assert (await client.halt(second["id"]))["play"] == second["id"]
        with pytest.raises(GatewayError, match="bad_frame"):
            await client._request(
                {"op": "play", "id": 99, "ch": uris, "t": t, "speed": 6000}, 10
            )
        assert await client.ping() < 5


async def test_playback_from_the_history_process(
    rewind_streams: Process, nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    uris = names[30:35]
    seen, began, _ = await record_and_publish(nc, Publisher(nc), uris)
    gateway = start_gateway(nats_server.url, "--history-process")
    try:
        await play_and_check(gateway, uris, seen, began)
    finally:
        gateway.stop()


async def test_playbacks_at_once_share_the_gateway_frame_rate(
    rewind_streams: Process, nats_server: NatsServer, nc: NatsClient, names: list[str]
) -> None:
    """Three playbacks at once on a gateway that sends 30 frames a second for all
    its playbacks: each gets a third (at 2×, frames 200 ms of bus time apart
    instead of 67)."""
    uris = names[40:43]
    publisher = Publisher(nc)
    for uri in uris:
        await publisher.value(uri)
    gateway = start_gateway(nats_server.url, "--play-fps-total", "30")
    got: list[list[dict[str, Any]]] = [[], [], []]
    ended = [asyncio.Event() for _ in got]

    def on_frame(k: int) -> Callable[[dict[str, Any]], None]:
        def take(frame: dict[str, Any]) -> None:
            if frame["op"] == "pb":
                got[k].append(frame)
                if "end" in frame:
                    ended[k].set()

        return take

    clients = [GatewayClient([gateway.ws_url], on_frame=on_frame(k)) for k in range(3)]
    try:
        for client in clients:
            await client.connect()
        start = time.time() * 1e3 - 3000
        await asyncio.gather(*(c.play(uris, start, 2.0) for c in clients))
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ended)), 30)
    finally:
        for client in clients:
            await client.close()
        gateway.stop()
    for frames in got:
        assert frames[-1]["end"] == "now"
        steps = [b["t"] - a["t"] for a, b in itertools.pairwise(frames[:-1])]
        assert len(steps) >= 10 and statistics.median(steps) >= 180, steps


async def test_a_moment_before_channels_first_values_is_answered_at_once(
    rewind_streams: Process, nc: NatsClient, names: list[str]
) -> None:
    """Channels whose first value came after many of other channels: a moment
    before it is not asked of the raw history (nats-server would walk back through
    every message stored before, for each channel: seconds for a hundred)."""
    publisher = Publisher(nc)
    others, late = names[100:120], names[:100]
    for k in range(1000):
        for uri in others:
            await publisher.value(uri)
        if k % 100 == 99:
            await nc.flush()
    moment = time.time_ns()
    for uri in late:
        await publisher.value(uri)
    await nc.flush()
    reader = MomentReader(Settings(), lambda: nc)
    channels = [parse_channel(u) for u in late]
    await asyncio.wait_for(_until_kept(reader, channels[-1]), 30)  # all stored
    started = time.perf_counter()
    found = await reader.read(channels, moment)
    took = time.perf_counter() - started
    assert reader.before_first == len(late)
    for channel in channels:
        past = found[channel.uri]
        assert past.value is None and past.error["code"] == "not_kept", past.error
        assert past.error["since"] > moment / 1e6
    assert took < 10, took  # a busy machine's margin; seconds per channel before


async def _until_kept(reader: MomentReader, channel: Any) -> None:
    while (await reader.read([channel], time.time_ns()))[channel.uri].value is None:  # noqa: ASYNC110 - a stream write has no event
        await asyncio.sleep(0.05)
