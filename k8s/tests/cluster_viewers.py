"""Many viewers of the local cluster, and the convergence check the fault tests
end with: every client holds the latest value of every channel it watches.

"Latest" is judged against the bus itself: the last-value store (``CS_LAST``) read
at a reference moment after recovery, and a direct bus subscriber (:class:`BusTap`)
that remembers what each channel carried under each ``(ep, seq)``. A client has
converged when, for each of its channels, it holds the store's value of that
moment or a newer one, and the payload is exactly what the bus carried under that
``(ep, seq)`` (no stale value, no value from a dead epoch, no corrupted payload).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nats.aio.msg import Msg

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.store import fetch_last
from synoptic_gateway.client import GatewayClient, Subscription
from synoptic_schemas import DecodeError, Subjects, decode_value, parse_channel

#: The value fields a viewer must hold exactly as the bus carried them.
FIELDS = ("v", "t", "sev", "st", "seq", "ep", "c")
SUBJECTS = Subjects()
#: Values remembered per channel by the tap (10 Hz: minutes of history).
TAP_DEPTH = 5000


async def until(
    sub: Subscription, predicate: Callable[[Subscription], bool], deadline: float
) -> bool:
    """Wait until ``predicate(sub)`` holds: checked on each of the subscription's
    frames and at least every 0.5 s (it may depend on more than the frames);
    ``False`` once ``deadline`` (monotonic) has passed."""
    while not predicate(sub):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            await sub.wait_for(predicate, timeout=min(0.5, remaining))
        except TimeoutError:
            continue
    return True


def position(value: dict[str, Any]) -> tuple[int, int]:
    """Where a value stands in its channel's history: ``(epoch, seq)``."""
    return int(value["ep"]), int(value["seq"])


class BusTap:
    """A direct bus subscriber: what each channel carried, by ``(ep, seq)``, and
    the last-value store read on demand."""

    def __init__(self, nats_url: str, uris: Sequence[str]) -> None:
        self.nats_url = nats_url
        self.subjects = {uri: SUBJECTS.val(parse_channel(uri)) for uri in uris}
        self.seen: dict[str, OrderedDict[tuple[int, int], dict[str, Any]]] = {
            uri: OrderedDict() for uri in self.subjects
        }
        self.nc: NatsClient | None = None

    async def start(self) -> BusTap:
        """Connect (through the load balancer, reconnecting forever) and subscribe."""
        self.nc = await connect(self.nats_url, name="test-bus-tap")
        for uri, subject in self.subjects.items():
            await self.nc.subscribe(subject, cb=self._recorder(uri))
        await self.nc.flush()
        return self

    def _recorder(self, uri: str) -> Callable[[Msg], Any]:
        history = self.seen[uri]

        async def record(msg: Msg) -> None:
            try:
                value = dict(decode_value(msg.data))
            except DecodeError:
                return
            history[position(value)] = value
            while len(history) > TAP_DEPTH:
                history.popitem(last=False)

        return record

    async def close(self) -> None:
        if self.nc is not None:
            await self.nc.close()

    async def store_values(self, timeout: float = 30.0) -> dict[str, dict[str, Any]]:
        """The store's last value of every channel, now (retried until the store
        holds all of them and answers, for up to ``timeout``)."""
        assert self.nc is not None
        deadline = time.monotonic() + timeout
        while True:
            try:
                snapshot = await fetch_last(self.nc, list(self.subjects.values()))
                found = {
                    uri: dict(decode_value(snapshot.messages[subject]))
                    for uri, subject in self.subjects.items()
                    if subject in snapshot.messages
                }
                if len(found) == len(self.subjects):
                    return found
            except (TimeoutError, OSError) as exc:  # a node lost: the tap reconnects
                if time.monotonic() > deadline:
                    raise AssertionError(f"store unreadable: {exc!r}") from exc
            if time.monotonic() > deadline:
                missing = sorted(set(self.subjects) - set(found))
                raise AssertionError(f"store lacks {missing}")
            await asyncio.sleep(0.2)


