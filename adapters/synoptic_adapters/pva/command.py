"""``synoptic adapter pva``: run the EPICS PV Access adapter."""

from __future__ import annotations

import argparse

import uvloop

from synoptic_adapters.adapter_command import add_adapter_parser
from synoptic_adapters.config import ConfigError, load_config
from synoptic_adapters.sharding import Shard


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``pva`` to ``synoptic adapter``."""
    add_adapter_parser(adapters, "pva", "EPICS PV Access adapter (p4p)", run)


def run(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve on a uvloop event loop."""
    try:
        config = load_config(args.config, "pva")
        shard = Shard.parse(args.shard)
    except (ConfigError, ValueError) as exc:
        print(f"synoptic adapter pva: {exc}", flush=True)
        return 2
    if args.nats:
        config.nats_url = args.nats
    from synoptic_adapters.pva.source import PvaSource  # the p4p import
    from synoptic_adapters.runner import run_adapter

    settings = config.section("pva")
    source = PvaSource(
        connect_timeout=float(settings.get("connect_timeout", 5.0)), settings=settings
    )
    return uvloop.run(run_adapter(source, config, shard=shard, adapter_id=args.id))
