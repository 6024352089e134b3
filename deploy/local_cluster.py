"""A local multi-node rehearsal of the production layout, on loopback:

- 3 nats-server nodes clustered with JetStream, the last-value stream R3 (file),
  the production accounts and per-role permissions (``k8s/base/nats/accounts.conf``);
- nginx (Debian's package) as the load balancer: a TCP (stream) front for NATS —
  the Kubernetes ``nats`` Service — and an HTTP/WebSocket front for N gateways;
- a health router standing in for readiness probes and the endpoints controller:
  it polls every gateway's ``/readyz`` and every node's ``/healthz`` each 0.5 s
  and takes failing ones out of nginx's upstreams (graceful reload), so a hung
  (SIGSTOPped) gateway or a dead node stops receiving new connections;
- the simulated IOC and its EPICS adapter, the simulated Tango device server and
  its adapter (``--no-tango`` leaves the Tango pair out).

``python deploy/local_cluster.py`` (``make cluster``) runs it in the foreground until
Ctrl-C or SIGTERM (whenever it lands: a start under way is undone) and prints
``cluster ready: …``. Tests use :class:`LocalCluster` directly
(start, the process handles, :meth:`LocalCluster.stop`).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from synoptic_bus.natsserver import nats_server_executable
from synoptic_bus.procs import Process, ProcessError, free_port, stop_all
from synoptic_bus.stopsignal import StopSignals

REPO = Path(__file__).resolve().parents[1]
ACCOUNTS = REPO / "k8s/base/nats/accounts.conf"
NGINX = "/usr/sbin/nginx"
STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"
ROLES = ("adapter", "gateway", "reader", "rollup", "alarms", "admin", "sys")


@dataclass
class Plan:
    """What to run and where (ports default to free ones)."""

    var: Path = REPO / "var/cluster"
    gateways: int = 3
    records: int = 100
    rate: float = 10.0
    prefix: str = "LOCAL:"
    tango: bool = True
    #: nginx's read timeout on /ws: the gateways' WebSocket pings (uvicorn's, every
    #: 20 s) keep idle sockets alive; a hung gateway's sockets are cut after it.
    ws_read_timeout: float = 60.0
    http_port: int = field(default_factory=free_port)
    nats_port: int = field(default_factory=free_port)


@dataclass
class NatsNode:
    """One cluster node: its ports, store and process."""

    index: int
    client_port: int
    cluster_port: int
    monitor_port: int
    store: Path
    process: Process | None = None

    @property
    def name(self) -> str:
        return f"nats-{self.index}"


@dataclass
class Gateway:
    """One gateway process behind the load balancer."""

    index: int
    port: int
    process: Process | None = None

    @property
    def name(self) -> str:
        return f"gw-{self.index}"


def wait_port(
    port: int,
    timeout: float = 60.0,
    host: str = "127.0.0.1",
    stop: threading.Event | None = None,
) -> None:
    """Block until something accepts TCP connections on ``port`` (raise once
    ``stop`` is set)."""
    stop = stop or threading.Event()
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise ProcessError(f"nothing listens on {host}:{port}") from None
            if stop.wait(0.05):
                raise ProcessError("stopping") from None


def http_ok(port: int, path: str, timeout: float = 0.5) -> bool:
    """Whether ``GET path`` on loopback ``port`` answers 2xx within ``timeout``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        return 200 <= conn.getresponse().status < 300
    except OSError:
        return False
    finally:
        conn.close()


