"""``make cluster``, the local rehearsal of the production layout, comes up, serves
and survives the loss of any one part.

The rehearsal runs 3 NATS nodes, nginx, 3 gateways, the simulated IOC and Tango
device server and both adapters. Each fault test watches it as many viewers do
(:data:`VIEWERS` clients spread over the gateways through nginx, on two
dashboards mixing EPICS and Tango channels), asserts the fault's own contract,
and ends with the convergence check: every client holds the latest value of
every channel (:mod:`cluster_viewers`).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import nats
import pytest
from cluster_viewers import BusTap, Viewers, position
from deploy_helpers import REPO

from synoptic_gateway.client import Subscription

sys.path.insert(0, str(REPO / "deploy"))
from local_cluster import LocalCluster, NatsNode, Plan

# Starting 3 NATS nodes, nginx, the simulators, two adapters and 3 gateways on 2
# shared cores takes most of a minute when the machine is busy.
pytestmark = pytest.mark.timeout(300)

#: Clients per test, spread over the gateways by nginx.
VIEWERS = 24
EPICS = [f"ca://LOCAL:CNT:{i:05d}" for i in range(4)]
TANGO_ATTRIBUTES = ("long", "double", "ulong")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    plan = Plan(var=tmp_path_factory.mktemp("cluster"), records=20, tango=True)
    local = LocalCluster(plan).start()
    try:
        yield local
    finally:
        local.stop()


def tango(cluster: LocalCluster, attribute: str) -> str:
    return f"tango://127.0.0.1:{cluster.tango_port}/sim/test/1/{attribute}"


@pytest.fixture
def dashboards(cluster: LocalCluster) -> list[list[str]]:
    """Two overlapping screens, each with EPICS and Tango channels."""
    long_, double, ulong = (tango(cluster, a) for a in TANGO_ATTRIBUTES)
    return [[*EPICS[:3], long_, double], [*EPICS[1:], long_, ulong]]


@pytest.fixture
async def tap(
    cluster: LocalCluster, dashboards: list[list[str]]
) -> AsyncIterator[BusTap]:
    uris = sorted({uri for dashboard in dashboards for uri in dashboard})
    bus = await BusTap(cluster.nats_url("admin"), uris).start()
    try:
        yield bus
    finally:
        await bus.close()


@pytest.fixture
async def viewers(
    cluster: LocalCluster, dashboards: list[list[str]]
) -> AsyncIterator[Viewers]:
    """:data:`VIEWERS` clients, each with live values of its whole dashboard."""
    async with Viewers(cluster.ws_url, dashboards, VIEWERS) as group:
        await group.wait_all(every(lambda v: True), 60, "values")  # on demand
        yield group


def every(
    test: Callable[[dict[str, Any]], bool], scheme: str = ""
) -> Callable[[Subscription], bool]:
    """A predicate: ``test`` holds for the value of every channel (of ``scheme``)."""

    def predicate(sub: Subscription) -> bool:
        return all(
            value is not None and test(value)
            for uri, value in zip(sub.channels, sub.values, strict=True)
            if uri.startswith(scheme)
        )

    return predicate


def disconnected(value: dict[str, Any]) -> bool:
    return value["c"] is False and value["sev"] == 3


def beyond(
    reference: dict[str, dict[str, Any]],
) -> Callable[[Subscription], bool]:
    """A predicate: every channel has moved past its value in ``reference``
    (channel -> value), i.e. values flow."""

    def predicate(sub: Subscription) -> bool:
        return all(
            value is not None and position(value) > position(reference[uri])
            for uri, value in zip(sub.channels, sub.values, strict=True)
        )

    return predicate


def report(fault: str, **seconds: float | int) -> None:
    """Print what a fault test measured (``pytest -s`` shows it; the numbers in
    docs/operations.md come from here)."""
    print(f"\n{fault}: " + json.dumps({k: round(v, 2) for k, v in seconds.items()}))


def wait_until(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


async def until_true(predicate: Callable[[], bool], timeout: float) -> None:
    """:func:`wait_until` without blocking the event loop."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.1)


