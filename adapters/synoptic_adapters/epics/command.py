"""``synoptic adapter epics``: run the EPICS Channel Access adapter."""

from __future__ import annotations

import argparse
from typing import Any

from synoptic_adapters.adapter_command import add_adapter_parser, serve_source
from synoptic_adapters.source import Source


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``epics`` to ``synoptic adapter``."""
    add_adapter_parser(adapters, "epics", "EPICS Channel Access adapter (aioca)", run)


def run(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve on a uvloop event loop."""
    return serve_source(args, "ca", "epics", _source)


def _source(settings: dict[str, Any]) -> Source:
    from synoptic_adapters.epics.source import EpicsSource  # the aioca import

    return EpicsSource(
        connect_timeout=float(settings.get("connect_timeout", 5.0)), settings=settings
    )
