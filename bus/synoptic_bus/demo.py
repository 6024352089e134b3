"""``synoptic demo``: the whole system in the foreground on one machine.

Starts nats-server (JetStream data under ``var/``), creates the streams
(``synoptic bus init``: last values and one hour of history), starts PostgreSQL
(the HDB++ archive under ``var/``), then every component that an
installed package offers through the ``synoptic.demo`` entry point group (a function
``components(ctx) -> list[DemoProcess]``), in ``order``; prints what runs where and
stops everything on SIGINT (Ctrl-C) or SIGTERM, whenever it lands (the main
thread only waits for signals; :mod:`synoptic_bus.stopsignal`). A port already
in use or a child that dies before it is ready ends the demo at once with one
line saying which and what to do. A child that exits (nats-server included) is reaped at
once and started again with backoff, saying so in the log
(:class:`~synoptic_bus.supervise.Supervisor`).
"""

from __future__ import annotations

import argparse
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from synoptic_bus.natsserver import NatsServer
from synoptic_bus.postgres import PostgresServer
from synoptic_bus.procs import Process, ProcessError
from synoptic_bus.stopsignal import StopSignals
from synoptic_bus.supervise import Child, StoppingError, Supervisor
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
    #: the demo's OpenID Connect provider (people sign in there)
    idp_port: int = 8180


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
    ready_timeout: float = 60.0  # seconds to wait for ``ready``


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="run NATS, simulators, adapters and gateway")
    parser.add_argument("--var", default="var/demo", help="folder for data and files")
    parser.add_argument("--nats-port", type=int, default=4222,
                        help="NATS client port")  # fmt: skip
    parser.add_argument("--http-port", type=int, default=8000,
                        help="the gateway's port (the UI)")  # fmt: skip
    parser.add_argument("--tango-port", type=int, default=10000,
                        help="simulated Tango device (the demo screens name 10000)")  # fmt: skip
    parser.add_argument("--idp-port", type=int, default=8180,
                        help="the demo's sign-in provider (Keycloak)")  # fmt: skip
    parser.add_argument("--history-bytes", type=int, default=None, metavar="BYTES",
                        help="raw history budget (`synoptic bus init --history-bytes`)")  # fmt: skip
    parser.set_defaults(func=run)


def log(message: str) -> None:
    """A line of the demo's own (children's lines are prefixed with their name)."""
    print(f"demo: {message}", flush=True)


#: The demo's fixed ports: (option, what listens there).
PORTS = (
    ("--nats-port", "nats_port", "NATS"),
    ("--http-port", "http_port", "the gateway (web UI)"),
    ("--tango-port", "tango_port", "the simulated Tango device"),
    ("--idp-port", "idp_port", "the sign-in provider"),
)


