"""SIGTERM at any moment stops ``synoptic demo`` and the simulators, children
included, within a bound: ``docker stop``, systemd and Kubernetes stop with it.

Each process is started again and again and sent SIGTERM at a random moment of
its start (or once it is ready); every process it started must be gone within
the bound, and the demo's supervisor must restart nothing meanwhile. The seed is
printed in a failure (``SYNOPTIC_TEST_SEED`` replays it)."""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from synoptic_bus.procs import free_port, free_udp_tcp_port
from synoptic_bus.stopcheck import StopResult, sigterm_try

pytestmark = pytest.mark.system

SEED = int(os.environ.get("SYNOPTIC_TEST_SEED", random.randrange(1 << 30)))
SYNOPTIC = [sys.executable, "-m", "synoptic_bus.cli"]


#: Tango's own signal thread, given SIGTERM while its server is starting (before the
#: device's handler is registered), says one of these and ends the process at once:
#: with SIGKILL before the admin device it would stop exists, with exit status 255
#: (``_exit(-1)``) before Tango itself is: stopped, nothing left behind
TANGO_STARTING = {
    "Class DServer is not initialised!": -9,
    "Tango is not initialised !!!": 255,
}


def check(result: StopResult, bound: float, what: str) -> None:
    """``result`` stopped in time, cleanly, and left nothing behind."""
    context = (
        f"{what}: SIGTERM {result.delay:.2f} s after the start "
        f"({'ready' if result.after_ready else 'starting'}), seed {SEED}"
    )
    assert not result.left, f"{context}: still running after {bound} s: {result.left}"
    assert result.seconds <= bound, f"{context}: took {result.seconds:.1f} s"
    # stopped by its handler (0) or, before one was installed, by the signal
    stopped = [0, -15]
    if not result.after_ready:
        stopped += [
            code for said, code in TANGO_STARTING.items() if said in result.output
        ]
    assert result.returncode in stopped, f"{context}: {result.output[-3000:]}"
    assert "Traceback" not in result.output, f"{context}: {result.output[-3000:]}"


def moments(rng: random.Random, tries: int, span: float) -> list[float | None]:
    """``tries`` delays: spread over ``span`` seconds of the start, and one try
    once ready (None)."""
    return [None] + [rng.uniform(0, span) for _ in range(tries - 1)]


SIMS = {
    "ioc": (["sim", "ioc", "--records", "20", "--port", "{port}"], r"sim ioc ready"),
    "pva": (["sim", "pva", "--records", "20", "--port", "{port}"], r"sim pva ready"),
    "tango": (["sim", "tango", "--port", "{port}"], r"Ready to accept request"),
}


@pytest.mark.parametrize("sim", sorted(SIMS))
def test_a_simulator_stops_on_sigterm_at_any_moment(sim: str) -> None:
    rng = random.Random(f"{SEED}-{sim}")
    args, ready = SIMS[sim]
    for delay in moments(rng, 8, 3.0):
        argv = [*SYNOPTIC, *(a.format(port=free_udp_tcp_port()) for a in args)]
        result = sigterm_try(sim, argv, ready=ready, delay=delay, bound=10)
        check(result, 10, f"sim {sim}")


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """The demo's data folder, one the ``postgres`` user can reach."""
    path = Path(tempfile.mkdtemp(prefix="synoptic-demo-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: Lines of the demo's start, one per stage; a try sends SIGTERM shortly after one.
DEMO_STAGES = [
    r"^nats-server +pid",
    r"stream CS_LAST ready",
    r"^postgres +pid",
    r"^sim-\w+ +pid",
    r"^adapter-\w+ +pid",
    r"^gateway +pid",
]


@pytest.mark.timeout(600)
def test_the_demo_stops_on_sigterm_at_any_moment_of_its_start(var_dir: Path) -> None:
    """Tries at a random moment of random stages of the start: every child gone
    within the bound, none restarted. (Stopping the running demo:
    ``gateway/tests/system/test_demo_supervision.py``.)"""
    rng = random.Random(f"{SEED}-demo")
    bound = 20.0
    for stage in [rng.uniform(0, 2.0), *sorted(rng.sample(DEMO_STAGES, 2))]:
        argv = [*SYNOPTIC, "demo", "--var", str(var_dir),
                "--nats-port", str(free_port()), "--http-port", str(free_port()),
                "--tango-port", str(free_udp_tcp_port()),
                "--idp-port", str(free_port())]  # fmt: skip
        if isinstance(stage, str):  # at the stage's line, then a random pause
            result = sigterm_try(
                "demo", argv, ready=stage, delay=None, bound=bound,
                pause=rng.uniform(0, 1.0),
            )  # fmt: skip
        else:
            ready = r"demo running"
            result = sigterm_try("demo", argv, ready=ready, delay=stage, bound=bound)
        check(result, bound, f"demo (stage {stage})")
        after = result.output.split("demo stopped")[0]
        restarts = re.findall(r"^demo: .*(?:restarting in|restarted).*$", after, re.M)
        assert not restarts, f"seed {SEED}: {restarts}"
