"""The history service's CPU budget: work paced to a share of one core on
average, a small burst at once, and no waiting where there is no budget; a
user's click (a screen at a moment, a step) never waits for it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from synoptic_gateway.history.budget import CpuBudget
from synoptic_gateway.history.service import HistoryService
from synoptic_gateway.settings import Settings


def _burn(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def test_work_keeps_to_its_share_of_a_core() -> None:
    budget = CpuBudget(0.25, burst=0.01)
    cpu0, wall0 = time.thread_time(), time.monotonic()
    for _ in range(20):  # 20 requests of 10 ms of CPU each
        await budget.pace()
        _burn(0.01)
    await budget.pace()
    cpu, wall = time.thread_time() - cpu0, time.monotonic() - wall0
    # 0.2 s of CPU at a quarter of a core: at least 0.76 s of wall time
    assert wall >= (cpu - 0.01) / 0.25 - 0.01


async def test_a_request_waits_for_what_those_before_spent() -> None:
    clock = {"cpu": 0.0, "wall": 0.0}

    async def sleep(seconds: float) -> None:
        clock["wall"] += seconds

    budget = CpuBudget(
        0.5, burst=0.1, cpu=lambda: clock["cpu"], clock=lambda: clock["wall"],
        sleep=sleep,
    )  # fmt: skip
    await budget.pace()
    clock["cpu"] += 0.3  # a request of 300 ms of CPU at once
    clock["wall"] += 0.3
    await budget.pace()  # owes 0.3 - 0.1 - 0.15 = 0.05 s of CPU: 0.1 s at half a core
    assert abs(budget.waited - 0.1) < 1e-9
    assert abs(clock["wall"] - 0.4) < 1e-9


async def test_a_burst_goes_at_once() -> None:
    budget = CpuBudget(0.25, burst=0.05)
    wall0 = time.monotonic()
    await budget.pace()
    _burn(0.02)
    await budget.pace()  # 20 ms of the 50 ms burst spent: no wait
    assert budget.waited == 0
    assert time.monotonic() - wall0 < 5


async def test_no_budget_never_waits() -> None:
    budget = CpuBudget(0)
    for _ in range(10):
        await budget.pace()
        _burn(0.01)
    assert budget.waited == 0


def test_the_history_process_has_the_budget_and_the_thread_none() -> None:
    bus: Any = None
    in_process = HistoryService(Settings(hist_process=True, hist_cpu=0.5), bus)
    on_thread = HistoryService(Settings(hist_process=False, hist_cpu=0.5), bus)
    assert in_process.budget.share == 0.5
    assert on_thread.budget.share == 0


async def test_a_click_waits_neither_for_the_budget_nor_behind_paced_work() -> None:
    """A screen at a moment (``at``) or a step is one click of a user's: it does not
    wait for the budget, and a trend or a playback stretch waiting for the budget
    holds no slot, so the click is answered even with one slot."""
    bus: Any = None
    service = HistoryService(
        Settings(hist_process=True, hist_cpu=0.5, hist_concurrency=1), bus
    )
    cpu, wall = [0.0], [0.0]
    waiting, refilled = asyncio.Event(), asyncio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await refilled.wait()
        wall[0] += seconds

    service.budget = CpuBudget(
        0.5, 0.1, cpu=lambda: cpu[0], clock=lambda: wall[0], sleep=sleep
    )
    await service.budget.pace()
    cpu[0] = 1.0  # 0.9 s of CPU owed: 1.8 s at half a core

    async def work(name: str) -> str:
        return name

    trend = asyncio.create_task(service._in_slot({"id": 1}, work("trend")))
    await asyncio.wait_for(waiting.wait(), 5)  # the trend waits for the budget
    click = service._in_slot({"id": 2}, work("at"), paced=False)
    assert await asyncio.wait_for(click, 5) == "at"
    assert not trend.done()
    refilled.set()
    assert await asyncio.wait_for(trend, 5) == "trend"
    assert service.budget.waited == 1.8
