"""``python -m synoptic_adapters.sim ioc|pva|tango|tango-standard …``: the
simulators with the options of ``synoptic sim``, started without importing the
rest of the ``synoptic`` command (every package's subcommands): a simulator
restarted by a test, a benchmark or the demo serves seconds sooner on a busy
machine."""

from __future__ import annotations

import argparse
import logging
import sys

from synoptic_adapters.sim import command, pva_command, tango_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synoptic_adapters.sim")
    sims = parser.add_subparsers(dest="sim_command", required=True, metavar="SIMULATOR")
    command.register(sims)
    pva_command.register(sims)
    tango_command.register(sims)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
