"""Scenario defaults and the run plan handed to k6 (a JSON file, ``$LT_PLAN``)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

LOADTEST = Path(__file__).resolve().parent.parent
SCENARIO_DIR = LOADTEST / "scenarios"


@dataclass
class Plan:
    """One run: what k6 does (the k6 scripts read these keys) and against what."""

    scenario: str
    vus: int
    channels: int  # channels published by the source
    rate: float  # Hz per channel
    duration_s: float
    format: str  # "msgpack" or "json"
    screen_channels: int = 0  # channels per screen; 0: all of them
    screen_count: int = 1  # distinct screens in the pool
    storm_s: float = 0.0
    churn_ms: int = 0
    slow: int = 0  # slow consumer sockets (loadtest/kit/slowclient.py)
    slow_read_bps: int = 8192  # bytes/s each slow link takes
    in_phase: bool = False  # synthetic source: every channel at the same instant
    gateways: list[str] = field(default_factory=list)
    screens: list[list[str]] = field(default_factory=list)
    window_ms: int = 1000
    nats_nodes: int = 1  # 3: a cluster, where one snapshot gap is tolerated
    waveform_points: int = 0  # > 0: every channel is an f8 array of this many points
    pts: int = 0  # > 0: viewers ask for at most this many points (sub.pts)

    @property
    def script(self) -> Path:
        return SCENARIO_DIR / f"{self.scenario}.js"

    def for_k6(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> dict[str, object]:
        """The plan without the (long) screen lists, for the report."""
        data = asdict(self)
        data.pop("screens")
        return data


#: Defaults per scenario; command-line options override them. They are sized so
#: that k6 on the same 2 cores is not what breaks first (docs/capacity.md).
DEFAULTS: dict[str, dict[str, object]] = {
    "fanout": {"vus": 20, "channels": 20, "rate": 10, "duration_s": 30,
               "format": "msgpack"},
    "fanout-distinct": {"vus": 20, "channels": 100, "rate": 10, "duration_s": 30,
                        "format": "msgpack", "screen_channels": 50},
    "storm": {"vus": 100, "channels": 100, "rate": 1, "duration_s": 5,
              "format": "json", "storm_s": 3, "in_phase": True},
    "ramp": {"vus": 200, "channels": 10, "rate": 10, "duration_s": 60,
             "format": "json"},
    "soak": {"vus": 20, "channels": 100, "rate": 10, "duration_s": 300,
             "format": "json", "screen_count": 4, "screen_channels": 50},
    "churn": {"vus": 10, "channels": 200, "rate": 10, "duration_s": 30,
              "format": "json", "screen_count": 10, "screen_channels": 50,
              "churn_ms": 500},
    "slow": {"vus": 10, "channels": 100, "rate": 10, "duration_s": 45,
             "format": "msgpack", "slow": 5, "slow_read_bps": 8192},
    "waveform": {"vus": 20, "channels": 1, "rate": 1, "duration_s": 30,
                 "format": "msgpack", "waveform_points": 100_000, "pts": 1024},
}  # fmt: skip


def make_screens(uris: list[str], size: int, count: int) -> list[list[str]]:
    """``count`` distinct screens of ``size`` channels: sliding windows over the
    channel list (screen k starts at channel k·step), so screens overlap in channels
    but no two are the same set."""
    size = size or len(uris)
    size = min(size, len(uris))
    if count <= 1:
        return [uris[:size]]
    step = (
        max(1, (len(uris) - 1) // count)
        if size == len(uris)
        else max(1, (len(uris) - size) // max(1, count - 1))
    )
    screens = []
    for k in range(count):
        start = k * step
        screen = [uris[(start + j) % len(uris)] for j in range(size)]
        screens.append(screen)
    if size == len(uris) and count > 1:
        # every window of the full list is the same set: drop one channel per screen
        screens = [[u for j, u in enumerate(uris) if j != k % len(uris)]
                   for k in range(count)]  # fmt: skip
    return screens


def window_ms(duration_s: float, windows: int = 60) -> int:
    """Latency window length so that the run fits the k6 script's 60 windows."""
    return max(1000, math.ceil(duration_s * 1000 / windows / 1000) * 1000)
