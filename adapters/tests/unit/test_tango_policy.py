"""The device-time policy of the Tango adapter: backoff and the read budget."""

from __future__ import annotations

import pytest

from synoptic_adapters.tango.policy import (
    WINDOW,
    DeviceTime,
    backoff_wait,
    slow_status,
    timeout_status,
)
from synoptic_adapters.tango.settings import TangoSettings, TangoSettingsError


def test_backoff_doubles_from_twice_the_budget_spacing_up_to_the_maximum() -> None:
    # a 10 s read at a 10 % budget: 100 s would keep its share at 10 %
    waits = [backoff_wait(10.0, n, 0.1, 300.0) for n in (1, 2, 3)]
    assert waits == [200.0, 300.0, 300.0]
    assert [backoff_wait(2.0, n, 0.1, 300.0) for n in (1, 2, 3, 4)] == [
        40.0, 80.0, 160.0, 300.0,
    ]  # fmt: skip
    assert backoff_wait(2.0, 0, 0.1, 300.0) == 40.0  # strikes count from 1


def test_statuses_say_what_happened_and_when_the_next_try_is() -> None:
    assert timeout_status(3.0, 40) == "read timed out after 3.0 s; next try in 40 s"
    assert timeout_status(3.0, 190.4, busy=10.02) == (
        "read timed out after 3.0 s (the device was busy 10.0 s with it); "
        "next try in 190 s"
    )
    assert timeout_status(3.0, 37.6, busy_now=True) == (
        "read timed out after 3.0 s (the device is still busy with it: pings time "
        "out); next try in 38 s"
    )
    assert slow_status(2.04, 1.0, 40) == (
        "read took 2.0 s (slow: over 1 s); next try in 40 s"
    )


def test_device_time_counts_overlaps_once_and_forgets_after_the_window() -> None:
    spent = DeviceTime(0.1, now=0.0)
    spent.spent(10.0, 13.0)
    spent.spent(12.0, 20.0)  # overlaps the first: 7 more seconds, not 8
    assert spent.total == pytest.approx(10.0)
    assert spent.fraction(20.0) == pytest.approx(10.0 / WINDOW)
    assert spent.fraction(10.0 + WINDOW + 5.0) == pytest.approx(5.0 / WINDOW)
    assert spent.fraction(20.0 + WINDOW) == 0.0


def test_the_bucket_holds_expensive_reads_until_the_device_time_is_paid_back() -> None:
    budget = DeviceTime(0.1, now=0.0)  # capacity 6 s at 10 % over 60 s
    assert budget.allows(0.0) and budget.wait(0.0) == 0.0
    budget.spent(0.0, 10.0)  # full (capped), then 10 s drawn: 4 s in debt
    assert not budget.allows(10.0)
    assert budget.wait(10.0) == pytest.approx(40.0)  # paid back at 0.1 s per s
    assert budget.allows(50.0)
    budget.spent(50.0, 50.01)
    assert budget.allows(50.5)  # cheap reads barely draw


def test_device_time_keeps_only_the_window() -> None:
    spent = DeviceTime(0.1, now=0.0)
    for second in range(10_000):  # never asked for the fraction
        spent.spent(float(second), second + 0.01)
    assert len(spent._spans) <= WINDOW + 1
    assert spent.total == pytest.approx(100.0)


def test_the_budget_and_the_backoff_maximum_default_to_10_percent_and_5_minutes() -> (
    None
):
    defaults = TangoSettings.from_section({})
    assert defaults.busy_fraction == 0.1 and defaults.backoff_max == 300.0
    assert defaults.slow_after == 1.0 and defaults.read_timeout == 3.0
    configured = TangoSettings.from_section({"busy_fraction": 0.05, "backoff_max": 60})
    assert configured.busy_fraction == 0.05 and configured.backoff_max == 60
    # a 10 s timed-out read at the configured 5 %: 400 s, capped at 60 s
    assert backoff_wait(10.0, 1, configured.busy_fraction, configured.backoff_max) == 60
    for bad in ({"busy_fraction": 0}, {"busy_fraction": 1.5}, {"backoff_max": 0}):
        with pytest.raises(TangoSettingsError) as error:
            TangoSettings.from_section(bad)
        assert error.value.field == f"tango.{next(iter(bad))}"