class LocalCluster:
    """The rehearsal's processes; :meth:`start` returns when all serve."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.var = plan.var
        self.passwords = {role: secrets.token_hex(12) for role in ROLES}
        self.nodes = [
            NatsNode(i, free_port(), free_port(), free_port(), self.var / f"nats-{i}")
            for i in range(3)
        ]
        self.gateways = [Gateway(i, free_port()) for i in range(plan.gateways)]
        self.ca_port = free_port()
        self.tango_port = free_port()
        self.nginx: Process | None = None
        self.sims: dict[str, Process] = {}
        self.adapters: dict[str, Process] = {}
        self.rollup: Process | None = None
        self._router: threading.Thread | None = None
        self._stopping = threading.Event()
        self._routing = threading.Event()  # cleared: the router leaves nginx be
        self._routing.set()
        self._route_round = threading.Lock()  # held during one routing round
        self._down: set[str] = set()
        self._applied: frozenset[str] = frozenset()
        self._spawned: list[Process] = []  # every process started, for stop()
        self._spawn_lock = threading.Lock()

    def spawn(
        self, name: str, argv: list[str], env: dict[str, str] | None = None
    ) -> Process:
        """Start a process that :meth:`stop` will end; none once stopping."""
        with self._spawn_lock:
            if self._stopping.is_set():
                raise ProcessError(f"{name}: the cluster is stopping")
            process = Process(name, argv, env=env)
            self._spawned = [p for p in self._spawned if p.alive()] + [process]
        return process

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` of a retry loop; raise once stopping."""
        if self._stopping.wait(seconds):
            raise ProcessError("the cluster is stopping")

    # -- addresses --------------------------------------------------------------
    def nats_url(self, role: str) -> str:
        """The NATS URL for ``role`` through the load balancer (like the Service)."""
        return f"nats://{role}:{self.passwords[role]}@127.0.0.1:{self.plan.nats_port}"

    @property
    def http_url(self) -> str:
        """The gateways' URL through the load balancer."""
        return f"http://127.0.0.1:{self.plan.http_port}"

    @property
    def ws_url(self) -> str:
        """The WebSocket endpoint through the load balancer."""
        return f"ws://127.0.0.1:{self.plan.http_port}/ws"

    @property
    def down(self) -> frozenset[str]:
        """Gateways and nodes the health router has taken out of rotation (in
        the configuration nginx runs now)."""
        return self._applied

    @property
    def env(self) -> dict[str, str]:
        """The passwords as the NATS configuration reads them."""
        return {f"NATS_{r.upper()}_PASSWORD": p for r, p in self.passwords.items()}

    # -- lifecycle --------------------------------------------------------------
    def start(self) -> LocalCluster:
        """Start everything in dependency order; raise (after cleaning up) if a
        part does not come up."""
        if self.var.exists():
            shutil.rmtree(self.var)
        self.var.mkdir(parents=True)
        try:
            for node in self.nodes:  # in parallel: routes form as they come up
                self.start_nats(node, wait=False)
            for node in self.nodes:
                self.start_nats(node, wait=True)
            self.write_nginx_config()
            self.nginx = self.spawn("nginx", self.nginx_argv())
            wait_port(self.plan.nats_port, stop=self._stopping)
            self.init_store()
            self.start_simulators()
            for proto in self.protocols:  # adapters and gateways start in parallel
                self.start_adapter(proto, wait=False)
            for gateway in self.gateways:
                self.start_gateway(gateway, wait=False)
            self.rollup = self.spawn(  # history blocks (decision 0027), its own user
                "rollup", [*self.synoptic, "rollup"],
                env={"SYNOPTIC_NATS_URL": self.nats_url("rollup")},
            )  # fmt: skip
            for proto in self.protocols:
                self.start_adapter(proto, wait=True)
            for gateway in self.gateways:
                self.start_gateway(gateway, wait=True)
            self.rollup.wait_for(r"rollup ready", 60)
            wait_port(self.plan.http_port, stop=self._stopping)
            self._router = threading.Thread(
                target=self._route, daemon=True, name="health-router"
            )
            self._router.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop everything together, each process group by its own PID (SIGTERM,
        SIGKILL after ``timeout``); nothing starts from the moment this is called."""
        self._stopping.set()
        with self._spawn_lock:
            processes = list(self._spawned)
        stop_all(processes, timeout)
        if self._router:
            self._router.join(5)

    @property
    def protocols(self) -> list[str]:
        return ["epics", "tango"] if self.plan.tango else ["epics"]

    # -- NATS -------------------------------------------------------------------
    def nats_config(self, node: NatsNode) -> Path:
        routes = "\n".join(f"    nats://127.0.0.1:{n.cluster_port}" for n in self.nodes)
        conf = self.var / f"{node.name}.conf"
        accounts = self.var / "accounts.conf"
        if not accounts.exists():  # once: nodes starting in parallel read it
            shutil.copy(ACCOUNTS, accounts.with_suffix(".tmp"))
            accounts.with_suffix(".tmp").rename(accounts)
        conf.write_text(
            f"""server_name: {node.name}
