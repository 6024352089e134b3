"""``synoptic adapter tango``: run the Tango adapter."""

from __future__ import annotations

import argparse
import logging
import os
import sys

import uvloop

from synoptic_adapters.adapter_command import add_adapter_parser
from synoptic_adapters.config import ConfigError, load_config
from synoptic_adapters.sharding import Shard


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``tango`` to ``synoptic adapter``."""
    parser = add_adapter_parser(
        adapters, "tango", "Tango Controls adapter (pytango)", run
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="subscription worker processes (whole devices dealt out evenly; "
        "default: tango.workers of the configuration, else 1 = one process)",
    )


def run(args: argparse.Namespace) -> int:
    """Validate the configuration (with its ``tango:`` section), then serve."""
    from synoptic_adapters.tango.settings import TangoSettings, TangoSettingsError

    try:
        config = load_config(args.config, "tango")
        shard = Shard.parse(args.shard)
        settings = TangoSettings.from_section(config.section("tango"))
    except (ConfigError, TangoSettingsError, ValueError) as exc:
        print(f"synoptic adapter tango: {config_source(args)}: {exc}", flush=True)
        return 2
    if args.nats:
        config.nats_url = args.nats
    workers = args.workers if args.workers is not None else settings.workers
    if workers < 1:
        print(f"synoptic adapter tango: --workers {workers}: expected >= 1")
        return 2
    if workers > 1:
        from synoptic_adapters.tango.supervisor import supervise

        return supervise(
            config, str(args.config), workers, shard=shard, adapter_id=args.id
        )
    from synoptic_adapters.runner import run_adapter
    from synoptic_adapters.tango.settings import skip_pytango_telemetry

    skip_pytango_telemetry()  # before tango is imported
    from synoptic_adapters.tango.source import TangoSource

    source = TangoSource(settings)
    code = uvloop.run(run_adapter(source, config, shard=shard, adapter_id=args.id))
    # The adapter has stopped: channels published as stopped, NATS flushed and
    # closed. Exit without tearing down cppTango: destroying thousands of live
    # subscriptions while events still arrive is slow and can crash (decision
    # 0010); the operating system releases them.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def config_source(args: argparse.Namespace) -> str:
    """The configuration file named on the command line."""
    return str(args.config)
