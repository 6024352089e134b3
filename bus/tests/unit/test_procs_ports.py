"""Ports handed out by :func:`synoptic_bus.procs.free_port`."""

from __future__ import annotations

import socket

from synoptic_bus.procs import free_port, free_udp_tcp_port


def test_ports_handed_out_are_distinct_and_bindable() -> None:
    ports = [free_port() for _ in range(500)] + [free_udp_tcp_port() for _ in range(20)]

    assert len(set(ports)) == len(ports)  # a cluster's client/monitor/route ports
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))
