"""The ``synoptic`` command. Bus commands live here; other packages add theirs
through the ``synoptic.commands`` entry point group (a ``register(subparsers)``
function each), so this package imports none of them."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from importlib.metadata import entry_points

from nats.errors import NoServersError

from synoptic_bus import archiver, buscmd, demo, rollup, screencmd
from synoptic_bus.prereq import PrerequisiteError
from synoptic_bus.store import StoreError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synoptic",
        description="Synoptic: control-system data on NATS and the web.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    buscmd.register(sub)
    screencmd.register(sub)
    demo.register(sub)
    archiver.register(sub)
    rollup.register(sub)
    for ep in sorted(entry_points(group="synoptic.commands"), key=lambda e: e.name):
        ep.load()(sub)  # a missing extra fails loudly here
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
