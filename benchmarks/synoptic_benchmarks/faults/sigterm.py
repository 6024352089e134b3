"""SIGTERM to stopped, per process: each started, sent SIGTERM once ready (as
``docker stop``, systemd and Kubernetes do), and timed until it and every
process it started are gone (:mod:`synoptic_bus.stopcheck`). The simulators,
the adapters and a gateway ``tries`` times each; ``synoptic demo`` and ``make
cluster`` (a minute or more to start on a busy 2-core machine) fewer. Each
process kind's row is also printed on stderr as soon as it is measured.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synoptic_adapters.sim.epics_ioc import ca_environment
from synoptic_adapters.sim.pva_env import pva_environment
from synoptic_adapters.sim.tango_command import READY as TANGO_READY
from synoptic_adapters.testing import SIM, synoptic_command
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_bus.stopcheck import sigterm_try

REPO = Path(__file__).resolve().parents[3]
BOUND = 30.0
#: A start: its argv, readiness line and environment.
Start = tuple[list[str], str, dict[str, str]]


def _summary(name: str, make: Callable[[], Start], tries: int) -> dict[str, Any]:
    seconds: list[float] = []
    left = 0
    codes: set[int | None] = set()
    for _ in range(tries):
        argv, ready, env = make()
        result = sigterm_try(name, argv, ready=ready, delay=None, bound=BOUND, env=env)
        seconds.append(result.seconds)
        left += bool(result.left)
        codes.add(result.returncode)
    done = sorted(s for s in seconds if s != float("inf"))
    row = {
        "process": name,
        "tries": tries,
        "stopped_max_s": round(done[-1], 2) if done else None,
        "stopped_p50_s": round(statistics.median(done), 2) if done else None,
        "not_stopped_within_s": BOUND if len(done) < tries else None,
        "tries_left_running": left,
        "exit_codes": sorted(str(c) for c in codes),
    }
    print(json.dumps(row), file=sys.stderr, flush=True)  # a long run's progress
    return row


def _adapter_config(folder: Path, proto: str, url: str, channels: list[str],
                    section: dict[str, Any] | None = None) -> Path:  # fmt: skip
    path = folder / f"{proto}.yaml"
    config = {"id": f"bench-term-{proto}", "nats": {"url": url}, "channels": channels}
    if section:
        config[proto] = section
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def sigterm_report(
    tries: int, demo_tries: int, cluster_tries: int
) -> list[dict[str, Any]]:
    """Every process kind (see the module's docstring)."""
    synoptic = synoptic_command()
    rows: list[dict[str, Any]] = []
    for name, sim, ready in (
        ("sim ioc", "ioc", "sim ioc ready"),
        ("sim pva", "pva", "sim pva ready"),
        ("sim tango", "tango", TANGO_READY),
    ):

        def start(sim: str = sim, ready: str = ready) -> Start:
            port = str(free_udp_tcp_port())
            return [*SIM, sim, "--port", port], ready, {}

        rows.append(_summary(name, start, tries))
    with tempfile.TemporaryDirectory(prefix="synoptic-bench-term-") as tmp:
        folder = Path(tmp)
        nats = NatsServer(store_dir=folder / "js").start()
        ca, pva, tango = free_udp_tcp_port(), free_udp_tcp_port(), free_udp_tcp_port()
        sims = [
            Process("ioc", [*SIM, "ioc", "--records", "20", "--port", str(ca)],
                    env=ca_environment(ca)),
            Process("pva", [*SIM, "pva", "--records", "20", "--port", str(pva)],
                    env=pva_environment(pva)),
            Process("tango", [*SIM, "tango", "--port", str(tango)]),
        ]  # fmt: skip
        try:
            for proc, line in zip(
                sims, ("sim ioc ready", "sim pva ready", TANGO_READY), strict=True
            ):
                proc.wait_for(line, 120)
            counters = [f"SIM:CNT:{i:05d}" for i in range(20)]
            configs = {
                "epics": (_adapter_config(folder, "epics", nats.url,
                                          [f"ca://{c}" for c in counters]),
                          ca_environment(ca)),
                "pva": (_adapter_config(folder, "pva", nats.url,
                                        [f"pva://{c}" for c in counters]),
                        pva_environment(pva)),
                "tango": (_adapter_config(
                    folder, "tango", nats.url,
                    [f"tango://127.0.0.1:{tango}/sim/test/1/{a}"
                     for a in ("double", "long", "spectrum", "slow")],
                    {"no_database_hosts": [f"127.0.0.1:{tango}"]}), {}),
            }  # fmt: skip
            for proto, (path, env) in configs.items():

                def start(proto: str = proto, path: Path = path,
                          env: dict[str, str] = env) -> Start:  # fmt: skip
                    argv = [synoptic, "adapter", proto, "--config", str(path)]
                    return argv, r"adapter \S+ ready", env

                rows.append(_summary(f"adapter {proto}", start, tries))

            def gateway() -> Start:
                argv = [synoptic, "gateway", "--port", str(free_port()),
                        "--nats", nats.url]  # fmt: skip
                return argv, r"synoptic gateway \S+ ready on", {}

            rows.append(_summary("gateway", gateway, tries))
        finally:
            for proc in sims:
                proc.stop()
            nats.close()
    if demo_tries:
        var = Path(tempfile.mkdtemp(prefix="synoptic-bench-demo-"))
        var.chmod(0o755)
        try:

            def demo() -> Start:
                argv = [sys.executable, "-m", "synoptic_bus.cli", "demo",
                        "--var", str(var), "--nats-port", str(free_port()),
                        "--http-port", str(free_port()),
                        "--tango-port", str(free_udp_tcp_port())]  # fmt: skip
                return argv, r"demo running", {}

            rows.append(_summary("synoptic demo", demo, demo_tries))
        finally:
            shutil.rmtree(var, ignore_errors=True)
    if cluster_tries and Path("/usr/sbin/nginx").exists():
        with tempfile.TemporaryDirectory(prefix="synoptic-bench-cluster-") as tmp:

            def cluster(tmp: str = tmp) -> Start:
                argv = [sys.executable, str(REPO / "deploy/local_cluster.py"),
                        "--gateways", "1", "--no-tango", "--records", "10",
                        "--http-port", str(free_port()),
                        "--nats-port", str(free_port()),
                        "--var", str(Path(tmp) / "cluster")]  # fmt: skip
                return argv, r"cluster ready", {}

            rows.append(_summary("make cluster (1 gateway)", cluster, cluster_tries))
    return rows
