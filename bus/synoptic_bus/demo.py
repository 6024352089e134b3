"""``synoptic demo``: the whole system in the foreground on one machine.

Starts nats-server (JetStream data under ``var/``), creates the streams
(``synoptic bus init``: last values and one hour of history), starts PostgreSQL
(the HDB++ archive under ``var/``), then every component that an
installed package offers through the ``synoptic.demo`` entry point group (a function
``components(ctx) -> list[DemoProcess]``), in ``order``; prints what runs where and
stops everything on Ctrl-C. A child that exits (nats-server included) is reaped at
once and started again with backoff, saying so in the log
(:class:`~synoptic_bus.supervise.Supervisor`).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process
from synoptic_bus.supervise import Child, Supervisor
from synoptic_schemas.codec import MAX_PAYLOAD


@dataclass
class DemoContext:
    """What components need to know to start."""

    nats_url: str
    var_dir: Path
    http_port: int = 8000
    #: the simulated Tango device server's port (part of every tango:// name of
    #: the demo screens: they name 10000)
    tango_port: int = 10000
    #: the demo's HDB++ archive (PostgreSQL) as a libpq connection string
    archive_dsn: str = ""


@dataclass
class DemoProcess:
    """One child process of the demo."""

    name: str
    argv: list[str]
    ready: str  # regex of the line that says it is ready
    order: int = 50  # lower starts first
    env: dict[str, str] = field(default_factory=dict)
    banner: str = ""  # what to tell the user (URL, channels …)
    keep_stdin_open: bool = False


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="run NATS, simulators, adapters and gateway")
    parser.add_argument("--var", default="var/demo", help="folder for data and files")
    parser.add_argument("--nats-port", type=int, default=4222)
    parser.add_argument("--http-port", type=int, default=8000)
    parser.add_argument("--tango-port", type=int, default=10000,
                        help="simulated Tango device (the demo screens name 10000)")  # fmt: skip
    parser.set_defaults(func=run)


def log(message: str) -> None:
    """A line of the demo's own (children's lines are prefixed with their name)."""
    print(f"demo: {message}", flush=True)


def run(args: argparse.Namespace) -> int:
    var = Path(args.var).resolve()
    (var / "jetstream").mkdir(parents=True, exist_ok=True)
    nats = NatsServer(
        port=args.nats_port, store_dir=var / "jetstream", echo=False,
        max_payload=MAX_PAYLOAD,  # images of several MB, as in production
    )  # fmt: skip
    archive = PostgresServer(data_dir=var / "postgres" / "data", dbname="postgres")
    supervisor = Supervisor(log)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        proc = supervisor.add(Child("nats-server", nats.spawn, NatsServer.READY, 20))
        print(
            f"nats-server   pid {proc.pid} {nats.url} "
            f"(JetStream in {var / 'jetstream'})",
            flush=True,
        )
        init = subprocess.run(
            [sys.executable, "-m", "synoptic_bus.cli", "bus", "init",
             "--nats", nats.url],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if init.returncode != 0:
            print(f"bus init failed: {init.stderr.strip()}", flush=True)
            return 1
        print(init.stdout.strip(), flush=True)
        proc = supervisor.add(
            Child("postgres", archive.spawn, PostgresServer.READY, 60)
        )
        print(f"postgres      pid {proc.pid} {archive.dsn} (HDB++ archive)", flush=True)
        ctx = DemoContext(nats.url, var, args.http_port, args.tango_port, archive.dsn)
        specs: list[DemoProcess] = []
        for ep in entry_points(group="synoptic.demo"):
            specs.extend(ep.load()(ctx))
        for spec in sorted(specs, key=lambda s: s.order):
            proc = supervisor.add(
                Child(spec.name, _spawner(spec, nats.url), spec.ready)
            )
            print(f"{spec.name:<13} pid {proc.pid} {spec.banner}", flush=True)
        print("demo running; Ctrl-C stops everything", flush=True)
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        supervisor.stop()
        archive.close()  # removes its folder only where it had to make a temporary one
        nats.close()
        print("demo stopped", flush=True)
    return 0


def _spawner(spec: DemoProcess, nats_url: str) -> Callable[[], Process]:
    """Starts ``spec``'s process (each time it is called)."""
    env = {"SYNOPTIC_NATS_URL": nats_url, **spec.env}
    return lambda: Process(
        spec.name, spec.argv, env=env, echo=True, keep_stdin_open=spec.keep_stdin_open
    )
