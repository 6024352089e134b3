"""``synoptic adapter pva``: run the EPICS PV Access adapter."""

from __future__ import annotations

import argparse

from synoptic_adapters.adapter_command import add_source_adapter


def register(adapters: argparse._SubParsersAction) -> None:
    """Add ``pva`` to ``synoptic adapter`` (p4p is imported when it runs)."""
    add_source_adapter(
        adapters, "pva", "pva", "EPICS PV Access adapter (p4p)",
        "synoptic_adapters.pva.source:PvaSource",
    )  # fmt: skip
