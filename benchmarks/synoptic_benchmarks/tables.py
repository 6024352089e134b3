"""The tables of docs/benchmarks.md, generated from ``benchmarks/results/*.json``.

``python -m synoptic_benchmarks.tables`` (``make bench-tables``) rewrites every
block between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` in the page with
the table :data:`TABLES` makes for ``NAME`` from its results file; the text around
the blocks is left alone. ``--check`` only says whether the page is current (a unit
test does the same), so the tables cannot drift from what the benchmarks printed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from synoptic_benchmarks.peers.reference import (
    CASE_CPU_PCT,
    PVWS_CASES,
    SCREEN_OPEN_S,
    TANGOGQL_FIRST_VALUES_S,
    UPDATES_PER_CORE_S,
    WEBJIVE_UPDATES_PER_S,
    Range,
)
from synoptic_benchmarks.report import RESULTS_DIR

PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
_BLOCK = re.compile(
    r"(<!-- bench:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)",
    re.S,
)

Report = dict[str, Any]


class TablesError(ValueError):
    """A block names no table, or its results file is missing or unreadable."""


# -- formatting ---------------------------------------------------------------------


def _num(x: float | None, digits: int = 1) -> str:
    """``12 345`` for large numbers, ``1.5`` with ``digits`` decimals otherwise."""
    if x is None:
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    return f"{x:.{digits}f}" if digits else f"{x:.0f}"


def _pair(p50: float | None, p99: float | None) -> str:
    return f"{_num(p50)} / {_num(p99)}"


def _times(ours: float, theirs: Range, higher_is_better: bool = True) -> str:
    """How many times better ``ours`` is than a peer's range, e.g. ``4.1–5.0×``."""
    ratios = sorted(
        (ours / t if higher_is_better else t / ours) for t in theirs if t and ours
    )
    if not ratios:
        return "–"
    low, high = ratios[0], ratios[-1]
    if f"{low:.1f}" == f"{high:.1f}":
        return f"{low:.1f}×"
    return f"{low:.1f}–{high:.1f}×"


def _range(r: Range, unit: str = "") -> str:
    def one(x: float) -> str:
        return _num(x, 0 if float(x).is_integer() else 2)

    low, high = r
    return one(low) + ("" if high == low else "–" + one(high)) + unit


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def provenance(report: Report) -> str:
    """One line: when and on what the report was measured, or where it was
    transcribed from."""
    m = report.get("machine")
    m = m if isinstance(m, dict) else {}
    when = str(m.get("date", "date unknown")).replace("T", " ").replace("Z", " UTC")
    cores = f"{m.get('cpus', report.get('cpu_count', '?'))} cores (shared)"
    load = m.get("load_avg_1m")
    line = f"{when}, {cores}" + (f", load average {load}" if load is not None else "")
    if source := m.get("transcribed_from"):
        return f"*Transcribed from {source}; {cores}.*\n\n"
    end = report.get("load_avg_1m_end", m.get("load_avg_1m_end"))
    at_end = f", {end} at the end" if end is not None else ""
    return f"*Measured {line} at the start{at_end}.*\n\n"


# -- one function per table -----------------------------------------------------------


