"""``synoptic adapter epics``: run the EPICS Channel Access adapter."""

from __future__ import annotations

import argparse

import uvloop

from synoptic_adapters.adapter_command import add_adapter_parser
from synoptic_adapters.config import ConfigError, load_config
from synoptic_adapters.sharding import Shard


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``epics`` to ``synoptic adapter``."""
    add_adapter_parser(adapters, "epics", "EPICS Channel Access adapter (aioca)", run)


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
