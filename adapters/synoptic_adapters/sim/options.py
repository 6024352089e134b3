"""The command-line options both simulated EPICS servers (``synoptic sim ioc`` and
``synoptic sim pva``) share: their counters, where they listen, the extras."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable


def port_taken(sim: str, host: str, port: int) -> str | None:
    """The line to print when TCP ``port`` on ``host`` is already in use (a
    server there would never be ready: EPICS suspends, omniORB exits 0)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return (
                f"synoptic sim {sim}: cannot listen on {host}:{port} "
                f"({exc.strerror}): stop the program listening there or pass "
                f"--port with a free one"
            )
    return None


def add_sim_parser(
    sims: argparse._SubParsersAction,
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
    *,
    counters: str,
    rate_help: str,
    port: int,
    port_help: str,
    server: str,
) -> argparse.ArgumentParser:
    """Add ``synoptic sim <name>`` with ``--records`` (help ``counters``), ``--rate``,
    ``--prefix``, ``--port`` (default ``port``), ``--interface`` (where ``server``
    listens), ``--no-extras`` and ``--fill-rate``; ``run`` serves it."""
    parser = sims.add_parser(name, help=help_text)
    parser.add_argument("--records", type=int, default=100, help=counters)
    parser.add_argument("--rate", type=float, default=10.0, help=rate_help)
    parser.add_argument("--prefix", default="SIM:", help="PV name prefix")
    parser.add_argument("--port", type=int, default=port, help=port_help)
    parser.add_argument(
        "--interface", default="127.0.0.1",
        help=f"address {server} listens on (0.0.0.0: other hosts/containers too)",
    )  # fmt: skip
    parser.add_argument("--no-extras", action="store_true", help="counters only")
    parser.add_argument(
        "--fill-rate", type=float, default=0.0,
        help="Hz at which to rewrite the 100k-point waveform (0: only on puts)",
    )  # fmt: skip
    parser.set_defaults(func=run)
    return parser