listen: 127.0.0.1:{node.client_port}
http: 127.0.0.1:{node.monitor_port}
write_deadline: 10s
jetstream {{
  store_dir: "{node.store}"
  max_memory_store: 256MB
  max_file_store: 10GB  # as k8s/base/nats/nats.conf: the history budgets are reserved
}}
cluster {{
  name: synoptic-local
  listen: 127.0.0.1:{node.cluster_port}
  routes: [
{routes}
  ]
  no_advertise: true
}}
include "accounts.conf"
"""
        )
        return conf

    def start_nats(self, node: NatsNode, wait: bool = True) -> None:
        """Start (or restart, same ports and store) one node; with ``wait``
        only wait for a started one to be ready."""
        if node.process is None or not node.process.alive():
            conf = self.nats_config(node)
            node.process = self.spawn(
                node.name, [nats_server_executable(), "-c", str(conf)], env=self.env
            )
        if wait:
            node.process.wait_for(r"Server is ready", 120)

    def jetstream_leader(self) -> str | None:
        """The JetStream meta leader as a node's monitor reports it, if any."""
        for node in self.nodes:
            conn = http.client.HTTPConnection("127.0.0.1", node.monitor_port, timeout=1)
            try:
                conn.request("GET", "/jsz")
                leader = json.loads(conn.getresponse().read()).get("meta_cluster", {})
                if leader.get("leader"):
                    return str(leader["leader"])
            except (OSError, ValueError):
                continue
            finally:
                conn.close()
        return None

    def init_store(self, timeout: float = 120.0) -> None:
        """Create CS_LAST (file, R3) as the admin, as the bus-init Job does, once
        the JetStream cluster has elected its meta leader (retried meanwhile)."""
        deadline = time.monotonic() + timeout
        while self.jetstream_leader() is None:
            if time.monotonic() > deadline:
                logs = "\n".join(
                    f"--- {n.name}\n{n.process.output()[-1500:] if n.process else ''}"
                    for n in self.nodes
                )
                raise ProcessError(f"JetStream elected no meta leader:\n{logs}")
            self.pause(0.2)
        argv = [*self.synoptic, "bus", "init", "--storage", "file", "--replicas", "3"]
        while True:
            init = self.spawn(
                "bus-init", argv, env={"SYNOPTIC_NATS_URL": self.nats_url("admin")}
            )
            try:
                code = init.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                code = None
            init.stop(timeout=2)
            if code == 0:
                return
            if time.monotonic() > deadline:
                raise ProcessError(f"bus init failed:\n{init.output()}")
            self.pause(0.5)

    # -- nginx ------------------------------------------------------------------
    def nginx_argv(self) -> list[str]:
        prefix = self.var / "nginx"
        return [NGINX, "-e", "stderr", "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"),
                "-g", "daemon off;"]  # fmt: skip

    def write_nginx_config(self) -> None:
        """(Re)write nginx.conf: upstreams without the members marked down."""
        prefix = self.var / "nginx"
        (prefix / "tmp").mkdir(parents=True, exist_ok=True)

        def member(name: str, port: int) -> str:
            down = " down" if name in self._down else ""
            return f"    server 127.0.0.1:{port} max_fails=1 fail_timeout=10s{down};"

        nats = "\n".join(member(n.name, n.client_port) for n in self.nodes)
        gws = "\n".join(member(g.name, g.port) for g in self.gateways)
        (prefix / "nginx.conf").write_text(
            f"""load_module {STREAM_MODULE};
worker_processes 1;
pid {prefix}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 8192; }}
stream {{
  upstream nats {{
{nats}
  }}
  server {{
    listen 127.0.0.1:{self.plan.nats_port};
    proxy_pass nats;
    proxy_connect_timeout 1s;
    proxy_timeout 24h;
  }}
}}
http {{
  access_log off;
  client_body_temp_path {prefix}/tmp/body;
  proxy_temp_path {prefix}/tmp/proxy;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  upstream gateways {{
{gws}
  }}
  server {{
    listen 127.0.0.1:{self.plan.http_port};
    proxy_http_version 1.1;
    proxy_set_header Host $host;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_connect_timeout 1s;
    proxy_next_upstream error timeout http_502 http_503 http_504;
    proxy_next_upstream_timeout 10s;
    proxy_max_temp_file_size 0;
    location /ws {{
      proxy_pass http://gateways;
      proxy_read_timeout {self.plan.ws_read_timeout:g}s;
      proxy_send_timeout 1h;
    }}
    location / {{
      proxy_pass http://gateways;
      proxy_read_timeout 3s;
    }}
  }}
}}
"""
        )

    def pause_routing(self) -> None:
        """Stop the health router (after its round in progress, if any): nginx
        keeps its configuration and only its own passive checks act."""
        self._routing.clear()
        with self._route_round:
            pass

    def resume_routing(self) -> None:
        self._routing.set()

    def _route(self) -> None:
        """Health router: mark failing gateways and nodes down, reload nginx;
        :attr:`down` changes once nginx runs the new configuration."""
        while not self._stopping.wait(0.5):
            with self._route_round:
                if self._routing.is_set():
                    self._route_once()

    def _route_once(self) -> None:
        """One round of the health router."""
        down = {g.name for g in self.gateways if not http_ok(g.port, "/readyz")}
        down |= {n.name for n in self.nodes if not http_ok(n.monitor_port, "/healthz")}
        if len(down) == len(self.gateways) + len(self.nodes):
            return  # everything down: keep routing rather than route nowhere
        nginx = self.nginx
        if down == self._down or nginx is None or not nginx.alive():
            return
        previous, self._down = self._down, down
        self.write_nginx_config()
        mark = nginx.mark()
        nginx.signal(signal.SIGHUP)  # graceful reload
        try:  # applied once the old worker stops accepting (it logs this first)
            nginx.wait_for(r"start worker process", 10, since=mark)
            nginx.wait_for(r"gracefully shutting down", 10, since=mark)
        except ProcessError:
            self._down = previous  # not applied: retry on the next round
            return
        self._applied = frozenset(down)

    # -- simulators, adapters, gateways -----------------------------------------
    @property
    def synoptic(self) -> list[str]:
        return [str(Path(sys.executable).parent / "synoptic")]

    def start_simulators(self) -> None:
        """The simulated IOC (and Tango device server)."""
        self.start_ioc()
        if self.plan.tango:
            self.start_tango()

    def start_ioc(self) -> None:
        """Start (or restart, same CA port) the simulated IOC."""
        ioc = self.spawn("sim-ioc", [
            *self.synoptic, "sim", "ioc", "--records", str(self.plan.records),
            "--rate", f"{self.plan.rate:g}", "--prefix", self.plan.prefix,
            "--port", str(self.ca_port),
        ])  # fmt: skip
        self.sims["ioc"] = ioc
        ioc.wait_for(r"sim ioc ready", 120)

    def start_tango(self) -> None:
        """Start (or restart, same port) the simulated Tango device server."""
        tango = self.spawn("sim-tango", [
            *self.synoptic, "sim", "tango", "--port", str(self.tango_port),
        ])  # fmt: skip
        self.sims["tango"] = tango
        tango.wait_for(r"Ready to accept request", 120)

    def adapter_config(self, proto: str) -> Path:
        config = self.var / f"adapter-{proto}.yaml"
        lines = [f"id: local-{proto}", "nats:", "  prefix: cs", "  storage: file"]
        if proto == "epics":
            lines += [
                "epics:",
                f"  addr_list: '127.0.0.1:{self.ca_port}'",
                "  auto_addr_list: false",
                f"  server_port: {self.ca_port}",
                f"  repeater_port: {self.ca_port + 1}",
            ]
        if proto == "tango":
            lines += [
                "tango:",
                f"  no_database_hosts: ['127.0.0.1:{self.tango_port}']",
            ]
        config.write_text("\n".join(lines) + "\n")
        return config

    def start_adapter(self, proto: str, wait: bool = True) -> None:
        """Start (or restart) the adapter of ``proto``; with ``wait`` only wait
        for a started one to be ready."""
        process = self.adapters.get(proto)
        if process is None or not process.alive():
            config = self.adapter_config(proto)
            argv = [*self.synoptic, "adapter", proto, "--config", str(config)]
            env = {"SYNOPTIC_NATS_URL": self.nats_url("adapter")}
            process = self.spawn(f"adapter-{proto}", argv, env=env)
            self.adapters[proto] = process
        if wait:
            process.wait_for(r"adapter \S+ ready", 120)

    def start_gateway(self, gateway: Gateway, wait: bool = True) -> None:
        """Start (or restart) one gateway on its own port; with ``wait`` only
        wait for a started one to be ready: serving HTTP and connected to NATS
        (before that it answers subscriptions "the bus is down")."""
        if gateway.process is None or not gateway.process.alive():
            gateway.process = self.spawn(gateway.name, [
                *self.synoptic, "gateway", "--host", "127.0.0.1",
                "--port", str(gateway.port), "--id", gateway.name,
                "--no-seed-screens",  # bus init seeds; gateways may not create
            ], env={"SYNOPTIC_NATS_URL": self.nats_url("gateway")})  # fmt: skip
        if wait:
            gateway.process.wait_for(r"ready on http", 120)
            gateway.process.wait_for(r"NATS connected", 60)


