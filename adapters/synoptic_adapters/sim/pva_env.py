"""The simulated PV Access server's names and loopback settings (no p4p import)."""

from __future__ import annotations

from synoptic_adapters.sim.epics_db import SimSpec, counter_names


def pva_environment(port: int, interface: str = "127.0.0.1") -> dict[str, str]:
    """EPICS_PVA(S)_* settings that keep a server and its clients on one private
    port on loopback (use the same values on both sides)."""
    return {
        "EPICS_PVA_SERVER_PORT": str(port),
        "EPICS_PVA_BROADCAST_PORT": str(port),
        "EPICS_PVA_ADDR_LIST": "127.0.0.1",
        "EPICS_PVA_AUTO_ADDR_LIST": "NO",
        "EPICS_PVAS_SERVER_PORT": str(port),
        "EPICS_PVAS_BROADCAST_PORT": str(port),
        "EPICS_PVAS_INTF_ADDR_LIST": interface,
        "EPICS_PVAS_BEACON_ADDR_LIST": "127.0.0.1",
        "EPICS_PVAS_AUTO_BEACON_ADDR_LIST": "NO",
    }


#: Compressed image PVs (``IMAGE:<CODEC>``): the codec each is sent with.
CODEC_IMAGES = ("lz4", "bslz4", "blosc", "jpeg", "zfp")


def pva_extra_names(prefix: str) -> list[str]:
    """The PV names of everything but the counters."""
    return [
        f"{prefix}{name}"
        for name in (
            "SINE", "NOISE", "WALK", "WF1K", "WF100K", "WF:I16", "NAMES", "STATE", "MODE", "MSG",
            "MSG:SP", "SP", "SP:RO", "TABLE", "IMAGE", "MOTOR", "HISTOGRAM", "SWAP",
            "SWAP:CTL",
            *(f"IMAGE:{codec.upper()}" for codec in CODEC_IMAGES),
        )
    ]  # fmt: skip


def pv_names(spec: SimSpec) -> list[str]:
    """Every PV name the server serves (counters first)."""
    extras = pva_extra_names(spec.prefix) if spec.extras else []
    return counter_names(spec) + extras
