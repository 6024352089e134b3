"""Run one load-test scenario end to end: ``make loadtest SCENARIO=fanout VUS=50``.

Starts what is missing (nats-server or a 3-node cluster, the synthetic publisher,
N gateway processes) unless gateway URLs are given, runs the k6 scenario bounded in
time, samples CPU/RSS of the servers and of k6, and writes ``result.json`` and
``report.html`` under ``loadtest/results/<scenario>-<time>/``. Prints the result
path and a one-line verdict; exits 0 when the scenario's contract held.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from kit import report
from kit.k6run import run_k6
from kit.plan import DEFAULTS, LOADTEST, Plan, make_screens, window_ms
from kit.sampler import Sampler
from kit.stack import KIT, StackConfig, start_stack

from synoptic_bus.procs import Process

#: Seconds after k6 starts before CPU samples count (VU init, screens opening).
WARMUP_S = 2.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", required=True, choices=sorted(DEFAULTS))
    parser.add_argument("--vus", type=int, help="viewers (k6 VUs)")
    parser.add_argument("--gateways", default="1",
                        help="number of gateways to start, or comma-separated URLs")  # fmt: skip
    parser.add_argument("--nats-nodes", type=int, default=1, choices=(1, 3))
    parser.add_argument("--channels", type=int, help="channels published")
    parser.add_argument("--rate", type=float, help="Hz per channel")
    parser.add_argument("--duration", type=float, help="seconds of load")
    parser.add_argument("--format", choices=("msgpack", "json"))
    parser.add_argument("--source", choices=("synthetic", "epics"), default="synthetic",
                        help="value source: the counting publisher, or the simulated "
                        "IOC + EPICS adapter")  # fmt: skip
    parser.add_argument("--in-phase", action="store_true",
                        help="publish every channel at the same instant (big batches) "
                        "instead of spread over the period")  # fmt: skip
    parser.add_argument("--screen-channels", type=int, help="channels per screen")
    parser.add_argument("--screen-count", type=int, help="distinct screens")
    parser.add_argument("--storm-s", type=float)
    parser.add_argument("--churn-ms", type=int)
    parser.add_argument("--slow", type=int, help="slow consumer sockets")
    parser.add_argument("--slow-read-bps", type=int)
    parser.add_argument("--waveform-points", type=int,
                        help="channels are f8 arrays of this many points")  # fmt: skip
    parser.add_argument("--pts", type=int,
                        help="viewers ask for at most this many points (sub.pts; 0: "
                        "full arrays)")  # fmt: skip
    parser.add_argument("--out", type=Path, help="result folder")
    parser.add_argument("--echo", action="store_true", help="echo server output")
    return parser.parse_args(argv)


def make_plan(args: argparse.Namespace) -> Plan:
    values = dict(DEFAULTS[args.scenario])
    for key in ("vus", "channels", "rate", "format", "screen_channels",
                "screen_count", "storm_s", "churn_ms", "slow", "slow_read_bps",
                "waveform_points", "pts"):  # fmt: skip
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.duration is not None:
        values["duration_s"] = args.duration
    if args.in_phase:
        values["in_phase"] = True
    plan = Plan(scenario=args.scenario, **values)  # type: ignore[arg-type]
    if plan.scenario == "fanout-distinct":
        plan.screen_count = plan.vus
    plan.window_ms = window_ms(plan.duration_s + plan.storm_s)
    plan.nats_nodes = args.nats_nodes
    return plan


def start_slow_clients(plan: Plan, out_dir: Path) -> Process | None:
    if not plan.slow:
        return None
    channels_file = out_dir / "slow-channels.json"
    channels_file.write_text(json.dumps(plan.screens[0]))
    argv = [sys.executable, str(KIT / "slowclient.py"), "--url", plan.gateways[0],
            "--count", str(plan.slow), "--channels-file", str(channels_file),
            "--read-bps", str(plan.slow_read_bps)]  # fmt: skip
    process = Process("slow-clients", argv)
    process.wait_for(r"slow clients ready", 60)
    return process


def run(args: argparse.Namespace) -> dict[str, object]:
    plan = make_plan(args)
    urls = [u for u in args.gateways.split(",") if "://" in u]
    config = StackConfig(
        channels=plan.channels, rate=plan.rate, nats_nodes=args.nats_nodes,
        gateways=0 if urls else int(args.gateways), gateway_urls=urls, echo=args.echo,
        phased=not plan.in_phase, source=args.source,
        waveform_points=plan.waveform_points,
    )  # fmt: skip
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = args.out or LOADTEST / "results" / f"{plan.scenario}-{stamp}"
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    stack = start_stack(config)
    slow = None
    try:
        plan.gateways = stack.gateway_urls
        plan.screens = make_screens(stack.channel_uris, plan.screen_channels,
                                    plan.screen_count)  # fmt: skip
        slow = start_slow_clients(plan, out_dir)
        sampler = Sampler(stack.pids())
        if slow:
            sampler.add("slow-clients", slow.pid)
        sampler.start()
        bound = plan.duration_s + plan.storm_s + 90
        marks: list[float] = []

        def k6_started(pid: int) -> None:
            sampler.add("k6", pid)
            marks.append(sampler.elapsed())

        k6 = run_k6(plan, out_dir, bound, on_start=k6_started)
        # the load window: from k6's start + its init (VUs, ~1 s) to its end
        window = (marks[0] + WARMUP_S, sampler.elapsed())
        sampler.stop()
        extra: dict[str, object] = {}
        if slow:
            mark = slow.mark()
            slow.signal(15)
            match = slow.wait_for(r"slow clients result: (.*)", 30, since=mark)
            extra["slow_consumers"] = json.loads(match.group(1))
        info = {"gateways": len(stack.gateway_urls), "gateway_urls": stack.gateway_urls,
                "nats_nodes": len(stack.nats) or None, "source": config.source
                if not urls else "external", "started_here": not urls}  # fmt: skip
        result = report.build(plan, info, k6, sampler.series, window, extra)
        result["k6"]["output_tail"] = k6.output_tail[-2000:]  # type: ignore[index]
        json_path, html_path = report.write(result, out_dir)
    finally:
        if slow:
            slow.stop()
        stack.close()
    verdict = "PASS" if result["pass"] else "FAIL"
    t = result["throughput"]
    m = result["metrics"]
    print(
        f"{verdict} {plan.scenario}: {m['updates']} updates, {m['gaps']} gaps, "  # type: ignore[index]
        f"{m['errors']} errors, {t['deliveries_per_s']} deliveries/s, "  # type: ignore[index]
        f"latency {m['latency_ms']}, screen open {m['screen_open_ms']}"
    )  # type: ignore[index]
    print(f"results: {json_path}\nreport:  {html_path}")
    return result


def exit_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so the stack is stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def main() -> None:
    exit_on_sigterm()
    result = run(parse_args())
    sys.exit(0 if result["pass"] else 1)


if __name__ == "__main__":
    main()
