"""``synoptic sim pva``: the simulated PV Access server."""

from __future__ import annotations

import argparse

from synoptic_adapters.sim.options import add_sim_parser, port_taken


def register(sims: argparse._SubParsersAction) -> None:
    """Add ``pva`` to ``synoptic sim``."""
    parser = add_sim_parser(
        sims, "pva", "simulated PV Access server (p4p)", run,
        counters="counter PVs", rate_help="Hz per counter",
        port=5075, port_help="private PVA port (TCP and UDP search)",
        server="the server",
    )  # fmt: skip
    parser.add_argument(
        "--image-rate", type=float, default=10.0,
        help="Hz of the 1024x1024 16-bit image (0: static)",
    )  # fmt: skip
    parser.add_argument(
        "--swap-type", type=int, default=0, choices=range(4),
        help="SWAP's type at start: 0 double, 1 string, 2 doubles array, 3 table",
    )  # fmt: skip
    parser.add_argument(
        "--no-beacons", action="store_true",
        help="send no beacons (as a server whose beacons do not reach its clients: "
             "they find it by searching alone)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; prints ``sim pva ready`` when serving."""
    from synoptic_adapters.sim.epics_db import SimSpec
    from synoptic_adapters.sim.pva_server import serve  # the p4p import

    if args.rate <= 0 or args.records < 0:
        print("synoptic sim pva: --rate must be > 0 and --records >= 0", flush=True)
        return 2
    if taken := port_taken("pva", args.interface, args.port):
        print(taken, flush=True)
        return 1
    spec = SimSpec(args.prefix, args.records, args.rate, extras=not args.no_extras)
    return serve(
        spec, args.port, image_rate=args.image_rate, fill_rate=args.fill_rate,
        interface=args.interface, swap_type=args.swap_type,
        beacons=not args.no_beacons,
    )  # fmt: skip
