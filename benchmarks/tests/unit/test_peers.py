"""The side-by-side benchmark's parsing and accounting (no peer server runs here:
``make bench-peers`` runs Coniql; these check what it counts)."""

from __future__ import annotations

import json
import os
import time

import pytest

from synoptic_benchmarks.peers.coniql_client import parse_next, subscribe_message
from synoptic_benchmarks.peers.procstat import (
    CpuMeter,
    cpu_seconds,
    rss_mib,
    runqueue_wait_seconds,
)
from synoptic_benchmarks.peers.run import Case, pv_names, ratios, summarize
from synoptic_benchmarks.peers.tally import Tally

# Messages as Coniql 0.4.2 sent them to the benchmark's query (captured here).
FIRST = (
    '{"id": "0", "payload": {"data": {"subscribeChannel": {"value": {"float": 9.0}, '
    '"time": {"seconds": 1795377327.236793, "nanoseconds": 236793347}, '
    '"status": {"quality": "VALID"}}}}, "type": "next"}'
)
UPDATE = (
    '{"id": "12", "payload": {"data": {"subscribeChannel": {"value": {"float": 10.0}, '
    '"time": {"seconds": 1795377327.336784, "nanoseconds": 336783748}, '
    '"status": null}}}, "type": "next"}'
)
META_ONLY = (
    '{"id": "3", "payload": {"data": {"subscribeChannel": {"value": {"float": 10.0}, '
    '"time": null, "status": null}}}, "type": "next"}'
)


def test_parse_next_reads_id_value_and_ioc_timestamp() -> None:
    assert parse_next(json.loads(FIRST)) == (0, 9.0, 1795377327.236793)
    assert parse_next(json.loads(UPDATE)) == (12, 10.0, 1795377327.336784)


@pytest.mark.parametrize(
    "message",
    [
        META_ONLY,
        '{"type": "connection_ack"}',
        '{"type": "ping"}',
        '{"id": "1", "type": "complete"}',
        '{"id": "1", "type": "next", "payload": {"data": null, "errors": [{}]}}',
    ],
)
def test_parse_next_ignores_what_is_not_a_value_update(message: str) -> None:
    assert parse_next(json.loads(message)) is None


def test_subscribe_message_is_one_graphql_subscription_per_pv() -> None:
    message = json.loads(subscribe_message(7, "BENCH:CNT:00042"))
    assert message["id"] == "7" and message["type"] == "subscribe"
    query = message["payload"]["query"]
    assert query.startswith("subscription {")
    assert 'subscribeChannel(id: "ca://BENCH:CNT:00042")' in query
    assert "time { seconds" in query and "value { float }" in query


def test_tally_counts_only_the_window_and_gaps_against_the_previous_value() -> None:
    tally = Tally(start=100.0, end=110.0)
    tally.count("a", 1.0, stamp=99.0, now=99.5)  # before the window: not counted
    tally.count("a", 2.0, stamp=100.0, now=100.02)
    tally.count("a", 5.0, stamp=100.3, now=100.33)  # 3 and 4 skipped
    tally.count("b", 7.0, stamp=100.3, now=100.4)  # first seen: no gap
    tally.count("b", None, stamp=100.4, now=100.5)  # not a number: counted, no gap
    tally.count("b", 8.0, stamp=100.5, now=100.6)
    tally.count("a", 9.0, stamp=109.9, now=110.0)  # at the end: not counted
    assert tally.delivered == 5
    assert tally.value_gaps == 2
    assert tally.latencies == pytest.approx([0.02, 0.03, 0.1, 0.1, 0.1])
    assert tally.report()["delivered"] == 5


def test_tally_sees_a_gap_that_straddles_the_window_start() -> None:
    tally = Tally(start=10.0, end=20.0)
    tally.count(0, 1.0, stamp=9.0, now=9.9)
    tally.count(0, 4.0, stamp=10.0, now=10.1)
    assert (tally.delivered, tally.value_gaps) == (1, 2)


def test_summarize_adds_workers_and_prices_each_update() -> None:
    case = Case("2x100", 2, 100)
    workers = [
        {"delivered": 9_000, "value_gaps": 5, "gaps": None, "latencies": [0.01] * 99 + [0.5]},
        {"delivered": 10_000, "value_gaps": 0, "gaps": None, "latencies": [0.02] * 100},
    ]  # fmt: skip
    out = summarize(case, 10.0, workers, {"coniql": 95.0})
    assert out["delivered_per_s"] == 1_900
    assert out["expected_per_s"] == 2_000
    assert out["delivered_pct"] == 95.0
    assert out["value_gaps"] == 5 and out["seq_gaps"] is None
    assert out["server_cpu_pct"] == {"coniql": 95.0, "total": 95.0}
    assert out["server_cpu_us_per_update"] == pytest.approx(500.0)  # 0.95 s / 1900
    assert out["latency_ms"] == {"p50": 20.0, "p99": 20.0}  # 1 of 200 at 500 ms


def test_summarize_sums_seq_gaps_and_the_server_processes() -> None:
    case = Case("1x100", 1, 100)
    workers = [{"delivered": 1_000, "value_gaps": 0, "gaps": 0, "latencies": []}]
    out = summarize(case, 1.0, workers, {"gateway": 1.0, "adapter": 3.0})
    assert out["seq_gaps"] == 0
    assert out["server_cpu_pct"]["total"] == 4.0
    assert out["server_cpu_us_per_update"] == pytest.approx(40.0)
    assert out["latency_ms"] == {"p50": None, "p99": None}


def test_ratios_compare_the_two_systems_of_one_run() -> None:
    coniql = {"delivered_per_s": 2_500, "server_cpu_us_per_update": 200.0,
              "screen_open_s": {"first": 1.5}}  # fmt: skip
    synoptic = {"delivered_per_s": 10_000, "server_cpu_us_per_update": 5.0,
                "screen_open_s": {"first": 0.1}}  # fmt: skip
    assert ratios(coniql, synoptic) == {
        "delivered_synoptic_over_coniql": 4.0,
        "cpu_per_update_coniql_over_synoptic": 40.0,
        "screen_open_coniql_over_synoptic": 15.0,
    }


def test_pv_names_match_the_sim_ioc() -> None:
    assert pv_names(3) == ["BENCH:CNT:00000", "BENCH:CNT:00001", "BENCH:CNT:00002"]
    assert pv_names(100_001)[-1] == "BENCH:CNT:100000"


def test_proc_cpu_and_rss_of_this_process() -> None:
    before = cpu_seconds(os.getpid())
    meter = CpuMeter({"me": os.getpid()})
    meter.start()
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    busy = meter.stop()["me"]
    assert cpu_seconds(os.getpid()) - before >= 0.25
    assert busy > 1.0  # % of a core over the interval, however loaded the machine
    assert 5 < rss_mib(os.getpid()) < 4096
    assert meter.rss()["me"] > 5
    assert meter.wait_pct["me"] >= 0
    assert runqueue_wait_seconds(os.getpid()) >= 0