@dataclass
class Viewer:
    """One client of the gateway tier watching one dashboard."""

    client: GatewayClient
    dashboard: list[str]
    sub: Subscription | None = None
    since: float = field(default_factory=time.monotonic)
    last_update: dict[int, float] = field(default_factory=dict)  # by channel index
    longest_silence: float = 0.0  # longest time a channel went without an update

    @property
    def gateway(self) -> str:
        return str(self.client.hello.get("gw", ""))

    def heard(self, _: Subscription, indexes: list[int], __: object) -> None:
        """``on_update`` callback: track each channel's longest silence."""
        now = time.monotonic()
        for i in indexes:
            silence = now - self.last_update.get(i, self.since)
            self.longest_silence = max(self.longest_silence, silence)
            self.last_update[i] = now

    def lag(
        self, reference: dict[str, dict[str, Any]], tap: BusTap
    ) -> tuple[str, str] | None:
        """``None`` when this viewer holds the latest value of every channel;
        else the first channel that lags and why."""
        sub = self.sub
        if sub is None or not sub.channels:
            return ("*", "no snapshot")
        for uri, held in zip(sub.channels, sub.values, strict=True):
            ref = reference[uri]
            if held is None:
                return (uri, "no value")
            at = position(held)
            if at < position(ref):
                return (uri, f"holds {at}, store has {position(ref)}")
            carried = ref if at == position(ref) else tap.seen[uri].get(at)
            if carried is None:
                return (uri, f"holds {at}, never seen on the bus")
            if any(held.get(k) != carried.get(k) for k in FIELDS):
                return (uri, f"holds {held}, the bus carried {carried}")
        return None


class Viewers:
    """``count`` clients through the load balancer, client ``i`` watching
    ``dashboards[i % len(dashboards)]`` (the gateways group them per dashboard);
    ``options`` go to each :class:`GatewayClient` (e.g. ``ping_interval``)."""

    def __init__(
        self,
        url: str,
        dashboards: Sequence[Sequence[str]],
        count: int,
        **options: Any,
    ) -> None:
        self.url = url
        options.setdefault("backoff_base", 0.05)
        self.viewers = [
            Viewer(
                GatewayClient(url, **options),
                list(dashboards[i % len(dashboards)]),
            )
            for i in range(count)
        ]

    async def __aenter__(self) -> Viewers:
        await asyncio.gather(*(self._open(v) for v in self.viewers))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(v.client.close() for v in self.viewers))

    @staticmethod
    async def _open(viewer: Viewer) -> None:
        await viewer.client.connect()
        viewer.sub = await viewer.client.subscribe(
            viewer.dashboard, on_update=viewer.heard
        )

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.viewers)

    def by_gateway(self) -> Counter[str]:
        """How many viewers each gateway serves now."""
        return Counter(v.gateway for v in self.viewers)

    def on(self, gateway: str) -> list[Viewer]:
        return [v for v in self.viewers if v.gateway == gateway]

    def quiet_since(self) -> None:
        """Start measuring silences afresh (before a fault; a channel's silence
        counts from here until its first update, then between updates)."""
        now = time.monotonic()
        for viewer in self.viewers:
            viewer.since, viewer.longest_silence = now, 0.0
            viewer.last_update.clear()

    async def wait_all(
        self,
        predicate: Callable[[Subscription], bool],
        timeout: float,
        what: str,
        viewers: Sequence[Viewer] | None = None,
        since: float | None = None,
    ) -> float:
        """Wait until ``predicate`` holds for every viewer's subscription (each
        checked on its own frames and every 0.5 s, one shared deadline
        ``timeout`` after ``since``, a ``time.monotonic()`` that defaults to
        now); returns the seconds from ``since`` until the last viewer got
        there, or fails naming the viewers that did not."""
        started = time.monotonic() if since is None else since
        deadline = started + timeout
        for viewer in viewers if viewers is not None else self.viewers:
            assert viewer.sub is not None
            if not await until(viewer.sub, predicate, deadline):
                late = [
                    v.gateway
                    for v in (viewers or self.viewers)
                    if v.sub is None or not predicate(v.sub)
                ]
                raise AssertionError(
                    f"{len(late)} viewers never saw {what} in {timeout} s "
                    f"(on gateways {Counter(late)})"
                )
        return time.monotonic() - started

    async def converge(self, tap: BusTap, timeout: float = 20.0) -> float:
        """Read the store now, then wait until every viewer holds the latest value
        of every channel (:meth:`Viewer.lag`); returns the seconds it took."""
        reference = await tap.store_values()
        started = time.monotonic()
        deadline = started + timeout
        for viewer in self.viewers:
            assert viewer.sub is not None
            converged = await until(
                viewer.sub, lambda _, v=viewer: v.lag(reference, tap) is None, deadline
            )
            if not converged:
                lagging = [
                    (v.gateway, lag)
                    for v in self.viewers
                    if (lag := v.lag(reference, tap)) is not None
                ]
                raise AssertionError(
                    f"{len(lagging)} of {len(self.viewers)} viewers do not hold the "
                    f"latest values {timeout} s after recovery: {lagging[:5]}"
                )
        return time.monotonic() - started
