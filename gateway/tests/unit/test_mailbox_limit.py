"""The mailbox's hard limit: a socket that lets frames pile up is closed as slow,
but one frame above the bound by itself (an alarm page's whole list) is sent, one
at a time."""

from __future__ import annotations

from types import SimpleNamespace

from synoptic_gateway.mailbox import HARD_LIMIT_FACTOR, Mailbox
from synoptic_gateway.settings import Settings


class Box(Mailbox):
    """A mailbox whose closing is only recorded (no socket behind it)."""

    closed = False

    def close_slow(self) -> None:
        self.closed = True


def box() -> Box:
    settings = Settings(mailbox_bytes=1000)
    hub = SimpleNamespace(settings=settings, stats=SimpleNamespace())
    return Box(SimpleNamespace(scope={}), hub, json_mode=True)  # type: ignore[arg-type]


async def test_one_large_frame_is_queued_but_a_pile_closes_the_socket() -> None:
    limit = HARD_LIMIT_FACTOR * 1000
    alone = box()
    alone.push_control("x" * (limit * 3))  # the whole list, in one frame
    assert not alone.closed
    alone.push_control("y" * 500)  # what follows it, within the limit
    assert not alone.closed
    for _ in range(limit // 500 + 1):  # the page reads nothing: the rest piles up
        alone.push_control("z" * 500)
    assert alone.closed
    twice = box()
    twice.push_control("x" * (limit * 3))
    twice.push_control("x" * (limit * 3))  # a second whole list while one waits
    assert twice.closed
    piled = box()
    for _ in range(limit // 900 + 1):  # frames under the bound each, piling up
        piled.push_control("s" * 900)
    assert piled.closed
