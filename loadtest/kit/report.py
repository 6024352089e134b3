"""Turn one run (k6 summary, k6 timeline, process samples) into the results JSON
and a self-contained HTML report with ECharts plots (throughput, latency
percentiles over time, CPU and RSS)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kit.k6run import K6Result
from kit.plan import LOADTEST, Plan
from kit.sampler import Series

ECHARTS = LOADTEST / "node_modules" / "echarts" / "dist" / "echarts.min.js"
#: RSS growth above which a soak's memory is not called flat (MiB per minute).
RSS_SLOPE_LIMIT_MIB_PER_MIN = 5.0
#: Age (s) of the oldest data a slow consumer may read (conflation or a close must
#: come first).
SLOW_AGE_LIMIT_S = 10.0
#: Delivery below this fraction of the offered rate marks a ramp window as failed.
DELIVERY_FLOOR = 0.95
#: Latency p95 above this marks a ramp window as failed (ms).
LATENCY_CEILING_MS = 1000.0

_COUNTERS = {
    "updates": "updates", "upd_frames": "frames", "update_gaps": "gaps",
    "snapshot_gaps": "snapshot_gaps", "update_regressions": "regressions", "protocol_errors": "errors",
    "unexpected_closes": "unexpected_closes", "missed_updates": "missed",
    "screens_opened": "screens_opened", "screens_closed": "screens_closed",
    "resnaps": "resnaps", "data_received": "bytes_received",
}  # fmt: skip


def _trend(values: dict | None) -> dict[str, float] | None:
    if not values:
        return None
    keys = {"p50": "med", "p90": "p(90)", "p95": "p(95)", "p99": "p(99)",
            "max": "max", "avg": "avg"}  # fmt: skip
    out = {name: round(float(values.get(k, 0.0)), 2) for name, k in keys.items()}
    out["count"] = int(values.get("count", 0))
    return out


def k6_metrics(summary: dict) -> dict[str, object]:
    """Counters and trends of the k6 summary under the report's names."""
    metrics = summary.get("metrics", {})
    out: dict[str, object] = {}
    for k6_name, name in _COUNTERS.items():
        out[name] = int(metrics.get(k6_name, {}).get("values", {}).get("count", 0))
    closes = {}
    for k6_name, data in metrics.items():
        if k6_name.startswith("closes_") and data.get("values", {}).get("count"):
            closes[k6_name.removeprefix("closes_")] = int(data["values"]["count"])
    out["closes_by_code"] = closes
    out["latency_ms"] = _trend(metrics.get("update_latency_ms", {}).get("values"))
    out["screen_open_ms"] = _trend(metrics.get("screen_open_ms", {}).get("values"))
    return out


def thresholds(summary: dict) -> dict[str, dict[str, bool]]:
    """Each threshold expression and whether it held."""
    out: dict[str, dict[str, bool]] = {}
    for name, data in summary.get("metrics", {}).items():
        for expr, result in (data.get("thresholds") or {}).items():
            out.setdefault(name, {})[expr] = bool(result.get("ok"))
    return out


def latency_windows(summary: dict, window_ms: int) -> dict[str, list[float]]:
    """Latency percentiles per time window (the k6 script's ``lat_wK`` trends)."""
    metrics = summary.get("metrics", {})
    out: dict[str, list[float]] = {"t": [], "p50": [], "p95": [], "p99": []}
    for k in range(60):
        values = metrics.get(f"lat_w{k}", {}).get("values")
        if not values or not values.get("count"):
            continue
        out["t"].append(round((k + 1) * window_ms / 1000, 1))
        out["p50"].append(round(values["med"], 1))
        out["p95"].append(round(values["p(95)"], 1))
        out["p99"].append(round(values["p(99)"], 1))
    return out


def rates(timeline: dict[str, list[float]]) -> dict[str, list[float]]:
    """Per-second rates from the polled cumulative counters."""
    t = timeline.get("t", [])
    out: dict[str, list[float]] = {"t": t[1:], "vus": timeline.get("vus", [])[1:]}
    for name, values in timeline.items():
        if name in ("t", "vus"):
            continue
        out[name + "_per_s"] = [
            round((values[i] - values[i - 1]) / max(1e-6, t[i] - t[i - 1]), 1)
            for i in range(1, len(values))
        ]
    return out


