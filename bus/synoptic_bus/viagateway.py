"""``--gateway URL`` of ``synoptic put``, ``command`` and ``screens put|delete``:
the write goes through a gateway, signed in, instead of straight to the bus.

The gateway package offers the functions (entry point group ``synoptic.gateway``:
``request`` for puts and commands, ``screen`` for the screen API), so this package
imports nothing of it. They raise :class:`ConnectionError` (with a one-line reason)
when the gateway or the provider cannot be reached or the sign-in is refused.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

GROUP = "synoptic.gateway"


def add_option(parser: argparse.ArgumentParser) -> None:
    """The ``--gateway`` option."""
    parser.add_argument(
        "--gateway", metavar="URL", default=None,
        help="go through this gateway (http://HOST:PORT), signed in: its role file "
        "decides and its audit names you ($SYNOPTIC_CLIENT_ID/$SYNOPTIC_CLIENT_SECRET "
        "for a service, else the sign-in of `synoptic auth login`)",
    )  # fmt: skip


def function(name: str) -> Callable[..., Any]:
    """The gateway package's ``name`` function (request, screen)."""
    found = entry_points(group=GROUP, name=name)
    if not found:
        raise ConnectionError("--gateway needs the synoptic-gateway package installed")
    return next(iter(found)).load()
