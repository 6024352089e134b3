"""``synoptic sim tango``: the simulated Tango device server."""

from __future__ import annotations

import argparse
import sys

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


def run(args: argparse.Namespace) -> int:
    """Serve until killed; prints ``Ready to accept request`` when serving."""
    from synoptic_adapters.sim.tango_device import device_names, serve

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
    """``python -m synoptic_adapters.sim.tango_command …`` (same options)."""
    parser = argparse.ArgumentParser(prog="synoptic sim")
    register(parser.add_subparsers(dest="sim", required=True))
    args = parser.parse_args(["tango", *sys.argv[1:]])
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