def readyz_through_lb(cluster: LocalCluster) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", cluster.plan.http_port, timeout=10)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        body = json.loads(response.read() or b"{}")
        return response.status, body.get("gw", "")
    finally:
        conn.close()


def node_serving(cluster: LocalCluster, client_name: str) -> NatsNode | None:
    """The live NATS node a named client is connected to (from its /connz), or
    ``None`` while it is connected to none."""
    for node in cluster.nodes:
        conn = http.client.HTTPConnection("127.0.0.1", node.monitor_port, timeout=5)
        try:
            conn.request("GET", "/connz?limit=1024")
            names = [
                c.get("name", "")
                for c in json.loads(conn.getresponse().read())["connections"]
            ]
        except OSError:  # a dead node
            continue
        finally:
            conn.close()
        if any(client_name in name for name in names):
            return node
    return None


async def test_many_viewers_hold_the_latest_values(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """No fault: nginx spreads the viewers over every gateway, values flow, and
    every viewer holds the latest value of every channel."""
    assert set(viewers.by_gateway()) == {g.name for g in cluster.gateways}
    report("no fault", converged=await viewers.converge(tap))
    reference = await tap.store_values()
    await viewers.wait_all(beyond(reference), 10, "values move on")


async def test_last_values_are_replicated_on_three_nodes(cluster: LocalCluster) -> None:
    nc = await nats.connect(cluster.nats_url("admin"))
    try:
        info = await nc.jetstream().stream_info("CS_LAST")
    finally:
        await nc.close()
    assert info.config.num_replicas == 3
    assert info.config.storage == "file"
    assert info.cluster is not None and info.cluster.leader
    peers = {info.cluster.leader, *(r.name for r in info.cluster.replicas or [])}
    assert peers == {node.name for node in cluster.nodes}


async def test_every_gateway_serves_the_screens_bus_init_seeded(
    cluster: LocalCluster,
) -> None:
    nc = await nats.connect(cluster.nats_url("admin"))
    try:
        info = await nc.jetstream().stream_info("KV_screens")
    finally:
        await nc.close()
    assert info.config.num_replicas == 3 and info.config.storage == "file"
    seeded = sorted(p.stem for p in (REPO / "screens").glob("*.json"))
    for gateway in cluster.gateways:  # production permissions, --no-seed-screens
        conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=10)
        try:
            conn.request("GET", "/api/screens")
            response = conn.getresponse()
            body = json.loads(response.read())
        finally:
            conn.close()
        assert response.status == 200, body
        assert [s["name"] for s in body] == seeded


def test_a_hung_gateway_leaves_the_rotation(cluster: LocalCluster) -> None:
    """SIGSTOP a gateway: new requests through nginx all go to the others; after
    SIGCONT it serves again."""
    hung = cluster.gateways[0]
    assert hung.process is not None
    stopped = time.monotonic()
    hung.process.signal(signal.SIGSTOP)
    try:
        wait_until(lambda: hung.name in cluster.down, timeout=10)
        left = time.monotonic() - stopped
        answers = [readyz_through_lb(cluster) for _ in range(8)]
        assert all(status == 200 for status, _ in answers), answers
        assert {gw for _, gw in answers} == {g.name for g in cluster.gateways[1:]}
    finally:
        hung.process.signal(signal.SIGCONT)
    resumed = time.monotonic()
    wait_until(lambda: hung.name not in cluster.down, timeout=10)
    back = time.monotonic() - resumed
    served = {readyz_through_lb(cluster)[1] for _ in range(9)}
    assert served == {g.name for g in cluster.gateways}
    report("gateway hung, no clients", left_rotation=left, back_in=back)


