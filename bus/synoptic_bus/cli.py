"""The ``synoptic`` command. Bus commands live here; other packages add theirs
through the ``synoptic.commands`` entry point group (a ``register(subparsers)``
function each), so this package imports none of them. A bus command run
imports its own module alone (``synoptic screens …`` starts without the
archiver's database driver, the demo's or the other packages' commands)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from importlib import import_module
from importlib.metadata import entry_points

from nats.errors import NoServersError

from synoptic_bus.prereq import PrerequisiteError
from synoptic_bus.store import StoreError

#: The bus's own commands, by the module of this package that registers them.
OWN: dict[str, str] = {
    "bus": "buscmd",
    "tail": "buscmd",
    "get": "buscmd",
    "put": "buscmd",
    "command": "buscmd",
    "screens": "screencmd",
    "demo": "demo",
    "archiver": "archiver",
    "rollup": "rollup",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; ``command`` (one of :data:`OWN`): that one's alone."""
    parser = argparse.ArgumentParser(
        prog="synoptic",
        description="Synoptic: control-system data on NATS and the web.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in OWN:
        import_module(f"synoptic_bus.{OWN[command]}").register(sub)
        return parser
    for module in dict.fromkeys(OWN.values()):
        import_module(f"synoptic_bus.{module}").register(sub)
    for ep in sorted(entry_points(group="synoptic.commands"), key=lambda e: e.name):
        ep.load()(sub)  # a missing extra fails loudly here
    return parser


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(command_of(argv)).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    result = args.func(args)
    if asyncio.iscoroutine(result):
        try:
            result = asyncio.run(result)
        except KeyboardInterrupt:
            return 130
        except (
            PrerequisiteError,
            StoreError,
            NoServersError,
            ConnectionRefusedError,
        ) as exc:
            # the bus is not there or not as expected: one line, no traceback
            # (docs/troubleshooting.md)
            print(f"synoptic {args.command}: {exc}", file=sys.stderr)
            return 3
        except TimeoutError:
            print(
                f"synoptic {args.command}: no answer from NATS in time (the bus is "
                "busy or unreachable): try again",
                file=sys.stderr,
            )
            return 3
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
