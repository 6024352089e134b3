"""The system under test as processes: NATS (one server or a 3-node cluster), a value
source (the synthetic publisher, or the simulated IOC + EPICS adapter) and N gateway
processes — or gateway URLs given from outside, in which case nothing is started.

Every process is started with :class:`synoptic_bus.procs.Process` on free loopback
ports, waited for (readiness line or ``/readyz``), and stopped by PID.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kit.publisher import channel_uris
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, ProcessError, free_port, free_udp_tcp_port

KIT = Path(__file__).resolve().parent


@dataclass
class StackConfig:
    """What to start. ``gateway_urls`` non-empty means: start nothing, use these."""

    channels: int = 100
    rate: float = 10.0
    gateways: int = 1
    gateway_urls: list[str] = field(default_factory=list)
    nats_nodes: int = 1
    source: str = "synthetic"  # or "epics": simulated IOC + EPICS adapter
    phased: bool = True  # synthetic source: spread channels over the period
    waveform_points: int = 0  # synthetic source: f8 arrays of this many points
    echo: bool = False


@dataclass
class Stack:
    """Running processes by role (``nats``, ``source``, ``gateway``)."""

    config: StackConfig
    nats: list[NatsServer] = field(default_factory=list)
    processes: dict[str, list[Process]] = field(default_factory=dict)
    gateway_urls: list[str] = field(default_factory=list)
    channel_uris: list[str] = field(default_factory=list)
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def nats_urls(self) -> list[str]:
        return [server.url for server in self.nats]

    def pids(self) -> dict[str, list[int]]:
        """PIDs by role, for the CPU/RSS sampler."""
        roles = {role: [p.pid for p in procs] for role, procs in self.processes.items()}
        roles["nats"] = [s.process.pid for s in self.nats if s.process]
        return {role: pids for role, pids in roles.items() if pids}

    def add(self, role: str, process: Process) -> Process:
        self.processes.setdefault(role, []).append(process)
        return process

    def close(self) -> None:
        """Stop everything this stack started, gateways first, by PID."""
        for role in ("gateway", "source", "ioc"):
            for process in self.processes.get(role, []):
                process.stop()
        for server in self.nats:
            server.close()
        if self._tmp:
            self._tmp.cleanup()


def start_nats(stack: Stack, nodes: int, echo: bool) -> None:
    """One nats-server, or a cluster of ``nodes`` with routes on loopback."""
    if nodes == 1:
        stack.nats.append(NatsServer(echo=echo).start())
        return
    cluster_ports = [free_port() for _ in range(nodes)]
    routes = ",".join(f"nats://127.0.0.1:{port}" for port in cluster_ports)
    servers = []
    for index, port in enumerate(cluster_ports):
        args = ["--cluster_name", "synoptic-lt", "--cluster", f"nats://127.0.0.1:{port}",
                "--routes", routes]  # fmt: skip
        server = NatsServer(name=f"nats{index}", extra_args=args, echo=echo)
        servers.append(server)
    # each node blocks until it is ready; routes connect as the others come up
    for server in servers:
        server.start()
    for server in servers:
        assert server.process is not None
        server.process.wait_for(r"JetStream cluster|Server is ready", 30)
    stack.nats.extend(servers)


def start_source(stack: Stack, config: StackConfig) -> None:
    """The value source, publishing through the first NATS node."""
    if config.source == "epics":
        start_epics(stack, config)
        return
    if config.source != "synthetic":
        raise ValueError(f"unknown source {config.source!r} (synthetic or epics)")
    argv = [sys.executable, str(KIT / "publisher.py"), "--nats", stack.nats_urls[0],
            "--channels", str(config.channels), "--rate", str(config.rate),
            "--replicas", str(len(stack.nats)),
            "--phased" if config.phased else "--no-phased",
            "--waveform", str(config.waveform_points)]  # fmt: skip
    publisher = stack.add("source", Process("publisher", argv, echo=config.echo))
    publisher.wait_for(r"publisher ready", 60)
    stack.channel_uris = channel_uris(config.channels)


#: PV prefix of the simulated IOC the load test starts.
EPICS_PREFIX = "LT:"


def start_epics(stack: Stack, config: StackConfig) -> None:
    """The simulated IOC (``synoptic sim ioc``: N counters at R Hz, CA on a private
    loopback port) and the EPICS adapter (``synoptic adapter epics``) monitoring
    every counter, each waited for by its readiness line."""
    synoptic = synoptic_executable()
    ca_port = free_udp_tcp_port()
    ca_env = {"EPICS_CA_ADDR_LIST": "127.0.0.1", "EPICS_CA_AUTO_ADDR_LIST": "NO",
              "EPICS_CA_SERVER_PORT": str(ca_port),
              "EPICS_CAS_INTF_ADDR_LIST": "127.0.0.1",
              "EPICS_CAS_SERVER_PORT": str(ca_port)}  # fmt: skip
    ioc_argv = [synoptic, "sim", "ioc", "--records", str(config.channels),
                "--rate", f"{config.rate:g}", "--prefix", EPICS_PREFIX,
                "--port", str(ca_port), "--no-extras"]  # fmt: skip
    ioc = stack.add("ioc", Process("sim-ioc", ioc_argv, env=ca_env, echo=config.echo,
                                   keep_stdin_open=True))  # fmt: skip
    ioc.wait_for(r"sim ioc ready", 60)
    width = max(5, len(str(config.channels - 1)))
    uris = [f"ca://{EPICS_PREFIX}CNT:{k:0{width}d}" for k in range(config.channels)]
    stack._tmp = stack._tmp or tempfile.TemporaryDirectory(prefix="synoptic-lt-")
    adapter_config = Path(stack._tmp.name) / "adapter-epics.yaml"
    lines = ["id: loadtest-epics", "nats:", f"  url: {stack.nats_urls[0]}", "channels:"]
    lines += [f"  - {uri}" for uri in uris]
    adapter_config.write_text("\n".join(lines) + "\n")
    adapter_argv = [synoptic, "adapter", "epics", "--config", str(adapter_config)]
    adapter = stack.add("source", Process("adapter-epics", adapter_argv, env=ca_env,
                                          echo=config.echo))  # fmt: skip
    adapter.wait_for(r"adapter \S+ ready", 90)
    stack.channel_uris = uris


def synoptic_executable() -> str:
    """The ``synoptic`` command beside this Python (the workspace venv)."""
    beside = Path(sys.executable).parent / "synoptic"
    found = str(beside) if beside.exists() else shutil.which("synoptic")
    if not found:
        raise ProcessError("`synoptic` not found: run `make install`")
    return found


def wait_ready(url: str, process: Process, timeout: float = 60.0) -> None:
    """Poll ``/readyz`` until it answers 200 (or the process dies)."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while time.monotonic() < deadline:
        if not process.alive():
            raise ProcessError(f"{process.name} exited:\n{process.output()}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last_error = str(exc)
        time.sleep(0.2)
    raise ProcessError(f"{process.name} not ready in {timeout} s ({last_error}):\n"
                       f"{process.output()}")  # fmt: skip


def start_gateways(stack: Stack, count: int, echo: bool) -> None:
    """``count`` gateway processes, spread over the NATS nodes."""
    synoptic = synoptic_executable()
    started: list[tuple[str, Process]] = []
    for index in range(count):
        port = free_port()
        nats_url = stack.nats_urls[index % len(stack.nats_urls)]
        argv = [synoptic, "gateway", "--host", "127.0.0.1", "--port", str(port)]
        env = {"SYNOPTIC_NATS_URL": nats_url}
        process = Process(f"gateway{index}", argv, env=env, echo=echo)
        stack.add("gateway", process)
        started.append((f"http://127.0.0.1:{port}", process))
    for url, process in started:
        process.wait_for(r"ready on http://", 60)
        wait_ready(url, process)
        stack.gateway_urls.append(url)


def start_stack(config: StackConfig) -> Stack:
    """Start what is missing; on any failure stop what was started and re-raise."""
    stack = Stack(config)
    try:
        if config.gateway_urls:
            stack.gateway_urls = list(config.gateway_urls)
            stack.channel_uris = channel_uris(config.channels)
            return stack
        start_nats(stack, config.nats_nodes, config.echo)
        start_source(stack, config)
        start_gateways(stack, config.gateways, config.echo)
    except BaseException:
        stack.close()
        raise
    return stack
