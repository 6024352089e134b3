"""The command-line options every ``synoptic adapter <protocol>`` shares."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_adapter_parser(
    adapters: argparse._SubParsersAction,
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """Add ``synoptic adapter <name>`` with ``--config``, ``--shard``, ``--id`` and
    ``--nats``; ``run`` serves it."""
    parser = adapters.add_parser(name, help=help_text)
    parser.add_argument("--config", required=True, help="YAML configuration file")
    parser.add_argument(
        "--shard", default="0/1", help="this replica's share, i/n (default 0/1)"
    )
    parser.add_argument(
        "--id", help="adapter instance id (default from config or host)"
    )
    parser.add_argument(
        "--nats", help="NATS URL (default: config, then $SYNOPTIC_NATS_URL)"
    )
    parser.set_defaults(func=run)
    return parser
