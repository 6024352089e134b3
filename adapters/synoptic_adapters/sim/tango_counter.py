"""A bare PyTango client that counts a device's change events (the floor for the
benchmark, and the "other client" of the tests: what every client of a device
sees when something keeps the device busy).

``python -m synoptic_adapters.sim.tango_counter URL [--prefix ev_]`` subscribes the
change events of every attribute whose name starts with the prefix
(``AsyncRead``: first values come with the subscriptions) and prints, with
``time.time()`` stamps:

- ``counter proxy at T`` once connected to the device;
- ``counter subscribed N at T`` once the subscription calls returned;
- ``counter read N at T`` once ``--read`` attributes were read, in one call
  (right after the subscription calls: what an expert client does for attributes
  it knows to be healthy and without events);
- ``counter all valued N at T`` once every subscribed one has had a value;
- ``counted C at T`` every ``--every`` seconds (C: value events so far).
"""

from __future__ import annotations

import argparse
import threading
import time

import tango


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="tango://host:port/dom/fam/mem#dbase=no")
    parser.add_argument("--prefix", default="ev_", help="attribute name prefix")
    parser.add_argument("--every", type=float, default=0.5, help="seconds")
    parser.add_argument("--read", default="", help="comma-separated names to read")
    args = parser.parse_args()
    proxy = tango.DeviceProxy(args.url)
    print(f"counter proxy at {time.time():.3f}", flush=True)
    names = [n for n in proxy.get_attribute_list() if n.startswith(args.prefix)]
    lock = threading.Lock()
    counted = [0]
    valued: set[str] = set()

    def on_event(event: tango.EventData) -> None:
        if event.err or event.attr_value is None:
            return
        with lock:
            counted[0] += 1
            valued.add(event.attr_name)

    for name in names:
        proxy.subscribe_event(
            name, tango.EventType.CHANGE_EVENT, on_event, tango.EventSubMode.AsyncRead
        )
    print(f"counter subscribed {len(names)} at {time.time():.3f}", flush=True)
    if args.read:
        reads = args.read.split(",")
        results = proxy.read_attributes(reads)
        valid = sum(1 for r in results if not r.has_failed)
        print(f"counter read {valid} at {time.time():.3f}", flush=True)
    said = False
    while True:
        time.sleep(min(args.every, 0.02) if not said else args.every)
        with lock:
            count, complete = counted[0], len(valued) >= len(names)
        if complete and not said:
            said = True
            print(f"counter all valued {len(names)} at {time.time():.3f}", flush=True)
        if said:
            print(f"counted {count} at {time.time():.3f}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
