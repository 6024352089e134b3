"""The command-line options every ``synoptic adapter <protocol>`` shares."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import uvloop

from synoptic_adapters.config import ConfigError, load_config
from synoptic_adapters.sharding import Shard

if TYPE_CHECKING:
    from synoptic_adapters.source import Source

#: Seconds before an unconnected channel is reported as never connected, unless
#: the protocol section's ``connect_timeout`` says otherwise.
DEFAULT_CONNECT_TIMEOUT = 5.0


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


def serve_source(
    args: argparse.Namespace,
    proto: str,
    command: str,
    make_source: Callable[[dict[str, Any]], Source],
) -> int:
    """Validate the configuration of ``synoptic adapter <command>``, then serve
    ``make_source(section)`` (imported only now: its control-system library) on
    a uvloop event loop; 2 with the reason on a bad configuration."""
    try:
        config = load_config(args.config, proto)
        shard = Shard.parse(args.shard)
    except (ConfigError, ValueError) as exc:
        print(f"synoptic adapter {command}: {exc}", flush=True)
        return 2
    if args.nats:
        config.nats_url = args.nats
    from synoptic_adapters.runner import run_adapter

    source = make_source(config.section(command))
    return uvloop.run(run_adapter(source, config, shard=shard, adapter_id=args.id))


def add_source_adapter(
    adapters: argparse._SubParsersAction,
    command: str,
    proto: str,
    help_text: str,
    source_class: str,
) -> None:
    """Add ``synoptic adapter <command>`` serving the ``proto://`` channels of its
    configuration with ``source_class`` (``module:Class``, imported only when the
    command runs: its control-system library), built with the ``connect_timeout``
    of its configuration section (default :data:`DEFAULT_CONNECT_TIMEOUT`)."""

    def make_source(settings: dict[str, Any]) -> Source:
        module, name = source_class.split(":")
        cls = getattr(importlib.import_module(module), name)
        timeout = float(settings.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT))
        return cls(connect_timeout=timeout, settings=settings)

    def run(args: argparse.Namespace) -> int:
        return serve_source(args, proto, command, make_source)

    add_adapter_parser(adapters, command, help_text, run)
