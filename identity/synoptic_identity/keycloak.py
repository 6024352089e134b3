"""Keycloak as a child process on a loopback port, for the demo, tests and
benchmarks, like nats-server: started from a private copy of a template database
that already holds the demo realm, stopped by PID.

``make idp`` installs the distribution from Maven Central (checksum-pinned) into
``.tools/keycloak-<version>``, runs ``kc.sh build`` once, copies the sign-in theme
(``theme/synoptic``) into its ``themes/`` and imports the demo realm into the
template (``python -m synoptic_identity.keycloak template``). A start then skips
schema creation and realm import: the JVM and Keycloak's bootstrap only. Keycloak
runs in production mode (``start --optimized``): templates and theme resources
cached, resources served with a month's ``max-age``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from synoptic_bus.procs import Process, ProcessError, free_port
from synoptic_identity.realm import LOGIN_THEME, REALM, realms

KEYCLOAK_VERSION = "26.7.3"
#: the repository checkout this package runs from (``.tools/`` lives there)
CHECKOUT = Path(__file__).resolve().parents[2]
#: JVM options: C1 only (a third less CPU to start on two cores; the demo's load
#: needs no C2) and a smaller heap than Keycloak's default
JAVA_OPTS_APPEND = "-XX:TieredStopAtLevel=1 -Xms64m -Xmx384m"
#: the line Keycloak prints once it serves requests
READY = r"Keycloak \S+ on JVM .* started in"
BOOTSTRAPPED = r"Bootstrap completed"
#: the demo realm's sign-in theme, as Keycloak's ``themes/`` gets it
THEME = Path(__file__).resolve().parent / "theme" / LOGIN_THEME


def keycloak_home() -> Path:
    """``$SYNOPTIC_KEYCLOAK_HOME``, else the checkout's ``.tools/keycloak-<v>``."""
    if env := os.environ.get("SYNOPTIC_KEYCLOAK_HOME"):
        home = Path(env)
    else:
        home = CHECKOUT / ".tools" / f"keycloak-{KEYCLOAK_VERSION}"
    if not (home / "bin" / "kc.sh").exists():
        raise ProcessError(f"Keycloak not found in {home}: run `make idp`")
    return home


def _theme_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def install_theme(home: Path) -> None:
    """Copy the sign-in theme into Keycloak's ``themes/`` (replaced whole)."""
    target = home / "themes" / LOGIN_THEME
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(THEME, target)


def check_theme(home: Path) -> None:
    """Raise unless ``home`` has the current sign-in theme (``make idp`` puts it)."""
    if _theme_files(home / "themes" / LOGIN_THEME) != _theme_files(THEME):
        raise ProcessError(
            f"no current sign-in theme in {home / 'themes'}: run `make idp`"
        )