def _slope_per_min(t: list[float], y: list[float]) -> float:
    n = len(t)
    if n < 3:
        return 0.0
    mean_t, mean_y = sum(t) / n, sum(y) / n
    var = sum((x - mean_t) ** 2 for x in t)
    if var == 0:
        return 0.0
    cov = sum((x - mean_t) * (v - mean_y) for x, v in zip(t, y, strict=True))
    return cov / var * 60


def process_stats(series: dict[str, Series], window: tuple[float, float]
                  ) -> dict[str, dict[str, float]]:  # fmt: skip
    """Per role, over the load ``window`` (seconds of the sampler's clock): average
    and peak CPU, RSS at start/end, RSS slope over the second half (after warm-up)."""
    out = {}
    for role, full in series.items():
        keep = [k for k, t in enumerate(full.t) if window[0] <= t <= window[1]]
        if not keep:
            continue
        s = Series([full.t[k] for k in keep], [full.cpu[k] for k in keep],
                   [full.rss_mib[k] for k in keep])  # fmt: skip
        half = len(s.t) // 2
        out[role] = {
            "cpu_avg_pct": round(sum(s.cpu) / len(s.cpu), 1),
            "cpu_max_pct": round(max(s.cpu), 1),
            "rss_start_mib": s.rss_mib[0],
            "rss_end_mib": s.rss_mib[-1],
            "rss_max_mib": max(s.rss_mib),
            "rss_slope_mib_per_min": round(
                _slope_per_min(s.t[half:], s.rss_mib[half:]), 2
            ),
        }
        if role == "machine":  # used memory of the whole machine: no process's slope
            del out[role]["rss_slope_mib_per_min"]
    return out


def breaking_point(plan: Plan, per_s: dict[str, list[float]],
                   lat: dict[str, list[float]]) -> dict[str, object]:  # fmt: skip
    """The first second where delivery fell below DELIVERY_FLOOR of what the
    viewers should get (VUs × screen channels × rate), or latency p95 went over
    LATENCY_CEILING_MS; with the viewer count then and the best rate sustained."""
    per_viewer = (plan.screen_channels or plan.channels) * plan.rate
    best = max(per_s.get("updates_per_s", [0]) or [0])
    result: dict[str, object] = {"max_deliveries_per_s": best, "found": False}
    for t, vus, delivered in zip(per_s["t"], per_s["vus"],
                                 per_s["updates_per_s"], strict=False):  # fmt: skip
        # the first seconds of a viewer include its screen opening: skip tiny loads
        if vus < 2 or t < 3:
            continue
        ratio = delivered / (vus * per_viewer)
        if ratio < DELIVERY_FLOOR:
            result.update(found=True, at_s=t, vus=vus, reason="delivery",
                          delivered_per_s=delivered, delivery_ratio=round(ratio, 3))  # fmt: skip
            return result
    for t, p95 in zip(lat["t"], lat["p95"], strict=True):
        if p95 > LATENCY_CEILING_MS:
            vus_then = _value_at(per_s["t"], per_s["vus"], t)
            result.update(
                found=True, at_s=t, vus=vus_then, reason="latency", p95_ms=p95
            )
            return result
    return result


#: The load window starts this long after k6 does (run.WARMUP_S): the k6 clock is
#: the sampler's minus (window start - this).
WARMUP_OFFSET_S = 2.0


def cpu_at(series: dict[str, Series], t: float) -> dict[str, float]:
    """CPU % of each role in the sample nearest to ``t`` (sampler clock)."""
    out = {}
    for role, s in series.items():
        if s.t:
            k = min(range(len(s.t)), key=lambda i: abs(s.t[i] - t))
            out[role] = s.cpu[k]
    return out


def limited_by(cpu: dict[str, float]) -> str:
    """Which resource was exhausted: a process at a full core (they are single
    event loops), else the whole machine, else none visible."""
    for role in ("gateway", "k6", "source", "nats"):
        if cpu.get(role, 0) >= 90:
            return role if role != "k6" else "generator (k6)"
    if cpu.get("machine", 0) >= 95:
        return "machine (every core busy, other work included)"
    return "not CPU (see latency)"


