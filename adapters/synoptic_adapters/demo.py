"""What the adapters package adds to ``synoptic demo`` (entry point ``synoptic.demo``).

:func:`components` returns the demo processes of every protocol: one function per
protocol below, each listed in ``PROTOCOLS``, so adding one is a one-line change.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from synoptic_adapters.sim.epics_db import SimSpec, build_database
from synoptic_adapters.sim.epics_ioc import ca_environment
from synoptic_adapters.sim.pva_env import pv_names, pva_environment
from synoptic_bus.demo import DemoContext, DemoProcess
from synoptic_bus.procs import free_udp_tcp_port

#: The simulators, started without the rest of the ``synoptic`` command.
_SIM = [sys.executable, "-m", "synoptic_adapters.sim"]
#: PV prefix of the demo's simulated IOC.
DEMO_PREFIX = "DEMO:"
DEMO_RECORDS = 100
#: The standard Channel Access server port (the simulated IOC has one of its own).
CA_SERVER_PORT = 5064


def callers_iocs(env: dict[str, str]) -> dict[str, str]:
    """The demo EPICS adapter's environment: the simulated IOC's, with the IOCs of
    the caller's ``EPICS_CA_ADDR_LIST`` added to its search list (an address
    without a port gets the standard 5064), so ``EPICS_CA_ADDR_LIST=HOST make
    demo`` shows the PVs of the IOCs on HOST beside the simulated ones."""
    extra = os.environ.get("EPICS_CA_ADDR_LIST", "").split()
    if not extra:
        return env
    ports = [a if ":" in a else f"{a}:{CA_SERVER_PORT}" for a in extra]
    return {**env, "EPICS_CA_ADDR_LIST": " ".join([env["EPICS_CA_ADDR_LIST"], *ports])}


def _synoptic() -> str:
    beside = Path(sys.executable).parent / "synoptic"
    return str(beside) if beside.exists() else "synoptic"


def _adapter_config(
    ctx: DemoContext, protocol: str, channels: list[str], extra: tuple[str, ...] = ()
) -> Path:
    """Write the demo ``protocol`` adapter's config monitoring ``channels`` (plus
    ``extra`` YAML lines); return its path."""
    config = ctx.var_dir / f"{protocol}-adapter.yaml"
    lines = [f"id: demo-{protocol}", "nats:", f"  url: {ctx.nats_url}", "channels:"]
    lines += [f"  - {uri}" for uri in channels]
    lines += extra
    config.write_text("\n".join(lines) + "\n")
    return config


def _sim_and_adapter(
    sim: DemoProcess, protocol: str, scheme: str, config: Path,
    env: dict[str, str] | None = None,
) -> list[DemoProcess]:  # fmt: skip
    """``sim`` (order 10) and the ``protocol`` adapter on ``config`` after it, in
    the simulator's environment (or ``env``)."""
    adapter = DemoProcess(
        f"adapter-{protocol}",
        [_synoptic(), "adapter", protocol, "--config", str(config)],
        r"adapter \S+ ready", order=20, env=dict(sim.env if env is None else env),
        banner=f"{scheme}:// channels on NATS (config {config})",
    )  # fmt: skip
    return [sim, adapter]


def epics(ctx: DemoContext) -> list[DemoProcess]:
    """The simulated IOC (100 counters at 10 Hz plus one of every other kind) and
    the EPICS adapter monitoring all of it (and reaching the caller's IOCs:
    :func:`callers_iocs`)."""
    port = free_udp_tcp_port()
    env = ca_environment(port)
    spec = SimSpec(DEMO_PREFIX, DEMO_RECORDS, 10.0)
    _, names = build_database(spec)
    config = _adapter_config(ctx, "epics", [f"ca://{name}" for name in names])
    ioc_argv = [
        *_SIM, "ioc", "--records", str(DEMO_RECORDS), "--rate", "10",
        "--prefix", DEMO_PREFIX, "--port", str(port), "--fill-rate", "1",
    ]  # fmt: skip
    sim = DemoProcess(
        "sim-ioc", ioc_argv, r"sim ioc ready", order=10, env=env,
        banner=f"CA on 127.0.0.1:{port}: {len(names)} PVs {DEMO_PREFIX}*",
    )  # fmt: skip
    return _sim_and_adapter(sim, "epics", "ca", config, callers_iocs(env))


def tango(ctx: DemoContext) -> list[DemoProcess]:
    """The simulated Tango device server (database-less, one device with every
    attribute kind) and the Tango adapter monitoring all of it."""
    from synoptic_adapters.sim.tango_command import ATTRIBUTES, READY

    # fixed by default (Tango's standard port, DemoContext.tango_port): host:port is
    # part of every tango:// channel name, so screens/tango-demo.json names 10000
    port = ctx.tango_port
    hostport = f"127.0.0.1:{port}"
    channels = [f"tango://{hostport}/sim/test/1/{name}" for name in ATTRIBUTES]
    config = _adapter_config(
        ctx, "tango", channels, ("tango:", f"  no_database_hosts: ['{hostport}']")
    )
    sim = DemoProcess(
        "sim-tango", [*_SIM, "tango", "--port", str(port)],
        READY, order=10,
        banner=f"Tango (no database) on {hostport}: device sim/test/1",
    )  # fmt: skip
    return _sim_and_adapter(sim, "tango", "tango", config)


def pva(ctx: DemoContext) -> list[DemoProcess]:
    """The simulated PV Access server (the IOC's channels plus a table, an enum and
    a 1024x1024 16-bit image at 10 Hz) and the PVA adapter monitoring all of it."""
    port = free_udp_tcp_port()
    env = pva_environment(port)
    spec = SimSpec(DEMO_PREFIX, DEMO_RECORDS, 10.0)
    names = pv_names(spec)
    config = _adapter_config(ctx, "pva", [f"pva://{name}" for name in names])
    sim_argv = [
        *_SIM, "pva", "--records", str(DEMO_RECORDS), "--rate", "10",
        "--prefix", DEMO_PREFIX, "--port", str(port), "--image-rate", "10",
        "--fill-rate", "1",
    ]  # fmt: skip
    sim = DemoProcess(
        "sim-pva", sim_argv, r"sim pva ready", order=10, env=env,
        banner=f"PVA on 127.0.0.1:{port}: {len(names)} PVs {DEMO_PREFIX}*",
    )  # fmt: skip
    return _sim_and_adapter(sim, "pva", "pva", config)


#: One function per protocol; each returns its demo processes.
PROTOCOLS: list[Callable[[DemoContext], list[DemoProcess]]] = [epics, pva, tango]


def components(ctx: DemoContext) -> list[DemoProcess]:
    """Every process this package contributes to ``synoptic demo``."""
    return [process for protocol in PROTOCOLS for process in protocol(ctx)]
