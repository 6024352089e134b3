"""``make cluster`` stops on SIGTERM at any moment of its start or once ready:
every process it started (NATS nodes, nginx, simulators, adapter, gateway,
rollup) gone within the bound, none left behind. A small plan (one gateway, no
Tango) keeps it short; the seed is printed in a failure
(``SYNOPTIC_TEST_SEED`` replays it)."""

from __future__ import annotations

import os
import random
import sys

import pytest
from deploy_helpers import REPO

from synoptic_bus.procs import free_port
from synoptic_bus.stopcheck import sigterm_try

pytestmark = [pytest.mark.system, pytest.mark.timeout(600)]

SEED = int(os.environ.get("SYNOPTIC_TEST_SEED", random.randrange(1 << 30)))
#: Seconds from SIGTERM to the last process gone. The cluster's processes'
#: lines are not echoed, so a moment of its start is a random pause from the
#: start, spread over its usual length.
BOUND = 20.0


def test_the_local_cluster_stops_on_sigterm_at_any_moment(tmp_path) -> None:
    rng = random.Random(f"{SEED}-cluster")
    delays: list[float | None] = [None, rng.uniform(0, 3), rng.uniform(3, 25)]
    for delay in delays:
        argv = [sys.executable, str(REPO / "deploy/local_cluster.py"),
                "--gateways", "1", "--no-tango", "--records", "10",
                "--http-port", str(free_port()), "--nats-port", str(free_port()),
                "--var", str(tmp_path / "cluster")]  # fmt: skip
        result = sigterm_try(
            "cluster", argv, ready=r"cluster ready", delay=delay, bound=BOUND
        )
        what = (
            f"cluster: SIGTERM {result.delay:.2f} s after the start "
            f"({'ready' if result.after_ready else 'starting'}), seed {SEED}"
        )
        assert not result.left, f"{what}: left running: {result.left}"
        assert result.seconds <= BOUND, f"{what}: took {result.seconds:.1f} s"
        assert result.returncode in (0, -15), f"{what}: {result.output[-3000:]}"
        assert "Traceback" not in result.output, f"{what}: {result.output[-3000:]}"