def _value_at(ts: list[float], values: list[float], t: float) -> float:
    for x, v in zip(ts, values, strict=True):
        if x >= t:
            return v
    return values[-1] if values else 0


def build(plan: Plan, stack_info: dict, k6: K6Result, series: dict[str, Series],
          window: tuple[float, float], extra: dict) -> dict[str, object]:  # fmt: skip
    """The results document. ``window``: the load phase on the sampler's clock."""
    metrics = k6_metrics(k6.summary)
    per_s = rates(k6.timeline)
    lat = latency_windows(k6.summary, plan.window_ms)
    procs = process_stats(series, window)
    duration = max(1e-6, plan.duration_s)
    deliveries_per_s = metrics["updates"] / duration  # type: ignore[operator]
    frames_per_s = metrics["frames"] / duration  # type: ignore[operator]
    gateway_cpu = procs.get("gateway", {}).get("cpu_avg_pct", 0.0)
    k6_cpu = procs.get("k6", {}).get("cpu_avg_pct", 0.0)
    result: dict[str, object] = {
        "scenario": plan.scenario,
        "plan": plan.summary(),
        "stack": stack_info,
        "k6": {"exit_code": k6.exit_code, "thresholds_passed": k6.thresholds_passed,
               "thresholds": thresholds(k6.summary), "wall_s": round(k6.wall_s, 1)},
        "metrics": metrics,
        "throughput": {
            "deliveries_per_s": round(deliveries_per_s, 1),
            "frames_per_s": round(frames_per_s, 1),
            "offered_per_viewer_per_s": (plan.screen_channels or plan.channels) * plan.rate,
            "gateway_cpu_pct": gateway_cpu,
            "deliveries_per_s_per_gateway_core": round(
                deliveries_per_s / (gateway_cpu / 100), 1) if gateway_cpu else None,
            "frames_per_s_per_gateway_core": round(
                frames_per_s / (gateway_cpu / 100), 1) if gateway_cpu else None,
            "k6_cpu_pct": k6_cpu,
            "k6_cpu_us_per_frame": round(k6_cpu / 100 * 1e6 / frames_per_s, 1)
            if frames_per_s else None,
            "k6_cpu_us_per_update": round(k6_cpu / 100 * 1e6 / deliveries_per_s, 2)
            if deliveries_per_s else None,
            "machine_cpu_pct": procs.get("machine", {}).get("cpu_avg_pct"),
            # every byte k6 received (frames and handshakes) per viewer per second
            "bytes_per_s_per_viewer": round(
                metrics["bytes_received"] / duration / max(1, plan.vus)),  # type: ignore[operator]
        },
        "processes": procs,
        "timeseries": {
            "throughput": per_s,
            "latency": lat,
            "processes": {role: {"t": s.t, "cpu": s.cpu, "rss_mib": s.rss_mib}
                          for role, s in series.items()},
        },
    }  # fmt: skip
    checks: list[dict[str, object]] = []
    if plan.scenario == "ramp":
        found = breaking_point(plan, per_s, lat)
        if found["found"]:
            found["cpu_then"] = cpu_at(
                series, window[0] - WARMUP_OFFSET_S + float(found["at_s"])
            )
            found["limited_by"] = limited_by(found["cpu_then"])
        result["breaking_point"] = found
    if plan.scenario == "soak":
        for role in ("gateway", "source"):
            if role in procs:
                slope = procs[role]["rss_slope_mib_per_min"]
                checks.append({"check": f"{role} RSS flat", "ok": slope < RSS_SLOPE_LIMIT_MIB_PER_MIN,
                               "value": slope, "limit": RSS_SLOPE_LIMIT_MIB_PER_MIN})  # fmt: skip
    slow = extra.get("slow_consumers")
    if slow:
        # a slow socket must not be served an ever older backlog: what it reads stays
        # recent (conflation), or it is closed (4001) before it gets that stale
        ok = slow["age_s_max"] < SLOW_AGE_LIMIT_S
        checks.append({"check": "slow consumers never read data older than the limit",
                       "ok": ok, "value": slow["age_s_max"], "limit": SLOW_AGE_LIMIT_S})  # fmt: skip
    result.update(extra)
    result["checks"] = checks
    result["pass"] = k6.thresholds_passed and all(c["ok"] for c in checks)
    return result


