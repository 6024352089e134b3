"""``synoptic sim ioc``: the simulated EPICS IOC."""

from __future__ import annotations

import argparse

from synoptic_adapters.sim.epics_db import SCAN_BY_RATE, SimSpec


def register(sims: argparse._SubParsersAction) -> None:
    """Add ``ioc`` to ``synoptic sim``."""
    parser = sims.add_parser("ioc", help="simulated EPICS soft IOC (epicscorelibs)")
    parser.add_argument("--records", type=int, default=100, help="counter records")
    parser.add_argument(
        "--rate", type=float, default=10.0,
        help=f"Hz per record, one of {', '.join(f'{r:g}' for r in SCAN_BY_RATE)}",
    )  # fmt: skip
    parser.add_argument("--prefix", default="SIM:", help="PV name prefix")
    parser.add_argument("--port", type=int, default=5064, help="private CA server port")
    parser.add_argument(
        "--interface", default="127.0.0.1",
        help="address the CA server listens on (0.0.0.0: other hosts/containers too)",
    )  # fmt: skip
    parser.add_argument("--no-extras", action="store_true", help="counters only")
    parser.add_argument(
        "--fill-rate", type=float, default=0.0,
        help="Hz at which to rewrite the 100k-point waveform (0: only on puts)",
    )  # fmt: skip
    parser.add_argument("--db-out", help="also write the generated database here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from synoptic_adapters.sim.epics_ioc import run_ioc

    spec = SimSpec(args.prefix, args.records, args.rate, extras=not args.no_extras)
    try:
        spec.scan  # noqa: B018 - validates the rate
    except ValueError as exc:
        print(f"synoptic sim ioc: {exc}", flush=True)
        return 2
    return run_ioc(spec, args.port, args.db_out, args.fill_rate, args.interface)
