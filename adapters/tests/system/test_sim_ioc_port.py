"""The simulated IOC's test helper survives its free port being taken before the
IOC binds it (EPICS then suspends the IOC instead of exiting)."""

from __future__ import annotations

import socket

import pytest

from synoptic_adapters.testing import SimIoc

pytestmark = pytest.mark.system


def test_an_ioc_whose_picked_port_is_taken_starts_on_another() -> None:
    ioc = SimIoc(records=1, extras=False)
    taken = ioc.port
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
    ):
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        udp.bind(("127.0.0.1", taken))
        ioc.start(timeout=30)
        try:
            assert ioc.port != taken
            assert ioc.process is not None and ioc.process.alive()
        finally:
            ioc.stop()
