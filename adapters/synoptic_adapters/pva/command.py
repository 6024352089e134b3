"""``synoptic adapter pva``: run the EPICS PV Access adapter."""

from __future__ import annotations

import argparse
from typing import Any

from synoptic_adapters.adapter_command import add_adapter_parser, serve_source
from synoptic_adapters.source import Source


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``pva`` to ``synoptic adapter``."""
    add_adapter_parser(adapters, "pva", "EPICS PV Access adapter (p4p)", run)


def run(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve on a uvloop event loop."""
    return serve_source(args, "pva", "pva", _source)


def _source(settings: dict[str, Any]) -> Source:
    from synoptic_adapters.pva.source import PvaSource  # the p4p import

    return PvaSource(
        connect_timeout=float(settings.get("connect_timeout", 5.0)), settings=settings
    )
