"""The convergence check of the fault tests (``cluster_viewers``) tells a viewer
holding the latest values from one that lags, holds a dead epoch's value, or
holds a payload the bus never carried (no servers: values set by hand)."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_viewers import BusTap, Viewer, position

from synoptic_gateway.client import GatewayClient, Subscription

URI = "ca://local:cnt:00000"
EP = 1_700_000_000_000


def value(seq: int, ep: int = EP, v: Any = None, c: bool = True) -> dict[str, Any]:
    return {"ver": 1, "v": seq if v is None else v, "t": seq * 1000, "sev": 0,
            "st": "NO_ALARM", "seq": seq, "ep": ep, "c": c}  # fmt: skip


def viewer_holding(held: dict[str, Any] | None) -> Viewer:
    client = GatewayClient("ws://127.0.0.1:9/ws")
    viewer = Viewer(client, [URI])
    viewer.sub = Subscription(client, [URI], None)
    viewer.sub.channels, viewer.sub.values = [URI], [held]
    return viewer


@pytest.fixture
def tap() -> BusTap:
    """A tap (never connected) that saw seq 10 … 12 of the current epoch."""
    bus = BusTap("nats://127.0.0.1:9", [URI])
    for seq in (10, 11, 12):
        bus.seen[URI][position(value(seq))] = value(seq)
    return bus


STORE = {URI: value(10)}


@pytest.mark.parametrize("held", [value(10), value(12)])
def test_the_store_s_value_or_a_newer_one_seen_on_the_bus_is_latest(
    tap: BusTap, held: dict[str, Any]
) -> None:
    assert viewer_holding(held).lag(STORE, tap) is None


@pytest.mark.parametrize(
    ("held", "why"),
    [
        (None, "no value"),
        (value(9), "store has"),
        (value(50, ep=EP - 1), "store has"),  # a dead epoch, however far it got
        (value(10, v=-1), "the bus carried"),
        (value(12, c=False), "the bus carried"),
        (value(13), "never seen on the bus"),
    ],
)
def test_a_lagging_or_foreign_value_is_not(
    tap: BusTap, held: dict[str, Any] | None, why: str
) -> None:
    lag = viewer_holding(held).lag(STORE, tap)
    assert lag is not None and lag[0] == URI and why in lag[1]
