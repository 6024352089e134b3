"""The same fan-out against 1, 2 and 4 gateway processes on a 3-node NATS cluster.

``make loadtest-scaling`` (options as for run.py: ``--vus``, ``--channels`` …).
k6 spreads the viewers round-robin over the gateway URLs. Writes
``loadtest/results/scaling-<time>/scaling.json`` (and one folder per gateway count)
with deliveries/s, frames/s, gateway CPU, deliveries per gateway core and the
scaling efficiency: per-core throughput with N gateways over that with one (1.0:
adding gateways costs nothing extra per delivery).
"""

from __future__ import annotations

import json
import sys
import time

from kit.plan import LOADTEST
from run import exit_on_sigterm, parse_args, run


def main() -> None:
    exit_on_sigterm()
    argv = sys.argv[1:]
    counts = [1, 2, 4]
    if "--counts" in argv:
        at = argv.index("--counts")
        counts = [int(n) for n in argv[at + 1].split(",")]
        del argv[at : at + 2]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = LOADTEST / "results" / f"scaling-{stamp}"
    rows = []
    for count in counts:
        args = parse_args(["--scenario", "fanout", "--nats-nodes", "3",
                           "--gateways", str(count), "--out", str(base / f"gw{count}"),
                           *argv])  # fmt: skip
        result = run(args)
        throughput = result["throughput"]
        rows.append({
            "gateways": count,
            "pass": result["pass"],
            "deliveries_per_s": throughput["deliveries_per_s"],
            "frames_per_s": throughput["frames_per_s"],
            "gateway_cpu_pct": throughput["gateway_cpu_pct"],
            "deliveries_per_s_per_gateway_core":
                throughput["deliveries_per_s_per_gateway_core"],
            "frames_per_s_per_gateway_core": throughput["frames_per_s_per_gateway_core"],
            "latency_ms": result["metrics"]["latency_ms"],
            "gaps": result["metrics"]["gaps"],
            "k6_cpu_pct": throughput["k6_cpu_pct"],
            "machine_cpu_pct": throughput["machine_cpu_pct"],
            "nats_cpu_pct": result["processes"].get("nats", {}).get("cpu_avg_pct"),
        })  # fmt: skip
    first = rows[0]["deliveries_per_s_per_gateway_core"] or 0
    for row in rows:
        per_core = row["deliveries_per_s_per_gateway_core"] or 0
        row["scaling_efficiency"] = round(per_core / first, 2) if first else None
    summary = {"plan": result["plan"], "rows": rows}
    (base / "scaling.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(rows, indent=1))
    print(f"scaling: {base / 'scaling.json'}")


if __name__ == "__main__":
    main()