def realm_digest() -> str:
    """A digest of the demo realm (a template made from another one is stale)."""
    text = json.dumps(realms(), sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def template_dir() -> Path:
    """The template database of the demo realm, checked to be current."""
    folder = Path(
        os.environ.get("SYNOPTIC_KEYCLOAK_TEMPLATE")
        or keycloak_home().parent / "keycloak-realm"
    )
    stamp = folder / "realm.digest"
    if not stamp.exists() or stamp.read_text().strip() != realm_digest():
        raise ProcessError(
            f"no current demo realm template in {folder}: run `make idp`"
        )
    return folder


def _db_url(folder: Path) -> str:
    return f"jdbc:h2:file:{folder / 'keycloakdb'};NON_KEYWORDS=VALUE"


def make_template(home: Path, out: Path) -> None:
    """Install the sign-in theme; import the realms into a fresh database in
    ``out`` (replaced whole)."""
    install_theme(home)
    work = Path(tempfile.mkdtemp(prefix="keycloak-realm-", dir=out.parent))
    try:
        files = work / "realms"
        files.mkdir()
        for realm in realms():
            (files / f"{realm['realm']}-realm.json").write_text(json.dumps(realm))
        db = work / "db"
        db.mkdir()
        subprocess.run(
            [str(home / "bin" / "kc.sh"), "import", "--optimized",
             f"--dir={files}", f"--db-url={_db_url(db)}"],
            env={**os.environ, "JAVA_OPTS_APPEND": JAVA_OPTS_APPEND},
            check=True, timeout=1800,
        )  # fmt: skip
        (db / "realm.digest").write_text(realm_digest() + "\n")
        for trace in db.glob("*.trace.db"):
            trace.unlink()
        if out.exists():
            shutil.rmtree(out)
        db.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass
class KeycloakServer:
    """One Keycloak on loopback serving the demo realm. ``start()`` returns when
    its realm answers; ``data_dir`` (a temporary folder by default) gets a copy of
    the template on first use and keeps its keys and sessions across restarts."""

    port: int = field(default_factory=free_port)
    data_dir: Path | None = None
    host: str = "127.0.0.1"
    #: the address browsers and tokens name (``--hostname``); default
    #: ``http://HOST:PORT``
    public_url: str | None = None
    echo: bool = False
    name: str = "keycloak"
    process: Process | None = None
    _own_data: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def issuer(self) -> str:
        """The demo realm's issuer URL (``iss`` of its tokens)."""
        return f"{self.url}/realms/{REALM}"

    def argv(self) -> list[str]:
        """The command line (the data folder already prepared)."""
        assert self.data_dir is not None
        return [
            str(keycloak_home() / "bin" / "kc.sh"), "start", "--optimized",
            "--cache=local", "--http-enabled=true", f"--http-host={self.host}",
            f"--http-port={self.port}", f"--hostname={self.url}",
            f"--http-management-port={free_port()}", f"--db-url={_db_url(self.data_dir)}",
        ]  # fmt: skip

    def prepare(self) -> None:
        """Make the data folder (a copy of the template) if it holds no database."""
        check_theme(keycloak_home())
        if self.data_dir is None:
            self._own_data = tempfile.TemporaryDirectory(prefix="synoptic-keycloak-")
            self.data_dir = Path(self._own_data.name)
        if not (self.data_dir / "keycloakdb.mv.db").exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            shutil.copy2(template_dir() / "keycloakdb.mv.db", self.data_dir)

    def spawn(self) -> Process:
        """Start the process without waiting for it."""
        self.prepare()
        self.process = Process(
            self.name, self.argv(), echo=self.echo, keep=BOOTSTRAPPED,
            env={"JAVA_OPTS_APPEND": JAVA_OPTS_APPEND},
        )  # fmt: skip
        return self.process

    def start(self, timeout: float = 600.0) -> KeycloakServer:
        """Start and wait until the realm is served (bootstrap done)."""
        process = self.spawn()
        try:
            process.wait_for(READY, timeout)
            process.wait_for(BOOTSTRAPPED, timeout)
        except ProcessError:
            process.stop(15)
            raise
        return self

    def stop(self) -> None:
        """Stop the process (by PID); the data folder stays (see :meth:`close`)."""
        if self.process is not None:
            self.process.stop(20)
            self.process = None

    def restart(self, timeout: float = 600.0) -> KeycloakServer:
        """Stop and start again on the same port and data (keys, sessions kept)."""
        self.stop()
        return self.start(timeout)

    def close(self) -> None:
        """Stop and remove a temporary data folder."""
        self.stop()
        if self._own_data is not None:
            self._own_data.cleanup()
            self._own_data = None


def main(argv: list[str] | None = None) -> int:
    """``template --out DIR``: import the demo realm into a template database;
    ``serve --port P --data DIR [--public-url URL]``: run Keycloak in the
    foreground (the demo's component)."""
    parser = argparse.ArgumentParser(prog="python -m synoptic_identity.keycloak")
    sub = parser.add_subparsers(dest="cmd", required=True)
    tpl = sub.add_parser("template")
    tpl.add_argument("--out", type=Path, required=True)
    serve = sub.add_parser("serve")
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--data", type=Path, required=True)
    serve.add_argument("--public-url")
    args = parser.parse_args(argv)
    if args.cmd == "template":
        make_template(keycloak_home(), args.out.resolve())
        print(f"demo realm template in {args.out}", flush=True)
        return 0
    server = KeycloakServer(
        port=args.port, host=args.host, data_dir=args.data.resolve(),
        public_url=args.public_url,
    )  # fmt: skip
    server.prepare()
    os.environ["JAVA_OPTS_APPEND"] = JAVA_OPTS_APPEND
    argv_ = server.argv()
    sys.stdout.flush()
    os.execv(argv_[0], argv_)  # the demo's supervisor stops Keycloak by this PID


if __name__ == "__main__":
    sys.exit(main())