def test_nginx_alone_routes_requests_around_a_hung_gateway(
    cluster: LocalCluster,
) -> None:
    """nginx's passive checks without the health router (no readiness probe):
    a request that reaches a SIGSTOPped gateway times out after
    ``proxy_read_timeout`` (3 s) and is answered by the next gateway; then
    ``max_fails=1 fail_timeout=10s`` keeps the hung one out: one request stalls,
    not one per round of the rotation."""
    hung = cluster.gateways[-1]
    assert hung.process is not None
    cluster.pause_routing()
    hung.process.signal(signal.SIGSTOP)
    try:
        timed = []
        for _ in range(2 * len(cluster.gateways)):
            started = time.monotonic()
            timed.append((*readyz_through_lb(cluster), time.monotonic() - started))
    finally:
        hung.process.signal(signal.SIGCONT)
        cluster.resume_routing()
    assert all(status == 200 and gw != hung.name for status, gw, _ in timed), timed
    stalls = [round(took, 2) for *_, took in timed if took >= 2.9]  # waited on it
    assert len(stalls) <= 1 and all(took <= 6.0 for took in stalls), timed
    report("nginx passive", stalled_requests=len(stalls), stall=max(stalls, default=0))


async def test_a_hung_gateway_s_viewers_move_to_a_live_one(
    cluster: LocalCluster, dashboards: list[list[str]], tap: BusTap
) -> None:
    """SIGSTOP the gateway under connected viewers: nothing closes their sockets,
    their pings (every 1 s, 2 s timeout here) find it silent and they reconnect
    through nginx to live gateways within a few seconds; viewers connecting
    during the hang never land on it; everyone converges."""
    options = {"ping_interval": 1.0, "ping_timeout": 2.0}
    async with Viewers(cluster.ws_url, dashboards, VIEWERS, **options) as viewers:
        await viewers.wait_all(every(lambda v: True), 60, "values")
        (hung,) = [g for g in cluster.gateways if g.name == viewers.viewers[0].gateway]
        assert hung.process is not None
        stuck = viewers.on(hung.name)
        before = {id(v.sub): v.sub.snapshots for v in stuck if v.sub}
        stopped = time.monotonic()
        hung.process.signal(signal.SIGSTOP)
        try:
            moved = await viewers.wait_all(
                lambda s: s.snapshots > before[id(s)],
                20,
                "a fresh snapshot from a live gateway",
                viewers=stuck,
                since=stopped,
            )
            assert all(v.gateway not in ("", hung.name) for v in stuck)
            assert all(v.client.hung_closes >= 1 for v in stuck)
            assert moved <= 8.0, f"the last viewer moved after {moved:.1f} s"
            converged = await viewers.converge(tap)
            await until_true(lambda: hung.name in cluster.down, timeout=10)
            async with Viewers(cluster.ws_url, dashboards, 6) as newcomers:
                assert hung.name not in newcomers.by_gateway()
        finally:
            hung.process.signal(signal.SIGCONT)
        report("gateway hung", viewers=len(stuck), moved=moved, converged=converged)
    wait_until(lambda: hung.name not in cluster.down, timeout=10)


async def test_admin_url_is_not_the_gateways(cluster: LocalCluster) -> None:
    """Each role has its own password: the gateway's cannot act as admin."""
    nc = await nats.connect(cluster.nats_url("gateway"))
    try:
        with pytest.raises(nats.errors.TimeoutError):  # denied: no answer
            await nc.jetstream(timeout=2).delete_stream("CS_LAST")
    finally:
        await nc.close()
    admin = await nats.connect(cluster.nats_url("admin"))
    try:
        assert (await admin.jetstream().stream_info("CS_LAST")).config.name
    finally:
        await admin.close()