def store(r: Report) -> str:
    rows = [
        [
            x["storage"],
            _num(x["published_per_s"]),
            f"{_num(x['nats_server_cpu_percent'])} %",
            _num(x["nats_server_rss_mib"]),
            _num(x["read_1000_ms"]),
            _num(x[f"read_{r['channels']}_ms"]),
        ]
        for x in r["results"]
    ]
    header = ["storage", "publish (msg/s)", "nats-server CPU", "RSS MiB",
              "read 1000 (ms)", f"read {r['channels']} (ms)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _per_core(updates_per_s: float, cpu_pct: float) -> float:
    return updates_per_s / (cpu_pct / 100) if cpu_pct else 0.0


def epics(r: Report) -> str:
    rows = []
    for x in r["runs"]:
        cpu = x["adapter_cpu_percent_total"]
        per_core = _per_core(x["published_updates_per_s"], cpu)
        rows.append([
            f"{x['records']} × {x['rate_hz']:g} Hz", str(x["adapters"]),
            _num(x["published_updates_per_s"], 0), _num(x["gaps"], 0),
            _num(x["seq_gaps"], 0),
            " + ".join(_num(c) for c in x["adapter_cpu_percent"]) + " %",
            _num(1e4 * cpu / x["published_updates_per_s"] if x["published_updates_per_s"] else None),
            _pair(x["latency_ms"]["p50"], x["latency_ms"]["p99"]),
            _num(per_core, 0),
            _times(per_core, UPDATES_PER_CORE_S["Coniql 0.4.2"]),
            _times(per_core, UPDATES_PER_CORE_S["PVWS"]),
        ])  # fmt: skip
    header = ["PVs × rate", "adapters", "published/s", "gaps", "seq gaps",
              "adapter CPU", "µs CPU per update", "latency p50 / p99 ms",
              "updates per core-second", "vs Coniql (5–6k)", "vs PVWS (30–40k)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


_GW_CASES = {
    "1x100": "1 × 100", "10x100": "10 × 100", "100x100-shared": "100 × 100 shared",
    "1x1000": "1 × 1000", "100x100-distinct": "100 × 100 distinct", "1x5000": "1 × 5000",
}  # fmt: skip


def gateway(r: Report) -> str:
    rows = []
    for x in r["cases"]:
        cpu = x["cpu_pct"]
        server = cpu.get("gateway", 0) + cpu.get("nats-server", 0)
        raw = x.get("nats_subscriber_ms") or {}
        rows.append([
            _GW_CASES.get(x["case"], x["case"]),
            f"{_num(x['delivered_pct'])} % ({_num(x['delivered_per_s'], 0)}/s)",
            _num(x["gaps"], 0), _pair(x["latency_ms"]["p50"], x["latency_ms"]["p99"]),
            _num(x.get("p99_median_of_1s_ms")), _num(raw.get("p99")),
            f"{_num(cpu.get('gateway'))} / {_num(cpu.get('nats-server'))} %",
            _num(_per_core(x["delivered_per_s"], server), 0),
            _times(_per_core(x["delivered_per_s"], server), UPDATES_PER_CORE_S["PVWS"]),
            _num(x.get("load_avg_1m")),
        ])  # fmt: skip
    header = ["clients × channels", "delivered", "gaps", "latency p50 / p99 ms",
              "median of 1-s p99s", "raw NATS p99", "gateway / nats-server CPU",
              "delivered per core-second (gateway + nats-server)", "vs PVWS (30–40k)",
              "load"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def gateway_peers(r: Report) -> str:
    """The cases the peers were measured on, CPU side by side."""
    by_case = {x["case"]: x for x in r["cases"]}
    rows = []
    for case, label in _GW_CASES.items():
        if case not in by_case or not any(case in p for p in CASE_CPU_PCT.values()):
            continue
        x = by_case[case]
        ours = x["cpu_pct"].get("gateway", 0) + x["cpu_pct"].get("nats-server", 0)
        row = [label, f"{_num(ours)} % ({_num(x['delivered_pct'])} %)"]
        for peer in ("Coniql 0.4.2", "PVWS"):
            cpu, share = CASE_CPU_PCT[peer].get(case, ((0, 0), "–"))
            row += [f"{_range(cpu, ' %')} ({share})", _times(ours, cpu, False)]
        rows.append(row)
    header = ["clients × PVs", "Synoptic gateway + nats-server CPU (delivered)",
              "Coniql CPU (delivered)", "Coniql ÷ Synoptic", "PVWS CPU (delivered)",
              "PVWS ÷ Synoptic"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def gateway_open(r: Report) -> str:
    rows = []
    res = r["results"]
    for key in res:
        if not key.endswith(" cold"):
            continue
        n = int(key.split("ch")[0])
        cold, reopen = res[key], res.get(f"{n}ch reopen", {})
        coniql = SCREEN_OPEN_S["Coniql 0.4.2"].get(n)
        rows.append([
            str(n), f"{_num(cold['median_ms'])} ({_num(cold['p90_ms'])})",
            _num(reopen.get("median_ms")), _num(cold.get("gateway_cpu_ms_per_open")),
            f"{coniql[0]:g} / {coniql[1]:g}" if coniql else "–",
            _times(coniql[0] * 1000, (cold["median_ms"],)) if coniql else "–",
        ])  # fmt: skip
    header = ["channels", "cold median (p90) ms", "re-open median ms",
              "gateway CPU per cold open ms", "Coniql cold / warm (s)",
              "Coniql cold ÷ Synoptic cold"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def gateway_hub(r: Report) -> str:
    row = [
        str(r["channels"]), str(r["bursts"]),
        f"{_num(r['cpu_us_per_update_min'], 2)} / {_num(r['cpu_us_per_update_median'], 2)}",
        f"{_num(r['us_per_update_min'], 2)} / {_num(r['us_per_update_median'], 2)}",
    ]  # fmt: skip
    header = ["channels", "bursts", "CPU µs per update (best / median)",
              "wall µs per update (best / median)"]  # fmt: skip
    return provenance(r) + _table(header, [row])


def gateway_waveform(r: Report) -> str:
    """Full arrays against ``sub.pts``: the gateway's CPU and each viewer's bytes."""
    rows = [
        [
            str(c["points"]), _num(c["gateway_cpu_us_per_delivered_update"]),
            _num(c["gateway_cpu_pct"]), _num(c["bytes_per_s_per_viewer"] / 1000),
            _num(c["bytes_per_update"] / 1000),
        ]
        for c in r["cases"]
    ]  # fmt: skip
    header = ["points sent", "gateway CPU per delivered update (µs)",
              "gateway CPU", "kB/s per viewer", "kB per update"]  # fmt: skip
    note = (
        f"{r['viewers']} viewers of a {_num(r['array_points'])}-point f8 waveform "
        f"at {r['rate_hz']:g} Hz, {r['seconds']:g} s per case: full arrays cost "
        f"{r['cpu_ratio_full_to_reduced']}× the CPU and "
        f"{r['bytes_ratio_full_to_reduced']}× the bytes.\n\n"
    )
    return provenance(r) + note + _table(header, rows)


def wan(r: Report) -> str:
    """The demo screens over emulated links, against the goals."""
    rows = [
        [
            x["screen"], x["link"].replace("-", " / "),
            f"{x['first_visit_plus_rtt_s']:.2f} ({x['first_visit_s']:.2f})",
            f"{x['repeat_visit_plus_rtt_s']:.2f} ({x['repeat_visit_s']:.2f})",
            f"{_num(x['first_static_kb'])} + {_num(x['first_api_kb'])} + {_num(x['first_ws_kb'])}",
            f"{_num(x['repeat_static_kb'])} + {_num(x['repeat_api_kb'])} + {_num(x['repeat_ws_kb'])}",
            _num(x["watching_kb_per_s"]),
        ]
        for x in r["results"]
    ]  # fmt: skip
    g = r["goals_epics_100ms_10mbit"]
    met = r.get("goals_met") or {}
    goals = ["goal (EPICS, 100 ms / 10 Mbit/s)", "",
             f"≤ {g['first_visit_s']} {'met' if met.get('first_visit_s') else 'missed'}",
             f"≤ {g['repeat_visit_s']} {'met' if met.get('repeat_visit_s') else 'missed'}",
             f"static ≤ {g['first_visit_static_kb']} "
             f"{'met' if met.get('first_visit_static_kb') else 'missed'}", "",
             f"≤ {g['watching_kb_per_s']} "
             f"{'met' if met.get('watching_kb_per_s') else 'missed'}"]  # fmt: skip
    header = ["screen", "round trip / down", "first value, first visit s (measured)",
              "repeat visit s (measured)", "first visit kB (static + API + WS)",
              "repeat visit kB", "watching kB/s"]  # fmt: skip
    return provenance(r) + _table(header, [*rows, goals])


def _devices(n: int) -> str:
    return f"{n} device" + ("" if n == 1 else "s")


def tango_subscription(r: Report) -> str:
    rows = []
    for x in r["subscription"]:
        gql = TANGOGQL_FIRST_VALUES_S.get(x["attributes"])
        one = x.get("pytango_one_by_one") or {}
        ours = [("adapter", "one process", "pytango_asyncread")] + [
            (key, f"{n} workers", f"pytango_asyncread_{n}_processes")
            for key in x
            if (n := key.removeprefix("adapter_").removesuffix("_workers")).isdigit()
        ]
        for key, how, ref_key in ours:
            if not isinstance(m := x.get(key), dict):
                continue
            ref = x.get(ref_key) or {}
            rows.append([
                f"{x['attributes']} attributes, {_devices(x['devices'])}", how,
                _num(m.get("first_values_s"), 2), _num(m.get("subscribed_s"), 2),
                _num(ref.get("subscribed_s"), 2)
                + ("" if ref_key == "pytango_asyncread" else f" ({how.split()[0]} processes)"),
                _num(one.get("subscribed_s"), 2) if ref_key == "pytango_asyncread" else "",
                f"{m['subscribed_s'] / ref['subscribed_s']:.2f}×"
                if m.get("subscribed_s") and ref.get("subscribed_s") else "–",
                _times(m["first_values_s"], gql, False) if gql and m.get("first_values_s") else "–",
            ])  # fmt: skip
    header = ["case", "adapter", "first values (s)", "every subscription live (s)",
              "PyTango AsyncRead, same run (s)", "PyTango one by one (s)",
              "live: ours ÷ PyTango AsyncRead", "TangoGQL first values ÷ ours"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _us(per_event: float | None) -> str:
    return f" ({_num(per_event)} µs/event)" if per_event is not None else ""


def tango_throughput(r: Report) -> str:
    rows = []
    for x in r["throughput"]:
        ref = x.get("pytango_reference") or {}
        per_core = _per_core(x["events_per_s"], x["adapter_cpu_percent"])
        if x.get("workers", 1) > 1:
            how = f"{x['workers']} workers"
        elif x.get("adapter_processes", 1) > 1:
            how = f"{x['adapter_processes']} processes (--shard)"
        else:
            how = "one process"
        rows.append([
            f"{x['attributes']} × {x['rate_hz']:g} Hz, {_devices(x['devices'])}", how,
            _num(x["events_per_s"]), _num(x["gaps"], 0),
            f"{_num(x['adapter_cpu_percent'])} %" + _us(x.get("adapter_us_per_event")),
            _pair(x["latency_ms"]["p50"], x["latency_ms"]["p99"]),
            f"{_num(ref['events_per_s'])}/s, {_num(ref['gaps'], 0)} gaps" + _us(ref.get("us_per_event"))
            if "events_per_s" in ref else ref.get("error", "–"),
            _times(per_core, UPDATES_PER_CORE_S["TangoGQL 2.3.0"]),
        ])  # fmt: skip
    header = ["case", "adapter", "events/s", "gaps", "adapter CPU",
              "latency p50 / p99 ms", "PyTango-only client, same run",
              "vs TangoGQL (1.7–2.3k per core)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _pct(x: dict[str, Any]) -> str:
    return f"{_num(x['events_per_s'])} ({_num(x['events_percent_of_nominal'])} %)"


def tango_harm(r: Report) -> str:
    """The no-harm cases, each beside its PyTango floor, under the issue's goals."""
    rows = [["goal", "", "≤ 2", "≤ 3", "≥ 95 %", "≥ 95 %", "≤ 10 %"]]
    for x in r["cases"]:
        ours, floor = x["synoptic"], x["pytango_floor"]
        busy = ours.get("device_metrics", {}).get("busy_fraction")
        rows.append([
            x["case"], "Synoptic", _num(ours["events_valued_s"], 2),
            _num(ours["healthy_polled_valued_s"], 2), _pct(ours),
            _pct(x["other_client"]), "–" if busy is None else f"{_num(100 * busy)} %",
        ])  # fmt: skip
        rows.append([
            x["case"], "PyTango floor", _num(floor["events_valued_s"], 2),
            _num(floor["healthy_polled_valued_s"], 2), "", "", "",
        ])  # fmt: skip
    header = ["device", "client", "389 event attributes valued (s)",
              "22 healthy polled valued (s)", "events/s, second minute (of 389)",
              "independent PyTango client, same minute", "device time on our reads"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def peers(r: Report) -> str:
    rows = []
    for x in r["cases"]:
        for system, label in (("coniql", "Coniql"), ("synoptic", "Synoptic")):
            s = x.get(system)
            if not s or "error" in s:
                rows.append(
                    [x["case"].replace("x", " × "), label, "error", "", "", "", "", ""]
                )
                continue
            cpu = s["server_cpu_pct"]
            parts = ", ".join(f"{k} {_num(v)}" for k, v in cpu.items() if k != "total")
            rows.append([
                x["case"].replace("x", " × "), label,
                f"{_num(s['delivered_per_s'], 0)} ({_num(s['delivered_pct'])} %)",
                f"{_num(s['value_gaps'], 0)}" + (f" ({_num(s['seq_gaps'], 0)})" if s.get("seq_gaps") is not None else ""),
                _pair(s["latency_ms"]["p50"], s["latency_ms"]["p99"]),
                f"{_num(cpu['total'])}" + (f" ({parts})" if system == "synoptic" else ""),
                _num(s["server_cpu_us_per_update"]),
                _num((s.get("screen_open_s") or {}).get("first"), 3),
            ])  # fmt: skip
        if ratios := x.get("ratios"):
            rows.append([
                x["case"].replace("x", " × "), "**ratio**",
                f"Synoptic ÷ Coniql {_num(ratios['delivered_synoptic_over_coniql'])}×", "", "",
                "", f"Coniql ÷ Synoptic {_num(ratios['cpu_per_update_coniql_over_synoptic'])}×",
                f"Coniql ÷ Synoptic {_num(ratios['screen_open_coniql_over_synoptic'])}×",
            ])  # fmt: skip
    header = ["case", "system", "delivered/s", "value gaps (seq gaps)",
              "latency p50 / p99 ms", "server CPU % of a core",
              "µs server CPU per delivered update", "screen open (s)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def ui(r: Report) -> str:
    """The browser's screen open, sustained rates and charts; the sustained rates
    beside the Webjive frontend's updates per second."""
    n = r.get("channels", 1000)
    webjive = "vs Webjive frontend (1.5–2.3k updates/s)"
    rows = []
    for key, label in (("screen_open_cold_ms", f"open {n} labels + LEDs, cold"),
                       ("screen_open_reopen_ms", f"open {n} labels + LEDs, re-open")):  # fmt: skip
        if o := r.get(key):
            low, high = (
                (min(o["runs"]), max(o["runs"])) if o.get("runs") else o["range"]
            )
            rows.append([label, f"median {_num(o['median'])} ms ({_num(low, 0)}–{_num(high, 0)})",
                         f"≤ {o.get('target', 300)} ms", "–"])  # fmt: skip
    for key, label, rate in (("sustained_10hz", f"{n} channels × 10 Hz", 10),
                             ("charts", "50 trends + 10 spectra of 10k points, 10 Hz", None)):  # fmt: skip
        if s := r.get(key):
            rows.append([label, f"{_num(s['fps'])} fps, receipt-to-paint p50 / p99 "
                         f"{_pair(s['receipt_to_paint_ms'].get('p50'), s['receipt_to_paint_ms'].get('p99'))} ms",
                         "≥ 30 fps, p99 ≤ 100 ms",
                         _times(n * rate, WEBJIVE_UPDATES_PER_S) if rate else "–"])  # fmt: skip
    for step in r.get("breaking", []):
        holds = bool(step.get("ok"))
        rows.append([f"{n} channels × {step['rate_hz']:g} Hz",
                     f"{_num(step['fps'])} fps, receipt-to-paint p99 "
                     f"{_num(step['receipt_to_paint_ms'].get('p99'))} ms",
                     "holds" if holds else "breaks",
                     _times(n * step["rate_hz"], WEBJIVE_UPDATES_PER_S) if holds else "–"])  # fmt: skip
    return provenance(r) + _table(["scenario", "result", "target", webjive], rows)


def screens(r: Report) -> str:
    s, d = r["saves"], r["directory"]

    def row(what: str, x: dict[str, Any], budget: str, p: str = "p99_ms") -> list[str]:
        return [what, str(x["n"]), _num(x["p50_ms"], 2), _num(x["p95_ms"], 2),
                _num(x[p], 2), budget]  # fmt: skip

    rows = [
        row(f"save round trip, {s['widgets']} widgets ({s['body_bytes'] // 1000} kB)",
            s["save_round_trip"], "≤ 100 ms"),
        row("save → `screen` frame, viewer on the other gateway",
            s["viewer_on_other_gateway"], "p99 ≤ 1000 ms"),
        row("save → `screen` frame, viewer on the same gateway",
            s["viewer_on_same_gateway"], "p99 ≤ 1000 ms"),
        row(f"`/api/channels` {'ranked ' if 'queries' in d else 'prefix '}search, "
            f"{d['channels']} channels (HTTP)", d["search_http"], "≤ 50 ms"),
        *([row(f"import of a {r['importer']['widgets']}-widget .bob, in process",
               r["importer"]["import"], "≤ 200 ms")] if "importer" in r else []),
    ]  # fmt: skip
    header = ["what", "n", "p50 ms", "p95 ms", "p99 ms", "budget"]
    index = d["search_in_process"]

    def took(ms: float) -> str:
        return f"{_num(ms * 1000)} µs" if ms < 1 else f"{_num(ms, 2)} ms"

    first = (f"\nThe same searches on the index alone: p50 {took(index['p50_ms'])}, "
             f"p99 {took(index['p99_ms'])}, max {took(index['max_ms'])}. "
             + (f"The first `/api/channels` request after {d['listed']} channels were "
                "published (the gateway indexed their metadata as it came): "
                f"{_num(d['first_request_ms'])} ms, a search listing them all "
                f"{_num(d['listed_all_after_ms'])} ms after it; a whole read of the stream (subjects, "
                "metadata, index: what a gateway does in the background at start): "
                f"{_num(d['whole_load_ms'])} ms.\n" if "whole_load_ms" in d else
                "The first `/api/channels` request "
                f"(reads the stream's {d['listed']} subjects{' and their metadata' if 'queries' in d else ''} "
                f"and builds the index): "
                f"{_num(d['first_request_ms'])} ms.\n"))  # fmt: skip
    kinds = d.get("search_in_process_by_kind")
    if kinds:  # the ranked search by any part of the name, the description, the units
        first += (f"\nThe ranked search on the index alone by kind of query, "
                  f"{d['channels']} channels with a description and units each "
                  "(50 best of those found):\n\n")  # fmt: skip
        first += _table(
            ["query", "kind", "found", "first found", "p50 ms", "max ms"],
            [[f"`{d['queries'][k]}`" if d["queries"][k] else "(empty)", k,
              str(d["totals"][k]), f"`{d['first_found'][k]}`" if d["first_found"][k] else "–",
              _num(x["p50_ms"], 2), _num(x["max_ms"], 2)]
             for k, x in kinds.items()],
        )  # fmt: skip
    return provenance(r) + _table(header, rows) + first


def pva(r: Report) -> str:
    rows = []
    for pair in r["throughput"]:
        for proto in ("ca", "pva"):
            x = pair[proto]
            cpu = x["adapter_cpu_percent_total"]
            per_core = _per_core(x["published_updates_per_s"], cpu)
            ratio = pair["pva_over_ca_cpu_per_update"] if proto == "pva" else None
            rows.append([
                f"{x['records']} × {x['rate_hz']:g} Hz", proto.upper(),
                _num(x["published_updates_per_s"], 0), _num(x["gaps"], 0),
                _num(x["seq_gaps"], 0), f"{_num(cpu)} %",
                _num(x["adapter_cpu_us_per_update"]),
                f"{ratio:.2f}×" if ratio else "1",
                _pair(x["latency_ms"]["p50"], x["latency_ms"]["p99"]),
                _num(per_core, 0), _times(per_core, UPDATES_PER_CORE_S["PVWS"]),
            ])  # fmt: skip
    rows += _pvws_rows()
    header = ["PVs × rate", "adapter", "published/s", "gaps", "seq gaps",
              "adapter CPU", "µs CPU per update", "CPU per update vs CA",
              "latency p50 / p99 ms", "updates per core-second",
              "vs PVWS (30–40k)"]  # fmt: skip
    first = _table(
        ["first values of", "adapter", "connected", "p50 / p99 / all (s)", "goal"],
        [[str(f["channels"]), f["protocol"].upper(), str(f["connected"]),
          " / ".join(_num(f["first_value_s"][k], 2) for k in ("p50", "p99", "all")),
          "≤ 1 s"] for f in r["first_values"]],
    )  # fmt: skip
    return provenance(r) + _table(header, rows) + "\n" + first


def _pvws_rows() -> list[list[str]]:
    """PVWS's own figures (peers.md), in the columns of :func:`pva`: its whole
    server per delivered update, where ours is the adapter alone."""
    rows = []
    for case, (delivered, cpu, p50) in PVWS_CASES.items():
        clients, pvs = case.split("x")
        per_update = (cpu[0] * 1e4 / delivered, cpu[1] * 1e4 / delivered)
        per_core = (delivered / (cpu[1] / 100), delivered / (cpu[0] / 100))
        rows.append([
            f"{clients} clients × {pvs} PVs × 10 Hz (peers' workload)",
            "PVWS (whole server)", f"{_num(delivered, 0)} delivered", "–", "–",
            _range(cpu, " %"), "–".join(dict.fromkeys(_num(x) for x in per_update)),
            "–", f"{_range(p50)} / –",
            _range((round(per_core[0], -2), round(per_core[1], -2))), "1",
        ])  # fmt: skip
    return rows


def pva_image(r: Report) -> str:
    rows = []
    for x in r["runs"]:
        cpu = x["cpu_percent_of_a_core"]
        fps = x["images_per_s_per_client"]
        rows.append([
            x.get("sent_as", "full resolution"),
            str(x["clients"]), _num(x["images_per_s_on_the_bus"]),
            f"{_num(min(fps))}–{_num(max(fps))}" if len(fps) > 1 else _num(fps[0]),
            _pair(x["latency_ms"]["p50"], x["latency_ms"]["p99"]),
            f"{_num(cpu['gateway'])} %", f"{_num(cpu['adapter'])} %",
            f"{_num(cpu['nats_server'])} %", f"{_num(cpu['simulator'])} %",
        ])  # fmt: skip
    header = ["sent as", "clients", "images/s on the bus", "images/s per client",
              "latency p50 / p99 ms", "gateway CPU (goal ≤ 20 %)", "adapter CPU",
              "nats-server CPU", "simulator CPU"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def pva_browser(r: Report) -> str:
    """The image widget in Chromium: one run, or ``runs`` (one row each)."""
    rows = [
        [x.get("widget", "-"), x.get("image_sent", x["image"]),
         _num(x["images_received_per_s"]), _num(x.get("received_mb_per_s")),
         _num(x["images_painted_per_s"]),
         f"{_num(x['gateway_cpu_percent_of_a_core'])} %",
         _num(x["renderer_main_thread_ms_per_image"]),
         _num(x["renderer_script_ms_per_image"])]
        for x in r.get("runs", [r])
    ]  # fmt: skip
    header = ["widget", "image sent", "received/s", "MB/s", "painted/s (goal ≥ 10)",
              "gateway CPU (goal ≤ 20 %)", "renderer main thread ms per image",
              "of it script ms"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _spread(storm: Report) -> str:
    """Over how many pairs of windows, and the alone windows against each other."""
    if storm.get("pairs", 1) < 2:
        return ""
    interval = storm.get("p99_ratio_90")
    within = f", 90 % interval ×{interval[0]}–{interval[1]}" if interval else ""
    return (f"{within} over {storm['pairs']} pairs of windows; alone against alone "
            f"×{storm['alone_vs_alone_ratio']}")  # fmt: skip


def history(r: Report) -> str:
    """Trend history in one run, three ways: the raw history only
    (``--no-hist-blocks``), the rollup's blocks on a history thread, and blocks in
    a history process (the gateway's default, ADR 0039): the read and reduction,
    20 trends opened, live p99 under a storm."""

    def cells(part: Report) -> list[str]:
        read, opened, storm = part["read_reduce"], part["open_trends"], part["storm"]
        return [
            f"{_num(read['median_wall_ms'])} ms wall, {_num(read['median_cpu_ms'])} ms CPU "
            f"({_num(read.get('messages', read['values_read']), 0)} messages)",
            f"last drawn {_num(opened['last_drawn_ms'])} ms, first {_num(opened['drawn_after_open_ms'][0])} ms",
            f"{_pair(storm['alone'].get('p50_ms'), storm['alone'].get('p99_ms'))} → "
            f"{_pair(storm['during_storm'].get('p50_ms'), storm['during_storm'].get('p99_ms'))} ms "
            f"(p99 ×{storm['p99_ratio']}{_spread(storm)})",
        ]

    read, opened, storm = r["read_reduce"], r["open_trends"], r["storm"]
    cases = [
        f"read + reduce {read['channels']} ch × {_num(read['values_read'] / read['channels'], 0)} values (px 1000)",
        f"{opened['trends']} trends × 1 h opened on one connection ({_requests(opened)})",
        f"live p50 / p99 of {storm['viewers']} viewers, alone → during {storm['storm_requests']} history requests",
    ]
    goals = [f"≤ {read['target_ms']} ms", f"each ≤ {opened['target_ms']} ms",
             f"p99 ≤ ×{storm['target_p99_ratio']}"]  # fmt: skip
    before = cells(r["raw"]) if "raw" in r else ["–"] * 3
    process = (
        ["the same service as on the thread", *cells({**r, **r["process"]})[1:]]
        if "process" in r
        else ["–"] * 3
    )
    rows = [
        list(row) for row in zip(cases, before, cells(r), process, goals, strict=True)
    ]
    scale = r.get("scale", 1)
    note = "" if scale == 1 else f"*Data sets at {scale} of the full workload.*\n\n"
    header = ["case", "raw history only (--no-hist-blocks)",
              "blocks, history thread (--no-history-process)",
              "blocks, history process (default)", "goal"]  # fmt: skip
    return provenance(r) + note + _table(header, rows)


def history_images(r: Report) -> str:
    """History with images on the bus (``make bench-history``, its ``images``
    case): the read with the defaults of ``synoptic bus init`` while a 2 MB image
    is published at 10 Hz beside the fill."""
    x = r["images"]
    image_mb = x["images_published"] * x["image_bytes"] / 1e6

    def row(key: str, what: str) -> list[str]:
        read = x[key]
        return [
            what,
            f"{read['coverage'] * 100:.1f} %",
            f"{_num(read['median_wall_ms'])} ms wall, {_num(read['median_cpu_ms'])} ms CPU",
        ]

    rows = [
        row("blocks", "blocks and raw history (default)"),
        row("raw", "raw history only (--no-hist-blocks)"),
    ]

    def n(k: int | float) -> str:  # thousands apart by a space
        return f"{k:,.0f}".replace(",", " ")

    header = [
        f"{n(x['values_stored'])} values of 100 channels beside "
        f"{n(x['images_published'])} images ({n(image_mb)} MB, "
        f"{image_mb * 1e6 / x['raw_max_bytes']:.1f} × the raw budget)",
        "values read back (goal 100 %)", "read + reduce, px 1000",
    ]  # fmt: skip
    note = (
        f"Raw history after the fill: {n(x['raw_messages'])} messages, "
        f"{x['raw_bytes'] / 2**20:.0f} MiB of {x['raw_max_bytes'] / 2**20:.0f} MiB "
        f"(messages up to {x['raw_max_msg']} B: no image); images kept, thinned, in "
        f"CS_ARRAYS: {n(x['arrays_kept'])}.\n\n"
    )
    # the case keeps the machine of its own run (it may run apart from the others)
    return provenance(x if "machine" in x else r) + _table(header, rows) + "\n" + note


def _requests(opened: Report) -> str:
    """How trends opened asked: one request each (results before the UI sent the
    trends opening together as one), or fewer."""
    n = opened.get("requests", opened["trends"])
    return f"{n} request{'s' if n != 1 else ''}, {opened['hist_in_flight']} in flight"


def history_demo(r: Report) -> str:
    """``make bench-history-demo``: the real demo for ``--minutes``, then the
    history of every numeric channel against a live record of ``cs.val``."""
    t, o = r["trends"], r["open_trends"]
    protos = ", ".join(f"{n} {p.upper()}" for p, n in sorted(t["by_protocol"].items()))
    rows = [
        [f"{t['channels']} numeric channels ({protos}) × {r['window_s'] / 60:.0f} min, px 800",
         f"{t['min_coverage'] * 100:.2f} % (least: {t['min_coverage_channel']}); "
         f"{t['channels_below_99pct']} channels below 99 %",
         f"≥ {t['target_coverage'] * 100:.0f} % of the window"],
        ["pixel columns whose min/max differ from the live record",
         f"{t['columns_differing']} of {t['columns']:,}".replace(",", " "), "0"],
        ["answered points never published", str(t["points_not_published"]), "0"],
        [f"{o['trends']} trends of {r['window_s'] / 60:.0f} min opened on one connection "
         f"({_requests(o)})",
         f"last drawn {_num(o['last_drawn_ms'])} ms, first {_num(o['drawn_after_open_ms'][0])} ms",
         f"≤ {o['target_ms']} ms"],
    ]  # fmt: skip
    reach = "; ".join(
        f"{x['stream']} {x['kept_s'] / 60:.0f} min"
        + (" (budget full)" if x.get("full") else "")
        for x in r["retention"]
    )
    note = f"How far back each history stream reached at the end: {reach}.\n\n"
    return provenance(r) + _table(["case", "measured", "goal"], rows) + "\n" + note


def editor(r: Report) -> str:
    """The screen editor on a 1000-widget screen: drag, drop, save, a viewer's notice."""
    d, s = r["drag"], r["save"]

    def row(what: str, x: dict[str, Any], target: str) -> list[str]:
        cells = [_num(x["p50"]), _num(x["p95"]), _num(x["p99"])]
        return [what, str(x["n"]), *cells, target]

    rows = [
        row("drag: main-thread work per frame (wall)", d["frame_work_wall_ms"], "p95 ≤ 16 ms"),
        row("drag: main-thread work per frame (CPU)", d["frame_work_cpu_ms"], "–"),
        row("frame interval while dragging", d["frame_interval_ms"], "16.7 = every frame"),
        row("drop → the next frame", d["drop_to_next_frame_ms"], "–"),
        row(f"save round trip, {r['widgets']} widgets ({s['screen_json_bytes'] // 1000} kB)",
            s["round_trip_ms"], "≤ 100 ms"),
        row("save's answer → the viewer's `screen` frame",
            s["viewer_frame_after_answer_ms"], "p99 ≤ 1000 ms"),
    ]  # fmt: skip
    header = ["what", "n", "p50 ms", "p95 ms", "p99 ms", "target"]
    return (provenance(r) + _table(header, rows)
            + "\nEditor open (navigation → every widget on the canvas): "
              f"{_num(r['editor_open_ms'], 0)} ms.\n")  # fmt: skip


def importer(r: Report) -> str:
    """``make bench-import``: the 500-widget ``.bob`` converted, then opened."""
    i = r["imported"]
    t = i["import"]["import_ms"]
    rows = [[f"import {i['import']['widgets']} widgets of a .bob "
             f"({_num(i['import']['bob_bytes'] / 1024, 0)} KiB), {i['import']['runs']} runs",
             f"median {_num(t['median'])} ms, p95 {_num(t['p95'])} ms",
             f"≤ {t['target']} ms"]]  # fmt: skip
    for key, label in (("open_cold_ms", "open it, cold"),
                       ("open_reopen_ms", "open it, re-open"),
                       ("link_cold_ms", "follow a link to it from an imported menu "
                                        "(click → every value live), cold"),
                       ("link_again_ms", "follow that link again")):  # fmt: skip
        if key not in i:
            continue
        o = i[key]
        rows.append([f"{label} ({i['live_widgets']} live values)",
                     f"median {_num(o['median'])} ms ({_num(min(o['runs']), 0)}–{_num(max(o['runs']), 0)})",
                     f"≤ {o.get('target', 300)} ms"])  # fmt: skip
    for key, label in (("screen_open_cold_ms", "same run: open 1000 labels + LEDs (grid), cold"),
                       ("screen_open_reopen_ms", "same run: open 1000 labels + LEDs (grid), re-open")):  # fmt: skip
        if o := r.get(key):
            rows.append([label, f"median {_num(o['median'])} ms ({_num(min(o['runs']), 0)}–{_num(max(o['runs']), 0)})",
                         f"≤ {o.get('target', 300)} ms"])  # fmt: skip
    return provenance(r) + _table(["scenario", "result", "target"], rows)


def import_real(r: Report) -> str:
    """``make bench-import-real``: third-party screens, live share per file."""
    rows = [[f"`{f['file']}`", str(f["widgets"]), str(f["mapped_type"]), str(f["live"]),
             f"{_num(f['pct'])} %"] for f in r["files"]]  # fmt: skip
    rows.append([f"**all {r['screens']} screens**", str(r["widgets"]),
                 str(r["widgets_of_mapped_types"]), str(r["live"]),
                 f"**{_num(r['coverage_pct'])} %** (target ≥ {_num(r['target_pct'], 0)} %)"])  # fmt: skip
    gaps = "".join(f"- `{k}`: {g['not_live']} of {g['widgets']} not live"
                   f"{'' if g['mapped_type'] else ' (type not mapped)'}: {g['reason']}\n"
                   for k, g in r["gaps"].items())  # fmt: skip
    header = ["screen", "widgets", "of mapped types", "live", "live share"]
    out = provenance(r) + _table(header, rows) + "\nGaps by source type:\n\n" + gaps
    out += _import_sets(r["sets"]) if "sets" in r else ""
    return out + (_whole_path(r["whole_path"]) if "whole_path" in r else "")


def _whole_path(w: Report) -> str:
    """The goal: a 500-display set through ``synoptic screens import FOLDER``."""
    rows = []
    for run, what in (("first", "into an empty bucket"), ("again", "again")):
        x = w[run]
        done = ", ".join(f"{n} {a}" for a, n in sorted(x["counts"].items()))
        met = "met" if x["wall_s"] <= w["target_s"] else "**not met**"
        rows.append([what, done, f"**{_num(x['wall_s'])} s**", f"{_num(x['cpu_s'])} s",
                     _num(x["load_avg_1m"], 2),
                     f"≤ {_num(w['target_s'], 0)} s wall: {met}"])  # fmt: skip
    header = ["run", "screens", "wall", "CPU", "load at its start", "goal"]
    return (f"\nThe goal, a 500-display set imported in ≤ {_num(w['target_s'], 0)} s: "
            f"`synoptic screens import` of `{w['set']}` ({w['displays']} displays) "
            "into a real nats-server, the whole command (Python start, conversion, "
            "report, validation, writes):\n\n" + _table(header, rows))  # fmt: skip


def _import_sets(s: Report) -> str:
    """Whole display sets imported as linked sites, one row each."""
    rows = [[f"`{x['set']}`", str(x["displays"]), str(x["widgets"]),
             f"{_num(x['mapped_pct'])} %", str(len(x["refused"])),
             f"{x['links']['resolved']} / {x['links']['outside']} / "
             f"{len(x['links_unresolved'])}",
             f"{_num(x['import_s']['cpu'])} s ({_num(x['import_s']['wall'])} s)"]
            for x in s["sets"]]  # fmt: skip
    rows.append([f"**all {len(s['sets'])} sets**", str(s["displays"]), str(s["widgets"]),
                 f"**{_num(s['mapped_pct'])} %** (target ≥ {_num(s['target_pct'], 0)} %)",
                 f"{s['refused']} (target 0)",
                 f"{s['links_resolved']} / – / {s['links_unresolved']} (target 0)", ""])  # fmt: skip
    header = ["set", "displays", "widgets", "mapped", "files refused",
              "links resolved / outside the set / unresolved inside",
              "import CPU (wall)"]  # fmt: skip
    return "\nWhole sets, each imported as one linked site:\n\n" + _table(header, rows)


def editor_layouts(r: Report) -> str:
    """The editor on the same widgets in a canvas and in a grid screen."""
    rows = []
    for x in r["runs"]:
        d, s = x["drag"], x["save"]["round_trip_ms"]
        wall, cpu = d["frame_work_wall_ms"], d["frame_work_cpu_ms"]
        rows.append([
            x["layout"], f"{_num(x['editor_open_ms'], 0)} ms",
            f"{_num(wall['p50'])} / {_num(wall['p95'])} ms, {_num(cpu['p95'])} ms",
            f"{_num(d['drop_to_next_frame_ms']['p50'])} ms",
            f"{_num(s['p50'], 0)} / {_num(s['p95'], 0)} ms",
        ])  # fmt: skip
    header = ["layout", "editor open", "drag frame work p50 / p95 wall, p95 CPU",
              "drop → next frame p50", "save round trip p50 / p95"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _cpu(x: float | str | None) -> str:
    """A CPU share: a number as ``12.0 %``, a text (``≤ 29 %``) as it is."""
    return x if isinstance(x, str) else "–" if x is None else f"{_num(x)} %"


def loadtest(r: Report) -> str:
    """``make loadtest`` runs, one row each; delivered updates per gateway
    core-second beside PVWS's per core (its whole server)."""
    pvws = UPDATES_PER_CORE_S["PVWS"]
    rows = []
    for x in r["runs"]:
        args = f' "{x["lt_args"]}"' if x["lt_args"] else ""
        what = f" ({x['what']})" if x["what"] else ""
        dps, fps = x.get("deliveries_per_s"), x.get("frames_per_s")
        if dps is None:
            delivered = x["delivered"]
        else:
            delivered = f"{_num(dps, 0)}/s" + (
                f" in {_num(fps, 0)} frames/s" if fps else ""
            )
        lat = x.get("latency_ms")
        gw = x.get("gateway_cpu_pct")
        per_core = _per_core(dps, gw) if dps and isinstance(gw, int | float) else None
        rows.append([
            f"`SCENARIO={x['scenario']} VUS={x['vus']}{args}`{what}", x["outcome"],
            delivered, _num(x["gaps"], 0),
            " / ".join(_num(lat[k], 0) for k in ("p50", "p95", "p99")) if lat else "–",
            x.get("screen_open_p95") or "–", _cpu(gw), _cpu(x.get("k6_cpu_pct")),
            _cpu(x.get("machine_cpu_pct")),
            _num(per_core, 0) if per_core else "–",
            _times(per_core, pvws) if per_core else "–",
        ])  # fmt: skip
    header = ["run (`make loadtest …`, `LT_ARGS`)", "outcome", "delivered", "gaps",
              "latency p50/p95/p99 ms", "screen open p95", "gateway CPU", "k6 CPU",
              "machine", "delivered per gateway core-second",
              "vs PVWS (30–40k per core, whole server)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def loadtest_scaling(r: Report) -> str:
    """``make loadtest-scaling``: the same fan-out over 1, 2 and 4 gateways."""
    pvws = UPDATES_PER_CORE_S["PVWS"]
    rows = [
        [
            str(x["gateways"]), _num(x["deliveries_per_s"], 0), _num(x["frames_per_s"], 0),
            _cpu(x["gateway_cpu_pct"]),
            f"{x['deliveries_per_s_per_gateway_core'] / 1000:.1f} k",
            f"{x['scaling_efficiency']:.2f}", _cpu(x["nats_cpu_pct"]),
            _cpu(x["k6_cpu_pct"]), _num(x["gaps"], 0),
            _times(x["deliveries_per_s_per_gateway_core"], pvws),
        ]
        for x in r["rows"]
    ]  # fmt: skip
    header = ["gateways", "delivered/s", "frames/s", "gateway CPU (sum)",
              "deliveries/s per gateway core", "scaling efficiency",
              "NATS CPU (3 nodes)", "k6 CPU", "gaps",
              "vs PVWS (30–40k per core)"]  # fmt: skip
    return provenance(r) + _table(header, rows)


def _part(r: Report, part: str) -> str:
    """The provenance line of one part of the faults report (parts may run apart)."""
    return provenance({"machine": r.get("machines", {}).get(part, r.get("machine"))})


def faults_sigterm(r: Report) -> str:
    """``make bench-faults``: SIGTERM to stopped, per process (children too)."""
    rows = [
        [x["process"], str(x["tries"]),
         f"{_num(x['stopped_p50_s'], 2)} / {_num(x['stopped_max_s'], 2)}",
         str(x["tries_left_running"]), ", ".join(x["exit_codes"])]
        for x in r["sigterm"]
    ]  # fmt: skip
    header = ["process (SIGTERM once ready)", "tries", "stopped p50 / max (s)",
              "tries with a process left", "exit status"]  # fmt: skip
    return _part(r, "sigterm") + _table(header, rows)


def faults_restarts(r: Report) -> str:
    """Servers restarting under their adapter: every channel back."""
    rows = [
        [x["server"], str(x["restarts"]),
         f"{_num(x['back_from_ready_s']['p50'], 2)} / {_num(x['back_from_ready_s']['max'], 2)}",
         f"{_num(x['back_from_start_s']['p50'], 2)} / {_num(x['back_from_start_s']['max'], 2)}"]
        for x in r["restarts"]
    ]  # fmt: skip
    header = ["server", "restarts (outage 0 s or " + _num(r["restarts"][0]["outage_s"][1], 0)
              + " s)", "back after it serves, p50 / max (s)",
              "back after its start, p50 / max (s)"]  # fmt: skip
    return _part(r, "restarts") + _table(header, rows)


#: The goal of each start of :func:`faults_tango` (``{}``: the slow reads' seconds).
_TANGO_GOALS = {
    "cold": "≈ one read of each in turn (≥ {} s of slow reads)",
    "memory off": "– (each start as the cold one, before the memory)",
    "device server restart": "≤ 3 after it answers",
}


def _tango_start(run: Report) -> str:
    """A start's name; a device server restart's with when its ready line came."""
    ready, answered = run.get("device_ready_line_s"), run.get("device_answered_s")
    if ready is None or answered is None:
        return str(run["start"])
    return (f"{run['start']} (from its first answer, {_num(answered, 1)} s after "
            f"its start; its ready line after {_num(ready, 1)} s)")  # fmt: skip


def faults_tango(r: Report) -> str:
    """The slow-first standard device: cold, warm and device restarts."""
    t = r["tango"]
    rows = [
        [_tango_start(x), _num(x["events_valued_s"], 2),
         _num(x["healthy_polled_valued_s"], 2),
         _TANGO_GOALS.get(x["start"], "≤ 3").format(_num(t["cold_floor_s"], 0))]
        for x in t["runs"]
    ]  # fmt: skip
    header = ["start", "389 event attributes valued (s)",
              "22 healthy polled valued (s)", "goal (s)"]  # fmt: skip
    return _part(r, "tango") + _table(header, rows)


def faults_hang(r: Report) -> str:
    """A hanging Tango host beside ten healthy devices."""
    h = r["hanging_host"]
    said = next(iter(h["hanging_device_status"].values()), None)
    rows = [[f"{h['valued_devices']} of {h['healthy_devices']}",
             f"{_num(h['first_values_p50_s'], 2)} / {_num(h['first_values_max_s'], 2)}",
             f"`{said}`" if said else "–"]]  # fmt: skip
    header = ["healthy devices valued", "first values p50 / max (s after ready)",
              "the hanging device's channels say"]  # fmt: skip
    return _part(r, "hang") + _table(header, rows)


def alarms(r: Report) -> str:
    st, storm, ack = r["steady"], r["storm"], r["ack"]
    page = storm.get("browser_page") or {}
    src = r["source"]
    rows = [
        ["steady: service CPU (% of one core)", f"{_num(st['service_cpu_percent'])} %",
         "< 10 %"],
        ["steady: service memory (RSS MiB)", _num(st["service_rss_mib"]), "reported"],
        ["steady: transition → alarm state on the bus, p50 / p99 (ms)",
         _pair(st["latency_ms"]["p50"], st["latency_ms"]["p99"]), "–"],
        [f"storm of {storm['channels']}: every transition on the bus (s: the sources' lag)",
         _num(storm.get("all_transitions_on_the_bus_s"), 2), "–"],
        [f"storm of {storm['channels']}: every state on the bus (s)",
         _num(storm["all_states_on_the_bus_s"], 2), "–"],
        [f"storm: listed on every one of {r['pages']['sockets']} socket pages (s)",
         _num(storm["listed_on_every_socket_page_s"], 2)
         + (f" ({storm['socket_page_reconnects']} reconnects of pages closed as slow)"
            if storm.get("socket_page_reconnects") else ""), "≤ 2 s"],
        [f"storm: listed on the Chromium alarm page (s; {page.get('rows', '–')} rows listed)",
         _num(storm["listed_on_the_browser_page_s"], 2), "≤ 2 s"],
        ["storm: the page's work per frame p95 / max (ms of main-thread CPU, "
         f"{page.get('frames_traced', '–')} frames)",
         _pair(page.get("frame_work_p95_ms"), page.get("frame_work_max_ms")), "p95 ≤ 16 ms"],
        ["storm: of which drawing the frame, p95 / max (ms)",
         _pair(page.get("render_p95_ms"), page.get("render_max_ms")), "–"],
        ["storm: the page's frame gaps p95 / max (ms)",
         _pair(page.get("frame_gap_p95_ms"), page.get("frame_gap_max_ms")), "–"],
        ["storm: service CPU s, RSS MiB",
         f"{_num(storm['service_cpu_s'], 2)} s, {_num(storm['service_rss_mib'])}", "reported"],
        ["storm: gateway CPU s, RSS MiB",
         f"{_num(storm['gateway_cpu_s'], 2)} s, {_num(storm['gateway_rss_mib'])}", "reported"],
        [f"acknowledgement answered (`POST /api/alarms/ack`), p50 / p99 ({ack['acks']} acks, ms)",
         _pair(ack["answer_ms"]["p50"], ack["answer_ms"]["p99"]), "–"],
        ["acknowledgement → its new state on the bus, p50 / p99 (ms)",
         _pair((ack.get("on_the_bus_ms") or {}).get("p50"),
               (ack.get("on_the_bus_ms") or {}).get("p99")), "–"],
        [f"acknowledgement → every socket page, p50 / p99 ({ack['acks']} acks, ms)",
         _pair(ack["to_every_socket_page_ms"]["p50"], ack["to_every_socket_page_ms"]["p99"]),
         "p99 ≤ 100 ms"],
        ["acknowledgement → the Chromium page, p50 / p99 (ms)",
         _pair(ack["to_the_browser_page_ms"]["p50"], ack["to_the_browser_page_ms"]["p99"]),
         "p99 ≤ 100 ms"],
    ]  # fmt: skip
    head = (
        f"{r['channels']} channels in the tree, values at {_num(r['value_rate_hz'])} Hz"
        f" ({_num(src['values_per_s_achieved'])} values/s achieved by"
        f" {src['processes']} source processes), {_num(100 * r['crossing_per_s'])} %"
        f" crossing a limit each second; service start {_num(r['service_start_s'], 2)} s,"
        f" caught up {_num(r['service_caught_up_s'], 2)} s."
        + (f" The {r['value_rate_note']}." if r.get("value_rate_note") else "")
        + "\n\n"
    )
    return provenance(r) + head + _table(["what", "measured", "goal"], rows)


def rewind(r: Report) -> str:
    """``make bench-rewind``: a screen at a moment, a playback at 60×, and live
    viewers beside 20 that rewind and play."""
    a, p, v = r["at"], r["play"], r["viewers"]
    stream = f"{a['values_in_stream']:,}".replace(",", " ")
    rows = [
        [f"{a['channels']} channels at a moment at the oldest end of a raw history of "
         f"{stream} values ({a['values_per_channel']} per channel)",
         f"{_num(a['oldest']['median_ms'])} ms median, {_num(a['oldest']['p95_ms'])} ms p95 "
         f"({a['oldest']['values']} values, {a['oldest']['metadata']} metadata)",
         f"≤ {a['target_ms']} ms"],
        [f"{a['channels']} channels at its newest end",
         f"{_num(a['newest']['median_ms'])} ms median, {_num(a['newest']['p95_ms'])} ms p95",
         f"≤ {a['target_ms']} ms"],
        [f"playback at {p['speed']:g}× of {p['channels']} channels changing at "
         f"{p['rate_hz']} Hz ({p['history_s']:g} s of history)",
         f"{_num(p['frames_per_s'])} frames/s ({p['frames']} frames, "
         f"{_num(p['values_per_frame'])} values each, {_num(p['bus_s_per_wall_s'])} s of "
         f"history per second, longest gap {_num(p['max_gap_ms'])} ms, end: {p['end']})",
         f"≥ {p['target_frames_per_s']} frames/s"],
        [f"live p50 / p99 of {v['viewers']} viewers of {v['live_channels']} channels at "
         f"10 Hz, alone → beside {v['rewinders']} rewinding and playing, the gateway's "
         "history on a thread (`--no-history-process`)",
         f"{_pair(v['alone']['p50_ms'], v['alone']['p99_ms'])} → "
         f"{_pair(v['during']['p50_ms'], v['during']['p99_ms'])} ms (p99 ×{v['p99_ratio']}"
         f"{_spread(v)})",
         f"p99 ≤ ×{v['target_p99_ratio']}"],
    ]  # fmt: skip
    b = a.get("before_first")
    if b:
        rows.insert(2, [
            f"{b['channels']} channels at a moment before their first value (after "
            f"{stream} values of others)",
            f"{_num(b['median_ms'])} ms median, {_num(b['max_ms'])} ms max "
            f"({b['not_kept']} answered not kept)", f"≤ {a['target_ms']} ms"])  # fmt: skip
    vp = r.get("viewers_history_process")
    if vp:
        budget = ", half a core at most" if "gateway_args" in r else ""
        rows.append([
            "… the same, the gateway's history in its own process (the default, "
            f"in the idle scheduling class{budget})",
            f"{_pair(vp['alone']['p50_ms'], vp['alone']['p99_ms'])} → "
            f"{_pair(vp['during']['p50_ms'], vp['during']['p99_ms'])} ms "
            f"(p99 ×{vp['p99_ratio']}{_spread(vp)})",
            f"p99 ≤ ×{vp['target_p99_ratio']}"])  # fmt: skip
    c = v["rewinder_requests"]
    note = (
        f"The rewinders' requests in the {_windows(v)}: {c.get('at', 0)} `at` of 100 channels, "
        f"{c.get('play', 0)} playbacks at 10× ({c.get('frames', 0)} `pb` frames), "
        f"{c.get('errors', 0)} errors.\n\n"
    )
    cpu = (vp or {}).get("cpu_s")
    if cpu:
        note += (
            f"CPU seconds in a {_num(vp['window_s'])}-s window (the mean of "
            f"{vp.get('pairs', 1)}), history in its own process, alone → beside the "
            f"rewinders: {_cpu_line(cpu)}.\n\n"
        )
    return provenance(r) + _table(["case", "measured", "goal"], rows) + "\n" + note


def _windows(v: Report) -> str:
    pairs = v.get("pairs", 1)
    return f"{pairs} windows beside them" if pairs > 1 else "window"


#: The processes of a viewers case's CPU report, in the order they are named.
_CPU_ROLES = (("history_process", "the history process"),
              ("nats_server", "nats-server"), ("gateway", "the gateway"),
              ("bench", "the live publisher and viewers"),
              ("rewinders", "the rewinders' client"))  # fmt: skip


def _cpu_line(cpu: dict[str, dict[str, float | None]]) -> str:
    """``cpu_s`` of a viewers case as prose: each process's seconds alone → during."""
    alone, during = cpu.get("alone", {}), cpu.get("during", {})
    parts = []
    for key, name in _CPU_ROLES:
        if during.get(key) is None:
            continue
        before = alone.get(key)
        was = f"{_num(before)} → " if before is not None else ""
        parts.append(f"{name} {was}{_num(during[key])}")
    return ", ".join(parts)


def auth(r: Report) -> str:
    """``make bench-auth``: sign-in in Chromium, the gateway's token check, a
    rotated key."""
    si, ck, ro = r["signin"], r["check"], r["rotation"]
    tot, prov, back = si["total_ms"], si["to_provider_ms"], si["back_ms"]
    took = ro["connections_until_accepted"]
    again = si.get("returning")
    rows = [
        [f"sign-in round trip in Chromium, a browser new to the provider: Sign in → "
         f"the name shown ({si['user']}, median of {si['runs']}, min–max)",
         f"{_num(tot['median'], 0)} ms ({_num(tot['min'], 0)}–{_num(tot['max'], 0)})",
         f"≤ {si['goal_ms']:g} ms"],
        ["… of which: Sign in → the provider's form shown / form sent → the name shown",
         f"{_num(prov['median'], 0)} / {_num(back['median'], 0)} ms", "–"],
    ]  # fmt: skip
    if "driver_total_ms" in si:
        d = si["driver_total_ms"]
        rows += [
            ["… as the test driver sees it (Playwright's click and its checks, its "
             "polling for the name: the page's moments above exclude them)",
             f"{_num(d['median'], 0)} ms ({_num(d['min'], 0)}–{_num(d['max'], 0)})",
             "–"],
        ]  # fmt: skip
    if again:
        t, p, b = again["total_ms"], again["to_provider_ms"], again["back_ms"]
        rows += [
            [f"… signing in again in the same browser (signed out in between; the "
             f"provider's page assets cached), median of {again['runs']}, min–max",
             f"{_num(t['median'], 0)} ms ({_num(t['min'], 0)}–{_num(t['max'], 0)}): "
             f"{_num(p['median'], 0)} / {_num(b['median'], 0)} ms",
             f"≤ {si['goal_ms']:g} ms"],
        ]  # fmt: skip
    rows += [
        ["… the first sign-in after the provider started", f"{_num(si['first_ms'], 0)} ms",
         "reported"],
        [f"token check per connection: verify ({ck['alg']}, the cached JWKS key) + "
         f"grants (role file), median of 5 rounds of {ck['checks'] // 5}",
         f"{ck['per_connection_ms']:.3f} ms", f"≤ {ck['goal_ms']:g} ms"],
        ["… of which: verify / grants"
         + (" (an identity not seen before: its rules matched)"
            if "grants_new_identity_ms" in ck else ""),
         f"{ck['verify_ms']:.3f} / {ck['grants_ms']:.3f} ms"
         + (f" ({ck['grants_new_identity_ms']:.3f} ms)"
            if "grants_new_identity_ms" in ck else ""), "–"],
        ["a rotated key: connections with a token of the new key until one is accepted",
         (f"{took} ({_num(ro['accepted_connection_ms'], 0)} ms for that connection)"
          if took is not None else f"not accepted in {len(ro['tries'])}"),
         f"{ro['goal']}"],
    ]  # fmt: skip
    return provenance(r) + _table(["what", "measured", "goal"], rows)


#: Table name → (results file, function making the table).
TABLES: dict[str, tuple[str, Callable[[Report], str]]] = {
    "faults-sigterm": ("faults", faults_sigterm),
    "faults-restarts": ("faults", faults_restarts),
    "faults-tango": ("faults", faults_tango),
    "faults-hang": ("faults", faults_hang),
    "import": ("import", importer),
    "alarms": ("alarms", alarms),
    "auth": ("auth", auth),
    "import-real": ("import-real", import_real),
    "history": ("history", history),
    "history-images": ("history", history_images),
    "history-demo": ("history-demo", history_demo),
    "rewind": ("rewind", rewind),
    "store": ("store", store),
    "epics": ("epics", epics),
    "pva": ("pva", pva),
    "pva-image": ("pva-image", pva_image),
    "pva-browser": ("pva-image-browser", pva_browser),
    "tango-subscription": ("tango", tango_subscription),
    "tango-throughput": ("tango", tango_throughput),
    "tango-harm": ("tango-harm", tango_harm),
    "gateway": ("gateway", gateway),
    "gateway-peers": ("gateway", gateway_peers),
    "gateway-open": ("gateway-open", gateway_open),
    "gateway-hub": ("gateway-hub", gateway_hub),
    "gateway-waveform": ("gateway-waveform", gateway_waveform),
    "wan": ("wan", wan),
    "peers": ("peers", peers),
    "ui": ("ui", ui),
    "screens": ("screens", screens),
    "editor": ("editor", editor),
    "editor-layouts": ("editor-layouts", editor_layouts),
    "loadtest": ("loadtest", loadtest),
    "loadtest-scaling": ("loadtest-scaling", loadtest_scaling),
}


# -- the page -------------------------------------------------------------------------


def load_results(results_dir: Path = RESULTS_DIR) -> dict[str, Report]:
    """Every ``NAME.json`` of the results folder, by ``NAME``."""
    out = {}
    for path in sorted(results_dir.glob("*.json")):
        try:
            out[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TablesError(f"{path.name}: not JSON ({exc})") from exc
    return out


def render(page: str, results: dict[str, Report]) -> str:
    """``page`` with every marked block replaced by its table."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise TablesError(
                f"<!-- bench:{name} --> names no table ({', '.join(TABLES)})"
            )
        source, make = TABLES[name]
        if source not in results:
            raise TablesError(f"<!-- bench:{name} -->: no results/{source}.json")
        try:
            body = make(results[source])
        except (KeyError, TypeError, ValueError) as exc:
            raise TablesError(f"results/{source}.json for {name}: {exc!r}") from exc
        return match.group(1) + body + match.group(4)

    return _BLOCK.sub(fill, page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synoptic_benchmarks.tables",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the page differs from its results; write nothing")  # fmt: skip
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    new = render(text, load_results())
    if args.check:
        if new != text:
            print(
                f"{PAGE.name} is not current: run `make bench-tables`", file=sys.stderr
            )
            return 1
        return 0
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
