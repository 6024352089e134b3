"""``synoptic sim ioc``: the simulated EPICS IOC."""

from __future__ import annotations

import argparse

from synoptic_adapters.sim.epics_db import SCAN_BY_RATE, SimSpec
from synoptic_adapters.sim.options import add_sim_parser, port_taken


def register(sims: argparse._SubParsersAction) -> None:
    """Add ``ioc`` to ``synoptic sim``."""
    parser = add_sim_parser(
        sims, "ioc", "simulated EPICS soft IOC (epicscorelibs)", run,
        counters="counter records",
        rate_help=f"Hz per record, one of {', '.join(f'{r:g}' for r in SCAN_BY_RATE)}",
        port=5064, port_help="private CA server port", server="the CA server",
    )  # fmt: skip
    parser.add_argument("--db-out", help="also write the generated database here")


def run(args: argparse.Namespace) -> int:
    from synoptic_adapters.sim.epics_ioc import run_ioc

    spec = SimSpec(args.prefix, args.records, args.rate, extras=not args.no_extras)
    try:
        spec.scan  # noqa: B018 - validates the rate
    except ValueError as exc:
        print(f"synoptic sim ioc: {exc}", flush=True)
        return 2
    if taken := port_taken("ioc", args.interface, args.port):
        print(taken, flush=True)
        return 1
    return run_ioc(spec, args.port, args.db_out, args.fill_rate, args.interface)
