"""``synoptic sim pva``: the simulated PV Access server."""

from __future__ import annotations

import argparse


def register(sims: argparse._SubParsersAction) -> None:
    """Add ``pva`` to ``synoptic sim``."""
    parser = sims.add_parser("pva", help="simulated PV Access server (p4p)")
    parser.add_argument("--records", type=int, default=100, help="counter PVs")
    parser.add_argument("--rate", type=float, default=10.0, help="Hz per counter")
    parser.add_argument("--prefix", default="SIM:", help="PV name prefix")
    parser.add_argument(
        "--port", type=int, default=5075, help="private PVA port (TCP and UDP search)"
    )
    parser.add_argument(
        "--interface", default="127.0.0.1",
        help="address the server listens on (0.0.0.0: other hosts/containers too)",
    )  # fmt: skip
    parser.add_argument("--no-extras", action="store_true", help="counters only")
    parser.add_argument(
        "--image-rate", type=float, default=10.0,
        help="Hz of the 1024x1024 16-bit image (0: static)",
    )  # fmt: skip
    parser.add_argument(
        "--fill-rate", type=float, default=0.0,
        help="Hz at which to rewrite the 100k-point waveform (0: only on puts)",
    )  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; prints ``sim pva ready`` when serving."""
    from synoptic_adapters.sim.epics_db import SimSpec
    from synoptic_adapters.sim.pva_server import serve  # the p4p import

    if args.rate <= 0 or args.records < 0:
        print("synoptic sim pva: --rate must be > 0 and --records >= 0", flush=True)
        return 2
    spec = SimSpec(args.prefix, args.records, args.rate, extras=not args.no_extras)
    return serve(
        spec, args.port, image_rate=args.image_rate, fill_rate=args.fill_rate,
        interface=args.interface,
    )  # fmt: skip
