"""Start a private PostgreSQL cluster as a child process (tests, the demo and
benchmarks): ``initdb`` into a folder of its own, then ``postgres`` in the
foreground on a free loopback port, stopped by PID. Never the system service.

The server is Debian's (``apt-get install postgresql``, made by the Makefile).
PostgreSQL refuses to run as root: under root both run as the ``postgres`` user
(``setpriv``, which execs: the PID is the server's).
"""

from __future__ import annotations

import glob
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from synoptic_bus.procs import Process, ProcessError, free_port

log = logging.getLogger(__name__)

#: Where Debian installs the server's programs (newest version first).
BIN_GLOB = "/usr/lib/postgresql/*/bin"


def postgres_bin() -> Path:
    """The folder holding ``initdb`` and ``postgres``."""
    found = sorted(
        glob.glob(BIN_GLOB), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    for folder in found:
        if (Path(folder) / "initdb").exists():
            return Path(folder)
    raise ProcessError("PostgreSQL not found: run `make install-postgres`")


def _reachable_by_postgres(data: Path) -> bool:
    """Whether the ``postgres`` user can reach ``data``'s parent folder (made
    here if missing), where the data folder is created and handed to it."""
    data.parent.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run(
        [*_as_postgres(), "test", "-x", str(data.parent)], check=False, timeout=10
    )
    return probe.returncode == 0


def _as_postgres() -> list[str]:
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]


@dataclass
class PostgresServer:
    """One PostgreSQL server on loopback with trust auth for user ``postgres``;
    ``start()`` returns when it accepts connections, with database ``dbname``."""

    port: int = field(default_factory=free_port)
    data_dir: Path | None = None
    dbname: str = "hdb"
    name: str = "postgres"
    echo: bool = False
    process: Process | None = None
    _own_dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def dsn(self) -> str:
        """A libpq connection string of the database."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={self.dbname}"

    def _prepare(self) -> Path:
        if (
            self.data_dir is not None
            and self._own_dir is None
            and os.geteuid() == 0
            and not _reachable_by_postgres(self.data_dir)
        ):  # e.g. under a root-only home or pytest's folder: a temporary one
            log.warning(
                "%s is out of the postgres user's reach: the database lives in a "
                "temporary folder until close()", self.data_dir,
            )  # fmt: skip
            self.data_dir = None
        if self.data_dir is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="synoptic-pg-")
            self.data_dir = Path(self._own_dir.name) / "data"
            if os.geteuid() == 0:  # the server's user makes its data folder in it
                user = pwd.getpwnam("postgres")
                os.chown(self._own_dir.name, user.pw_uid, user.pw_gid)
        data = self.data_dir
        if (data / "PG_VERSION").exists():
            return data
        data.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            for path in (data.parent, data):
                os.chown(path, user.pw_uid, user.pw_gid)
        subprocess.run(
            [*_as_postgres(), str(postgres_bin() / "initdb"), "-D", str(data),
             "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        return data

    READY = r"ready to accept connections"

    def start(self, timeout: float = 60.0) -> PostgresServer:
        self.spawn().wait_for(self.READY, timeout)
        self._create_db()
        return self

    def spawn(self) -> Process:
        """Start the server (``initdb`` first if its folder is new) without
        waiting for it. Database ``postgres`` exists at once; ``start`` also
        creates ``dbname``."""
        data = self._prepare()
        argv = [
            *_as_postgres(), str(postgres_bin() / "postgres"), "-D", str(data),
            "-p", str(self.port), "-h", "127.0.0.1", "-k", str(data),
            "-c", "fsync=off", "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off", "-c", "shared_buffers=64MB",
            "-c", "max_connections=50",
        ]  # fmt: skip
        self.process = Process(self.name, argv, echo=self.echo)
        return self.process

    def _create_db(self) -> None:
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
            autocommit=True,
        ) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (self.dbname,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.dbname}"')

    def stop(self) -> None:
        if self.process:
            self.process.stop()
            self.process = None

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self._own_dir.name, ignore_errors=True)
            self._own_dir.cleanup()
            self._own_dir = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
