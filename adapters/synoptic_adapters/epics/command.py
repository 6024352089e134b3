"""``synoptic adapter epics``: run the EPICS Channel Access adapter."""

from __future__ import annotations

import argparse

import uvloop

from synoptic_adapters.config import ConfigError, load_config
from synoptic_adapters.sharding import Shard


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``epics`` to ``synoptic adapter``."""
    parser = adapters.add_parser("epics", help="EPICS Channel Access adapter (aioca)")
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


def run(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve on a uvloop event loop."""
    try:
        config = load_config(args.config, "ca")
        shard = Shard.parse(args.shard)
    except (ConfigError, ValueError) as exc:
        print(f"synoptic adapter epics: {exc}", flush=True)
        return 2
    if args.nats:
        config.nats_url = args.nats
    from synoptic_adapters.epics.source import EpicsSource  # the aioca import
    from synoptic_adapters.runner import run_adapter

    settings = config.section("epics")
    source = EpicsSource(
        connect_timeout=float(settings.get("connect_timeout", 5.0)), settings=settings
    )
    return uvloop.run(run_adapter(source, config, shard=shard, adapter_id=args.id))
