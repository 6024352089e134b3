"""``synoptic adapter epics``: run the EPICS Channel Access adapter."""

from __future__ import annotations

import argparse

from synoptic_adapters.adapter_command import add_source_adapter


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``epics`` to ``synoptic adapter`` (aioca is imported when it runs)."""
    add_source_adapter(
        adapters, "epics", "ca", "EPICS Channel Access adapter (aioca)",
        "synoptic_adapters.epics.source:EpicsSource",
    )  # fmt: skip
