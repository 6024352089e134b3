"""``synoptic sim tango``: the simulated Tango device server."""

from __future__ import annotations

import argparse
import sys

from synoptic_adapters.sim.options import port_taken

#: Every attribute of a simulated device except the bulk counters.
ATTRIBUTES = (
    "boolean", "uchar", "short", "ushort", "long", "ulong", "long64", "ulong64",
    "float", "double", "string", "spectrum", "image", "mode", "devstate", "alarm",
    "quality", "polled", "polled_string", "slow", "timeout",
)  # fmt: skip
#: The device server's readiness line (printed by Tango itself).
READY = r"Ready to accept request"


def register(sims: argparse._SubParsersAction) -> None:
    """Add ``tango`` to ``synoptic sim``."""
    parser = sims.add_parser("tango", help="simulated Tango device server (pytango)")
    parser.add_argument("--port", type=int, default=10000, help="server port")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default loopback)"
    )
    parser.add_argument("--devices", type=int, default=1, help="sim/test/1 … N")
    parser.add_argument(
        "--dlist", help="comma-separated device names (instead of --devices)"
    )
    parser.add_argument(
        "--bulk", type=int, default=0, help="extra counter attributes per device"
    )
    parser.add_argument("--rate", type=float, default=10.0, help="Hz of changes")
    parser.add_argument("--instance", default="sim", help="server instance name")
    parser.add_argument(
        "--database",
        action="store_true",
        help="register in the Tango database of $TANGO_HOST instead of -nodb",
    )
    parser.set_defaults(func=run)
    standard = sims.add_parser(
        "tango-standard",
        help="simulated Tango device in the default serialisation model: 414 "
        "attributes, slow, timing-out and failing ones among them",
    )
    standard.add_argument("--port", type=int, default=10000, help="server port")
    standard.add_argument("--host", default="127.0.0.1", help="address to listen on")
    standard.add_argument("--device", default="sim/standard/1", help="device name")
    standard.add_argument("--instance", default="standard", help="instance name")
    standard.add_argument("--events", type=int, default=389, help="event attributes")
    standard.add_argument(
        "--polled", type=int, default=21, help="healthy attributes without events"
    )
    standard.add_argument(
        "--rate", type=float, default=1.0, help="Hz of each event attribute"
    )
    standard.add_argument("--slow-s", type=float, default=2.0, help="read of 'slow'")
    standard.add_argument(
        "--timeout-s", type=float, default=10.0, help="read of 'timeout'"
    )
    standard.add_argument(
        "--clean", action="store_true", help="slow, timeout, broken read fine"
    )
    standard.add_argument(
        "--bad-first", action="store_true",
        help="declare slow, timeout and broken before the healthy attributes",
    )  # fmt: skip
    standard.set_defaults(func=run_standard)


def run_standard(args: argparse.Namespace) -> int:
    """Serve the default-serialisation device until killed."""
    from synoptic_adapters.sim.tango_standard import StandardSettings, serve

    if taken := port_taken("tango-standard", args.host, args.port):
        print(taken, flush=True)
        return 1
    settings = StandardSettings(
        events=args.events, polled=args.polled, rate_hz=args.rate,
        slow_s=args.slow_s, timeout_s=args.timeout_s, clean=args.clean,
        bad_first=args.bad_first,
    )  # fmt: skip
    serve(port=args.port, device=args.device, instance=args.instance,
          settings=settings, host=args.host)  # fmt: skip
    return 0


def run(args: argparse.Namespace) -> int:
    """Serve until killed; prints ``Ready to accept request`` when serving."""
    from synoptic_adapters.sim.tango_device import device_names, serve

    if taken := port_taken("tango", args.host, args.port):
        print(taken, flush=True)
        return 1
    serve(
        port=args.port,
        devices=args.dlist.split(",") if args.dlist else device_names(args.devices),
        instance=args.instance,
        rate_hz=args.rate,
        bulk=args.bulk,
        use_database=args.database,
        host=args.host,
    )
    return 0


def main() -> int:
    """``python -m synoptic_adapters.sim.tango_command [tango-standard] …`` (the
    options of ``synoptic sim tango``, or of ``tango-standard`` when named)."""
    parser = argparse.ArgumentParser(prog="synoptic sim")
    register(parser.add_subparsers(dest="sim", required=True))
    argv = sys.argv[1:]
    if not argv or argv[0] != "tango-standard":
        argv = ["tango", *argv]
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
