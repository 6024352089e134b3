"""Slow consumers: N WebSocket viewers that read one frame every ``--read-ms``.

k6 reads every frame at once into an unbounded queue, so it cannot play a slow
consumer; these sockets shrink their receive buffer and stop reading, so TCP
back-pressure reaches the gateway. Prints ``slow clients ready`` once every socket
got its snapshot, and on SIGTERM one JSON line with what they saw (frames, ``stats``
frames and missed counts, close codes).

Run: ``python loadtest/kit/slowclient.py --url http://H:P --count 5 --channels-file F``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import socket
import time
from collections import Counter
from urllib.parse import urlsplit

import msgpack
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

RCVBUF_BYTES = 16 * 1024


class Tally:
    """What all slow sockets saw."""

    def __init__(self) -> None:
        self.frames = 0
        self.stats_frames = 0
        self.missed = 0
        self.resnaps = 0
        self.closes: Counter[str] = Counter()
        self.open = 0
        self.ages: list[float] = []  # age (s) of the oldest update of each upd frame


async def slow_viewer(url: str, channels: list[str], read_ms: int, tally: Tally,
                      ready: asyncio.Queue[bool]) -> None:  # fmt: skip
    """One slow socket: subscribe, then read a frame every ``read_ms``."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
    sock.connect((parts.hostname, parts.port))
    ws_url = f"ws://{parts.hostname}:{parts.port}/ws"
    signalled = False
    try:
        async with connect(ws_url, sock=sock, max_queue=2, compression=None,
                           max_size=None) as ws:  # fmt: skip
            tally.open += 1
            await ws.send(msgpack.packb({"op": "sub", "id": 1, "ch": channels}))
            while True:
                frame = msgpack.unpackb(await ws.recv(), raw=False)
                tally.frames += 1
                op = frame.get("op")
                if op == "snap" and frame.get("id") == 1 and not signalled:
                    signalled = True
                    await ready.put(True)
                elif op == "snap":
                    tally.resnaps += 1
                elif op == "upd":
                    stamps = [v["t"] for v in frame.get("val") or [] if v]
                    if stamps:
                        tally.ages.append(time.time() - min(stamps) / 1e9)
                elif op == "stats":
                    tally.stats_frames += 1
                    tally.missed += int(frame.get("missed") or 0)
                await asyncio.sleep(read_ms / 1000)
    except ConnectionClosed as exc:
        code = exc.rcvd.code if exc.rcvd else 1006
        tally.closes[str(code)] += 1
    finally:
        tally.open -= 1 if tally.open else 0
        if not signalled:
            await ready.put(False)


async def run(url: str, count: int, channels: list[str], read_ms: int) -> None:
    tally = Tally()
    ready: asyncio.Queue[bool] = asyncio.Queue()
    tasks = [asyncio.create_task(slow_viewer(url, channels, read_ms, tally, ready))
             for _ in range(count)]  # fmt: skip
    ok = [await ready.get() for _ in range(count)]
    print(f"slow clients ready: {sum(ok)} of {count} subscribed", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    still_open = tally.open
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    result = {"sockets": count, "subscribed": sum(ok), "frames": tally.frames,
              "stats_frames": tally.stats_frames, "missed": tally.missed,
              "resnaps": tally.resnaps, "closes": dict(tally.closes),
              "open_at_end": still_open,
              # staleness of what the slow sockets read: bounded when the gateway
              # conflates, growing with the run when it queues without bound
              "age_s_max": round(max(tally.ages, default=0.0), 2),
              "age_s_end": round(sum(tally.ages[-10:]) / max(1, len(tally.ages[-10:])), 2),
              }  # fmt: skip
    print("slow clients result: " + json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="gateway base URL")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--channels-file", required=True, help="JSON list of URIs")
    parser.add_argument("--read-ms", type=int, default=1000)
    args = parser.parse_args()
    with open(args.channels_file) as file:
        channels = json.load(file)
    asyncio.run(run(args.url, args.count, channels, args.read_ms))


if __name__ == "__main__":
    main()
