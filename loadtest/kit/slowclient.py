"""Slow consumers: N WebSocket viewers behind slow links, each taking ``--read-bps``
bytes per second off its socket.

k6 reads every frame at once into an unbounded queue, so it cannot play a slow
consumer. These sockets have a small fixed receive buffer and take a bounded number
of bytes every 100 ms, parsing frames with websockets' sans-I/O protocol (a client
library would read hundreds of KiB ahead of the application, out of the gateway's
sight), so TCP back-pressure reaches the gateway at the link's pace. Prints ``slow
clients ready`` once every socket got its snapshot, and on SIGTERM one JSON line
with what they saw (frames, ``stats`` frames and missed counts, close codes, the age
of the data they read).

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
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

RCVBUF_BYTES = 8 * 1024
#: Seconds between two reads of a slow link.
TICK_S = 0.1


class Tally:
    """What all slow sockets saw."""

    def __init__(self) -> None:
        self.frames = 0
        self.stats_frames = 0
        self.missed = 0
        self.resnaps = 0
        self.closes: Counter[str] = Counter()
        self.open = 0
        self.ages: list[float] = []  # age (s) of the oldest value of each frame read


async def slow_viewer(url: str, channels: list[str], read_bps: int, tally: Tally,
                      ready: asyncio.Queue[bool]) -> None:  # fmt: skip
    """One socket behind a link of ``read_bps``: subscribe, then read at that pace."""
    parts = urlsplit(url)
    loop = asyncio.get_running_loop()
    protocol = ClientProtocol(parse_uri(f"ws://{parts.hostname}:{parts.port}/ws"),
                              max_size=None)  # fmt: skip
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
    sock.setblocking(False)
    signalled = False
    chunk = max(1, int(read_bps * TICK_S))

    async def flush() -> None:
        for data in protocol.data_to_send():
            if data:
                await loop.sock_sendall(sock, data)

    try:
        await loop.sock_connect(sock, (parts.hostname, parts.port))
        protocol.send_request(protocol.connect())
        await flush()
        tally.open += 1
        subscribed = False
        while True:
            data = await loop.sock_recv(sock, chunk)
            if not data:
                break
            protocol.receive_data(data)
            if not subscribed and protocol.state is State.OPEN:  # handshake done
                subscribed = True
                protocol.send_binary(
                    msgpack.packb({"op": "sub", "id": 1, "ch": channels})
                )
            for event in protocol.events_received():
                if not isinstance(event, Frame):
                    continue
                if event.opcode is Opcode.CLOSE:
                    code = protocol.close_rcvd.code if protocol.close_rcvd else 1006
                    tally.closes[str(code)] += 1
                    return
                if event.opcode is not Opcode.BINARY:
                    continue
                frame = msgpack.unpackb(event.data, raw=False)
                tally.frames += 1
                op = frame.get("op")
                if op == "snap" and frame.get("id") == 1 and not signalled:
                    signalled = True
                    await ready.put(True)
                elif op == "snap":
                    tally.resnaps += 1
                if op in ("upd", "snap"):
                    stamps = [v["t"] for v in frame.get("val") or [] if v]
                    if stamps:
                        tally.ages.append(time.time() - min(stamps) / 1e9)
                elif op == "stats":
                    tally.stats_frames += 1
                    tally.missed += int(frame.get("missed") or 0)
            await flush()
            await asyncio.sleep(TICK_S)
        tally.closes["1006"] += 1
    except OSError:
        tally.closes["1006"] += 1
    finally:
        sock.close()
        tally.open -= 1 if tally.open else 0
        if not signalled:
            await ready.put(False)


async def run(url: str, count: int, channels: list[str], read_bps: int) -> None:
    tally = Tally()
    ready: asyncio.Queue[bool] = asyncio.Queue()
    tasks = [asyncio.create_task(slow_viewer(url, channels, read_bps, tally, ready))
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
    parser.add_argument("--read-bps", type=int, default=8192,
                        help="bytes per second each link takes")  # fmt: skip
    args = parser.parse_args()
    with open(args.channels_file) as file:
        channels = json.load(file)
    asyncio.run(run(args.url, args.count, channels, args.read_bps))


if __name__ == "__main__":
    main()