def main(argv: list[str] | None = None) -> int:
    """``make cluster``: run the rehearsal in the foreground until a signal."""
    signals = StopSignals()  # first: a signal at any later moment stops cleanly
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateways", type=int, default=3)
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--http-port", type=int, default=8080)
    parser.add_argument("--nats-port", type=int, default=14222)
    parser.add_argument("--tango", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--var", type=Path, default=REPO / "var/cluster")
    args = parser.parse_args(argv)
    if not Path(NGINX).exists() or not Path(STREAM_MODULE).exists():
        print("nginx missing: apt-get install -y nginx-light libnginx-mod-stream")
        return 1
    plan = Plan(
        var=args.var, gateways=args.gateways, records=args.records, rate=args.rate,
        tango=args.tango, http_port=args.http_port, nats_port=args.nats_port,
    )  # fmt: skip
    cluster = LocalCluster(plan)
    failure: list[str] = []

    def start() -> None:
        try:
            cluster.start()
        except Exception as exc:  # one line, never a traceback
            failure.append((str(exc) or type(exc).__name__).splitlines()[0])
        else:
            print(
                f"cluster ready: {cluster.http_url} ({plan.gateways} gateways behind "
                f"nginx; NATS 3 nodes behind 127.0.0.1:{plan.nats_port}; admin URL "
                f"in {plan.var}/admin.url)",
                flush=True,
            )
            (plan.var / "admin.url").write_text(cluster.nats_url("admin") + "\n")
            os.chmod(plan.var / "admin.url", 0o600)
        finally:
            signals.wake()

    starter = threading.Thread(target=start, daemon=True, name="cluster-start")
    starter.start()
    try:
        while not signals.wait(1.0) and not failure:
            pass
    finally:
        with contextlib.suppress(Exception):
            cluster.stop()
        starter.join(15)
    if failure and not signals.stopping:
        print(f"cluster: cannot start: {failure[0]}", flush=True)
        return 1
    print("cluster stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