def write(result: dict[str, object], out_dir: Path) -> tuple[Path, Path]:
    """``result.json`` and ``report.html`` (with echarts.min.js beside it)."""
    json_path = out_dir / "result.json"
    json_path.write_text(json.dumps(result, indent=1))
    html_path = out_dir / "report.html"
    if ECHARTS.exists():
        shutil.copy(ECHARTS, out_dir / "echarts.min.js")
    html_path.write_text(_HTML.replace("__DATA__", json.dumps(result)))
    return json_path, html_path


_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>Synoptic load test</title>
<script src="echarts.min.js"></script>
<style>body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1100px}
.chart{height:300px;margin:1em 0}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
.ok{color:#070}.bad{color:#b00}</style></head><body>
<h1 id="title"></h1><p id="verdict"></p><table id="summary"></table>
<div id="thr" class="chart"></div><div id="lat" class="chart"></div>
<div id="cpu" class="chart"></div><div id="rss" class="chart"></div>
<script>
const R = __DATA__;
document.getElementById('title').textContent =
  `${R.scenario}: ${R.plan.vus} viewers × ${R.plan.screen_channels || R.plan.channels} channels at ${R.plan.rate} Hz, ${R.stack.gateways} gateway(s)`;
const v = document.getElementById('verdict');
v.textContent = R.pass ? 'PASS' : 'FAIL'; v.className = R.pass ? 'ok' : 'bad';
const rows = [['delivered updates', R.metrics.updates], ['gaps', R.metrics.gaps], ['gaps right after a snapshot', R.metrics.snapshot_gaps],
  ['errors', R.metrics.errors], ['unexpected closes', R.metrics.unexpected_closes],
  ['deliveries/s', R.throughput.deliveries_per_s],
  ['deliveries/s per gateway core', R.throughput.deliveries_per_s_per_gateway_core],
  ['latency p50/p95/p99 ms', R.metrics.latency_ms ? [R.metrics.latency_ms.p50, R.metrics.latency_ms.p95, R.metrics.latency_ms.p99].join(' / ') : '–'],
  ['screen open p95 ms', R.metrics.screen_open_ms ? R.metrics.screen_open_ms.p95 : '–']];
document.getElementById('summary').innerHTML = rows.map(r => `<tr><th>${r[0]}</th><td>${r[1]}</td></tr>`).join('');
// series: [name, x values, y values]; each series keeps its own time axis
function chart(id, title, series, yname) {
  if (typeof echarts === 'undefined') return;
  echarts.init(document.getElementById(id)).setOption({
    animation: false, title: { text: title }, tooltip: { trigger: 'axis' }, legend: { top: 25 },
    grid: { top: 60 }, xAxis: { type: 'value', name: 's' }, yAxis: { type: 'value', name: yname },
    series: series.map(s => ({ type: 'line', name: s[0], showSymbol: false,
      data: s[1].map((t, i) => [t, s[2][i]]) })) });
}
const T = R.timeseries.throughput;
chart('thr', 'Throughput', [['updates/s', T.t, T.updates_per_s], ['frames/s', T.t, T.upd_frames_per_s],
  ['viewers', T.t, T.vus]], '/s');
const L = R.timeseries.latency;
chart('lat', 'Latency (source t → receipt)', [['p50', L.t, L.p50], ['p95', L.t, L.p95], ['p99', L.t, L.p99]], 'ms');
const P = R.timeseries.processes;
const roles = Object.keys(P).filter(r => P[r].t.length);
chart('cpu', 'CPU (% of one core; machine: % of all cores)', roles.map(r => [r, P[r].t, P[r].cpu]), '%');
chart('rss', 'RSS (MiB)', roles.filter(r => r !== 'machine').map(r => [r, P[r].t, P[r].rss_mib]), 'MiB');
</script></body></html>
"""
