"""One Tango measurement in a fresh process (run by :mod:`.procs`): the adapter's or
a PyTango-only client's subscription timing, or a PyTango-only event counter. Prints
``RESULT {json}``; with a go file, prints ``CHILD READY`` and waits for the file."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from synoptic_benchmarks.tango.procs import SETTLE_TIMEOUT, per_event


def _wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.001)


async def _adapter_subscription(
    uris: list[str], hosts: list[str], go_file: str | None = None
) -> dict[str, float]:
    from synoptic_adapters.tango.device import Events
    from synoptic_adapters.tango.settings import TangoSettings
    from synoptic_adapters.tango.source import TangoSource
    from synoptic_schemas import parse_channel

    channels = [parse_channel(uri) for uri in uris]
    seen: set[Any] = set()
    first_values = asyncio.get_running_loop().create_future()

    class Sink:
        def value(self, channel: Any, v: Any, *, t: int, sev: int, st: str) -> None:
            seen.add(channel)
            if len(seen) == len(channels) and not first_values.done():
                first_values.set_result(time.perf_counter())

        def meta(self, channel: Any, meta: dict[str, Any]) -> None:
            pass

        def disconnected(self, channel: Any, reason: str) -> None:
            pass

    source = TangoSource(TangoSettings(no_database_hosts=frozenset(hosts)))
    await source.start(Sink())
    if go_file:  # one shard of several: start when all of them are ready
        print("CHILD READY", flush=True)
        await asyncio.to_thread(_wait_for_file, go_file)
    start = time.perf_counter()
    started_at = time.time()
    cpu0 = time.process_time()
    await source.monitor(channels)
    first = await asyncio.wait_for(first_values, 60)
    async with asyncio.timeout(60):
        while True:
            attrs = [a for link in source.links.values() for a in link.attrs.values()]
            if all(a.events is Events.LIVE for a in attrs):
                break
            await asyncio.sleep(0.01)
    live = time.perf_counter()
    cpu = time.process_time() - cpu0
    await source.stop()
    return {
        "cpu_s": cpu,
        "first_values_s": first - start,
        "subscribed_s": live - start,
        "started_at": started_at,
    }


def _pytango_subscription(
    urls: list[str], bulk: int, mode: str, go_file: str | None = None
) -> dict[str, float]:
    import tango

    names = [f"bulk_{n:04d}" for n in range(bulk)]
    total = len(urls) * bulk
    lock = threading.Lock()
    firsts: set[tuple[int, str]] = set()
    done = threading.Event()

    def callback_for(index: int):
        def callback(event: Any) -> None:
            if event.err or event.attr_value is None:
                return
            with lock:
                firsts.add((index, event.attr_value.name))
                if len(firsts) == total:
                    done.set()

        return callback

    if go_file:  # one process of several: start when all of them are ready
        print("CHILD READY", flush=True)
        _wait_for_file(go_file)
    start = time.perf_counter()
    started_at = time.time()
    cpu0 = time.process_time()
    proxies = [tango.DeviceProxy(url) for url in urls]
    sub_mode = (
        tango.EventSubMode.SyncRead if mode == "sync" else tango.EventSubMode.AsyncRead
    )
    for index, proxy in enumerate(proxies):
        callback = callback_for(index)
        for name in names:
            proxy.subscribe_event(
                name, tango.EventType.CHANGE_EVENT, callback, sub_mode
            )
    returned = time.perf_counter()
    done.wait(60)
    first = time.perf_counter()
    cpu = time.process_time() - cpu0
    return {
        "cpu_s": cpu,
        "calls_returned_s": returned - start,
        "first_values_s": first - start,
        "subscribed_s": (returned if mode == "sync" else first) - start,
        "started_at": started_at,
    }


def _pytango_counter(urls: list[str], bulk: int, window: float) -> dict[str, Any]:
    """Count change events with a plain PyTango client (sync callbacks)."""
    import tango

    count = [0]
    gaps = [0]
    last: dict[tuple[int, str], float] = {}
    lock = threading.Lock()

    def callback_for(index: int):
        def callback(event: Any) -> None:
            if event.err or event.attr_value is None:
                return
            key, value = (index, event.attr_value.name), event.attr_value.value
            with lock:
                count[0] += 1
                previous = last.get(key)
                if previous is not None and value != previous + 1:
                    gaps[0] += 1
                last[key] = value

        return callback

    proxies = [tango.DeviceProxy(url) for url in urls]
    for index, proxy in enumerate(proxies):
        callback = callback_for(index)
        for n in range(bulk):
            proxy.subscribe_event(
                f"bulk_{n:04d}", tango.EventType.CHANGE_EVENT, callback,
                tango.EventSubMode.AsyncRead,
            )  # fmt: skip
    # the window starts once every attribute has sent an event (all subscribed)
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while len(last) < len(urls) * bulk and time.monotonic() < deadline:
        time.sleep(0.2)
    settled = len(last)
    time.sleep(2.0)
    me = psutil.Process()
    cpu0 = me.cpu_times()
    with lock:
        count[0] = gaps[0] = 0
    start = time.monotonic()
    time.sleep(window)
    with lock:
        received, lost = count[0], gaps[0]
    elapsed = time.monotonic() - start
    cpu1 = me.cpu_times()
    cpu_s = cpu1.user + cpu1.system - cpu0.user - cpu0.system
    return {
        "events_per_s": round(received / elapsed, 1),
        "us_per_event": per_event(cpu_s, elapsed, received / elapsed),
        "gaps": lost,
        "cpu_percent": round(
            (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / elapsed * 100, 1
        ),
        "rss_mib": round(me.memory_info().rss / 2**20, 1),
        "subscribed_before_window": settled,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--child", required=True, choices=["adapter", "sync", "asyncread", "count"]
    )
    parser.add_argument("--child-spec", required=True, help="@FILE or JSON")
    args = parser.parse_args(argv)
    text = args.child_spec
    spec = json.loads(Path(text[1:]).read_text() if text.startswith("@") else text)
    if args.child == "adapter":
        result = asyncio.run(
            _adapter_subscription(spec["uris"], spec["hosts"], spec.get("go_file"))
        )
    elif args.child == "count":
        result = _pytango_counter(spec["urls"], spec["bulk"], spec["window"])
    else:
        result = _pytango_subscription(
            spec["urls"], spec["bulk"], args.child, spec.get("go_file")
        )
    print("RESULT " + json.dumps(result), flush=True)
    os._exit(0)  # skip Tango's slow teardown of thousands of subscriptions


if __name__ == "__main__":
    main()
