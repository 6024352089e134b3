"""`synoptic` subcommands of the gateway package."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the `synoptic` command."""
