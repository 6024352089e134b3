"""`synoptic` subcommands of the adapters package: ``adapter …`` and ``sim …``.

Each protocol adds itself in :func:`register` with one line (its module's
``register(subparsers)``); modules import their control-system library only when
the command runs, so ``synoptic --help`` works with any extra installed.
"""

from __future__ import annotations

import argparse

from synoptic_adapters.epics import command as epics_command
from synoptic_adapters.pva import command as pva_command
from synoptic_adapters.sim import command as sim_command
from synoptic_adapters.sim import pva_command as sim_pva_command
from synoptic_adapters.sim import tango_command as sim_tango_command
from synoptic_adapters.tango import command as tango_command


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the `synoptic` command."""
    adapters = sub.add_parser("adapter", help="run a protocol adapter").add_subparsers(
        dest="adapter_command", required=True, metavar="PROTOCOL"
    )
    epics_command.register(adapters)
    pva_command.register(adapters)
    tango_command.register(adapters)
    sims = sub.add_parser("sim", help="run a simulator").add_subparsers(
        dest="sim_command", required=True, metavar="SIMULATOR"
    )
    sim_command.register(sims)
    sim_pva_command.register(sims)
    sim_tango_command.register(sims)
