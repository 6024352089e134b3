"""Ports handed out by :func:`synoptic_bus.procs.free_port`."""

from __future__ import annotations

import socket
from pathlib import Path

from synoptic_bus.procs import free_port, free_udp_tcp_port


def test_ports_handed_out_are_distinct_and_bindable() -> None:
    ports = [free_port() for _ in range(500)] + [free_udp_tcp_port() for _ in range(20)]

    assert len(set(ports)) == len(ports)  # a cluster's client/monitor/route ports
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))


def test_ports_lie_outside_the_range_outgoing_connections_take() -> None:
    """The local port of an outgoing connection comes from the kernel's ephemeral
    range: a port handed out for a server that starts slowly is never in it."""
    start = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert start >= 20_000 + 4096, "no room below the ephemeral range (Linux: 32768)"
    ports = [free_port() for _ in range(200)]
    assert all(20_000 <= p < start for p in ports), ports
    # connections made meanwhile take local ports of their own
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        outgoing = []
        for _ in range(50):
            c = socket.create_connection(server.getsockname())
            outgoing.append(c)
        taken = {c.getsockname()[1] for c in outgoing}
        for c in outgoing:
            c.close()
    assert not taken & set(ports)