def port_in_use(port: int) -> bool:
    """Whether a TCP server listens on ``port`` (any IPv4 address of this host)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def ports_taken(args: argparse.Namespace) -> list[str]:
    """One line per fixed port of the demo that is already in use."""
    return [
        f"port {getattr(args, attr)} ({what}) is already in use: stop the program "
        f"listening there (`ss -ltnp 'sport = :{getattr(args, attr)}'` names it) "
        f"or pass {option} PORT (make demo DEMO_ARGS='{option} PORT')"
        for option, attr, what in PORTS
        if port_in_use(getattr(args, attr))
    ]


def why(exc: ProcessError) -> str:
    """One line out of a child's failure to start: what happened and its last
    line of output (the whole output was echoed above)."""
    text = str(exc)
    head = text.split("; output:", 1)[0].splitlines()[0]
    head = re.sub(r" before printing '.*'$", " before it was ready", head)
    head = re.sub(r" did not print '.*' in", " was not ready in", head)
    lines = [ln.strip() for ln in text.split("; output:", 1)[-1].splitlines()]
    last = next((ln for ln in reversed(lines) if ln and "; output:" not in ln), "")
    return f"{head} ({last})" if last and last != head else head


class Demo:
    """What ``synoptic demo`` starts, in order, under one :class:`Supervisor`."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.var = Path(args.var).resolve()
        (self.var / "jetstream").mkdir(parents=True, exist_ok=True)
        self.nats = NatsServer(
            port=args.nats_port, store_dir=self.var / "jetstream", echo=False,
            max_payload=MAX_PAYLOAD,  # images of several MB, as in production
        )  # fmt: skip
        self.archive = PostgresServer(
            data_dir=self.var / "postgres" / "data", dbname="postgres"
        )
        self.supervisor = Supervisor(log)
        #: why the start failed (one line), None while it goes well
        self.failure: str | None = None
        self.running = False

    def start(self) -> None:
        """Start everything; on failure set :attr:`failure` (a stop ends it
        quietly). Runs in a thread of its own: the main thread waits for signals."""
        try:
            self._start()
        except StoppingError:
            pass
        except ProcessError as exc:
            self.failure = why(exc)
        except Exception as exc:
            self.failure = f"{type(exc).__name__}: {exc}"

    def _start(self) -> None:
        nats, archive, supervisor = self.nats, self.archive, self.supervisor
        proc = supervisor.add(Child("nats-server", nats.spawn, NatsServer.READY, 20))
        print(
            f"nats-server   pid {proc.pid} {nats.url} "
            f"(JetStream in {self.var / 'jetstream'})",
            flush=True,
        )
        budget = [] if self.args.history_bytes is None else [
            "--history-bytes", str(self.args.history_bytes)]  # fmt: skip
        argv = [sys.executable, "-m", "synoptic_bus.cli", "bus", "init",
                "--nats", nats.url, *budget]  # fmt: skip
        init = supervisor.run_once("bus-init", argv, timeout=60)
        if init.popen.returncode != 0:
            lines = init.output().strip().splitlines() or ["no output"]
            raise ProcessError(f"bus init failed; output:\n{lines[-1]}")
        print(init.output().strip(), flush=True)
        proc = supervisor.add(
            Child("postgres", archive.spawn, PostgresServer.READY, 60)
        )
        print(f"postgres      pid {proc.pid} {archive.dsn} (HDB++ archive)", flush=True)
        args = self.args
        ctx = DemoContext(
            nats.url, self.var, args.http_port, args.tango_port, archive.dsn,
            args.idp_port,
        )  # fmt: skip
        specs: list[DemoProcess] = []
        for ep in entry_points(group="synoptic.demo"):
            specs.extend(ep.load()(ctx))
        for spec in sorted(specs, key=lambda s: s.order):
            proc = supervisor.add(
                Child(
                    spec.name, _spawner(spec, nats.url), spec.ready, spec.ready_timeout
                )
            )
            print(f"{spec.name:<13} pid {proc.pid} {spec.banner}", flush=True)
        self.running = True
        print("demo running; Ctrl-C stops everything", flush=True)

    def stop(self) -> None:
        """Stop every child (a start under way ends too)."""
        self.supervisor.stop()
        self.archive.close()  # removes its folder only where it made a temporary one
        self.nats.close()


def run(args: argparse.Namespace) -> int:
    """Entry of ``synoptic demo``: 0 after a signal, 1 when the start failed."""
    signals = StopSignals()  # first: a signal at any later moment stops cleanly
    taken = ports_taken(args)
    if taken:
        for line in taken:
            log(line)
        return 1
    demo = Demo(args)

    def start() -> None:
        demo.start()
        signals.wake()

    starter = threading.Thread(target=start, daemon=True, name="demo-start")
    starter.start()
    try:
        while not signals.wait(1.0) and demo.failure is None:
            pass
    finally:
        demo.stop()
        starter.join(15)
    failed = demo.failure is not None and not signals.stopping
    if failed:
        log(f"cannot start: {demo.failure}")
    print("demo stopped", flush=True)
    return 1 if failed else 0


def _spawner(spec: DemoProcess, nats_url: str) -> Callable[[], Process]:
    """Starts ``spec``'s process (each time it is called)."""
    env = {"SYNOPTIC_NATS_URL": nats_url, **spec.env}
    return lambda: Process(
        spec.name, spec.argv, env=env, echo=True, keep_stdin_open=spec.keep_stdin_open
    )