async def test_a_nats_node_killed_loses_no_viewer(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """kill -9 the NATS node under a gateway: every viewer keeps receiving (no
    silence longer than a few seconds; gateways reconnect through the load
    balancer and take fresh snapshots) and converges; the node rejoins and
    catches up as a CS_LAST replica."""
    victim = node_serving(cluster, "local-epics")  # the adapter's: all viewers
    assert victim is not None and victim.process is not None
    on_victim = [g.name for g in cluster.gateways
                 if node_serving(cluster, g.name) is victim]  # fmt: skip
    viewers.quiet_since()
    victim.process.kill()

    def moved() -> bool:  # the adapter and the gateways are on other nodes
        return all(
            node_serving(cluster, name) not in (None, victim)
            for name in ("local-epics", *on_victim)
        )

    started = time.monotonic()
    while not await asyncio.to_thread(moved):
        assert time.monotonic() - started < 30, "clients stayed off the cluster"
        await asyncio.sleep(0.1)
    reconnected = time.monotonic() - started
    reference = await tap.store_values()  # values published since: flowing again
    await viewers.wait_all(beyond(reference), 20, "values after the node died")
    converged = await viewers.converge(tap)
    silence = max(v.longest_silence for v in viewers)
    report("nats node killed", gateways_on_it=len(on_victim),
           clients_reconnected=reconnected, longest_silence=silence,
           converged=converged)  # fmt: skip
    assert silence <= 10.0, f"a viewer heard nothing for {silence:.1f} s"
    cluster.start_nats(victim)  # same ports and store
    wait_until(lambda: victim.name not in cluster.down, timeout=30)
    nc = await nats.connect(cluster.nats_url("admin"))
    try:
        deadline = time.monotonic() + 60
        while True:  # the restarted node catches up as a replica
            assert time.monotonic() < deadline, "CS_LAST did not regain 3 replicas"
            try:
                info = await nc.jetstream(timeout=2).stream_info("CS_LAST")
            except nats.errors.TimeoutError:  # JetStream API busy while it rejoins
                continue
            assert info.cluster is not None
            replicas = {r.name: r for r in (info.cluster.replicas or [])}
            peers = {info.cluster.leader, *replicas}
            if peers == {n.name for n in cluster.nodes} and all(
                r.current for r in replicas.values()
            ):
                break
            await asyncio.sleep(0.5)
    finally:
        await nc.close()


async def test_a_hung_nats_node_is_left_by_its_clients(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """SIGSTOP the NATS node serving the EPICS adapter (hung, not dead: its TCP
    connections stay open): within 5 s every viewer is told that the EPICS
    channels have no live source (the heartbeats stop); the clients' NATS pings
    find the node silent and they reconnect through nginx to the live nodes, so
    within 30 s values flow again, the marks clear and every viewer converges.
    After SIGCONT the node serves again."""
    victim = node_serving(cluster, "local-epics")
    assert victim is not None and victim.process is not None
    on_victim = [g.name for g in cluster.gateways
                 if node_serving(cluster, g.name) is victim]  # fmt: skip
    before = await tap.store_values()
    stopped = time.monotonic()
    victim.process.signal(signal.SIGSTOP)
    try:
        told = await viewers.wait_all(
            lambda s: all(
                i in s.stale
                for i, uri in enumerate(s.channels)
                if uri.startswith("ca://")
            ),
            15,
            "EPICS channels without source",
            since=stopped,
        )
        assert told <= 5.0, f"the last viewer was told after {told:.1f} s"
        back = await viewers.wait_all(
            lambda s: not s.stale and beyond(before)(s),
            30,
            "live values",
            since=stopped,
        )
        converged = await viewers.converge(tap)
    finally:
        victim.process.signal(signal.SIGCONT)
    report("nats node hung", gateways_on_it=len(on_victim), told=told, back=back,
           converged=converged)  # fmt: skip
    await until_true(lambda: victim.name not in cluster.down, timeout=30)


async def test_a_killed_gateway_s_viewers_reconnect_elsewhere(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """kill -9 a gateway: each of its viewers is on another gateway with a fresh
    snapshot within 2 s (through the load balancer), and every viewer converges."""
    (gateway,) = [g for g in cluster.gateways if g.name == viewers.viewers[0].gateway]
    assert gateway.process is not None
    orphans = viewers.on(gateway.name)
    before = {id(v.sub): v.sub.snapshots for v in orphans if v.sub}
    killed = time.monotonic()
    gateway.process.kill()
    reconnected = await viewers.wait_all(
        lambda s: s.snapshots > before[id(s)],
        10,
        "a fresh snapshot",
        viewers=orphans,
        since=killed,
    )
    assert reconnected <= 2.0, f"the last viewer reconnected after {reconnected:.2f} s"
    assert all(v.gateway not in ("", gateway.name) for v in orphans)
    converged = await viewers.converge(tap)
    report("gateway killed", orphans=len(orphans), reconnected=reconnected,
           converged=converged)  # fmt: skip
    cluster.start_gateway(gateway)
    wait_until(lambda: gateway.name not in cluster.down, timeout=30)


async def test_an_ioc_restart_shows_disconnected_then_recovers(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """Kill the IOC: within 5 s every viewer sees its channels disconnected
    (severity 3), never silently stale; restart it: connected live values again,
    unprompted, and every viewer converges."""
    killed = time.monotonic()
    cluster.sims["ioc"].kill()
    told = await viewers.wait_all(
        every(disconnected, "ca://"), 15, "disconnected", since=killed
    )
    assert told <= 5.0, f"the last viewer saw disconnected after {told:.1f} s"
    await viewers.converge(tap)  # the disconnected values are the latest
    started = time.monotonic()
    await asyncio.to_thread(cluster.start_ioc)
    await viewers.wait_all(every(lambda v: v["c"] and v["sev"] == 0), 30, "live")
    live = time.monotonic() - started
    report(
        "ioc restart",
        disconnected=told,
        live=live,
        converged=await viewers.converge(tap),
    )


async def test_a_tango_device_server_restart_shows_disconnected_then_recovers(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap
) -> None:
    """Kill the Tango device server: every viewer sees its attributes
    disconnected within 5 s while the EPICS channels go on; restart it on the
    same port: live values again without operator action, and every viewer
    converges."""
    killed = time.monotonic()
    cluster.sims["tango"].kill()
    told = await viewers.wait_all(
        every(disconnected, "tango://"), 15, "disconnected", since=killed
    )
    assert told <= 5.0, f"the last viewer saw disconnected after {told:.1f} s"
    await viewers.converge(tap)
    started = time.monotonic()
    await asyncio.to_thread(cluster.start_tango)
    await viewers.wait_all(every(lambda v: v["c"] is True), 60, "connected values")
    live = time.monotonic() - started
    report(
        "tango restart",
        disconnected=told,
        live=live,
        converged=await viewers.converge(tap),
    )


def stale_exactly(scheme: str) -> Callable[[Subscription], bool]:
    """A predicate: the channels of ``scheme``, and only they, are marked as
    having no live source."""

    def predicate(sub: Subscription) -> bool:
        marked = {sub.channels[i] for i in sub.stale}
        return marked == {uri for uri in sub.channels if uri.startswith(scheme)}

    return predicate


@pytest.mark.parametrize(
    ("proto", "scheme"), [("epics", "ca://"), ("tango", "tango://")]
)
async def test_a_killed_adapter_shows_no_live_source_then_recovers(
    cluster: LocalCluster, viewers: Viewers, tap: BusTap, proto: str, scheme: str
) -> None:
    """kill -9 an adapter: within 5 s every viewer is told that its channels of
    that adapter, and only they, have no live source (the gateways watch
    heartbeats), and all still hold the latest values. Start it again: the want
    leases bring every channel back under a new epoch, unprompted, the marks
    clear, and every viewer converges."""
    old = await tap.store_values()
    killed = time.monotonic()
    cluster.adapters[proto].kill()
    told = await viewers.wait_all(
        stale_exactly(scheme), 15, f"{proto} channels without source", since=killed
    )
    assert told <= 5.0, f"the last viewer was told after {told:.1f} s"
    await viewers.converge(tap)
    started = time.monotonic()
    await asyncio.to_thread(cluster.start_adapter, proto)
    await viewers.wait_all(
        lambda s: (
            not s.stale
            and all(
                v["c"] and v["ep"] != old[uri]["ep"]
                for uri, v in zip(s.channels, s.values, strict=True)
                if uri.startswith(scheme)
            )
        ),
        30,
        "a new epoch, live",
    )
    back = time.monotonic() - started
    report(f"{proto} adapter killed", told=told, new_epoch=back,
           converged=await viewers.converge(tap))  # fmt: skip
