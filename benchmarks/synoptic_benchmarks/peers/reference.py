"""The peers' figures, measured with the same workload on the same kind of machine
(2 shared cores): N counting ``calcout`` records at 10 Hz, M clients each
subscribing the N channels, 5 s warm-up, 30 s window; Tango: 400 double attributes
pushing change events at 10 Hz. docs/benchmarks.md sets our results beside them as
ratios. A range is ``(low, high)``."""

from __future__ import annotations

Range = tuple[float, float]

#: Delivered updates per second that one fully used core carries, end to end.
UPDATES_PER_CORE_S: dict[str, Range] = {
    "Coniql 0.4.2": (5_000, 6_000),
    "PVWS": (30_000, 40_000),
    "TangoGQL 2.3.0": (1_700, 2_300),
}

#: Server CPU (% of a core) for a clients × PVs case, and the share delivered.
CASE_CPU_PCT: dict[str, dict[str, tuple[Range, str]]] = {
    "Coniql 0.4.2": {
        "1x100": ((21, 25), "100 %"),
        "10x100": ((73, 101), "61 %"),
    },
    "PVWS": {
        "1x100": ((8, 8), "100 %"),
        "10x100": ((26, 33), "100 %"),
    },
}

#: PVWS (throttle off), whole server (CA/PVA client, JSON, WebSocket), per case
#: "clients x PVs" at 10 Hz: (delivered updates/s, server CPU % of a core, latency
#: p50 ms over all its cases).
PVWS_CASES: dict[str, tuple[float, Range, Range]] = {
    "10x100": (10_000, (26, 33), (4, 23)),
    "5x500": (25_000, (56, 56), (4, 23)),
}

#: Socket open → first value of every PV (s): cold, warm.
SCREEN_OPEN_S: dict[str, dict[int, tuple[float, float]]] = {
    "Coniql 0.4.2": {100: (0.18, 0.18), 1000: (1.75, 1.63)},
}

#: TangoGQL: first value of N attributes (s), cold.
TANGOGQL_FIRST_VALUES_S: dict[int, Range] = {100: (0.48, 0.48), 400: (4.5, 31.0)}

#: The Webjive study's web frontend (its own measurement): LED and label updates
#: per second one browser page kept up with (it crashed with 100 plots).
WEBJIVE_UPDATES_PER_S: Range = (1_500, 2_300)
