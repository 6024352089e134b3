"""``make cluster``, the local rehearsal of the production layout, comes up and
serves: live values through nginx and the gateways, the last-value stream R3 on
the 3-node NATS cluster under the production permissions, and the health router
takes a hung gateway out of the load balancer and back."""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import sys
import time
from collections.abc import Iterator

import nats
import pytest
from deploy_helpers import REPO

from synoptic_gateway.client import GatewayClient, Subscription

sys.path.insert(0, str(REPO / "deploy"))
from local_cluster import LocalCluster, NatsNode, Plan

# Starting 3 NATS nodes, nginx, an IOC, an adapter and 2 gateways on 2 shared
# cores takes most of a minute when the machine is busy.
pytestmark = pytest.mark.timeout(300)

CHANNELS = [f"ca://LOCAL:CNT:{i:05d}" for i in range(3)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    plan = Plan(var=tmp_path_factory.mktemp("cluster"), gateways=2, records=20)
    local = LocalCluster(plan).start()
    try:
        yield local
    finally:
        local.stop()


async def test_live_values_through_the_load_balancer(cluster: LocalCluster) -> None:
    async with GatewayClient(cluster.ws_url) as client:
        sub = await client.subscribe(CHANNELS)

        def all_known(s: Subscription) -> bool:
            return all(v is not None for v in s.values)

        await sub.wait_for(all_known, timeout=30)  # monitored on demand
        first = [v["v"] for v in sub.values]
        await sub.wait_for(
            lambda s: all(v["v"] > f for v, f in zip(s.values, first, strict=True)),
            timeout=10,
        )
        assert client.hello["gw"] in {g.name for g in cluster.gateways}


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


def readyz_through_lb(cluster: LocalCluster) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", cluster.plan.http_port, timeout=10)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        body = json.loads(response.read() or b"{}")
        return response.status, body.get("gw", "")
    finally:
        conn.close()


def wait_until(predicate, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


def test_a_hung_gateway_leaves_the_rotation(cluster: LocalCluster) -> None:
    hung = cluster.gateways[0]
    assert hung.process is not None
    hung.process.signal(signal.SIGSTOP)
    try:
        wait_until(lambda: hung.name in cluster.down, timeout=10)
        answers = [readyz_through_lb(cluster) for _ in range(6)]
        assert all(status == 200 for status, _ in answers), answers
        assert {gw for _, gw in answers} == {cluster.gateways[1].name}
    finally:
        hung.process.signal(signal.SIGCONT)
    wait_until(lambda: hung.name not in cluster.down, timeout=10)
    served = {readyz_through_lb(cluster)[1] for _ in range(6)}
    assert served == {g.name for g in cluster.gateways}


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


def node_serving(cluster: LocalCluster, client_name: str) -> NatsNode:
    """The NATS node a named client is connected to (from its /connz)."""
    for node in cluster.nodes:
        conn = http.client.HTTPConnection("127.0.0.1", node.monitor_port, timeout=5)
        try:
            conn.request("GET", "/connz?limit=1024")
            names = [
                c.get("name", "")
                for c in json.loads(conn.getresponse().read())["connections"]
            ]
        finally:
            conn.close()
        if any(client_name in name for name in names):
            return node
    raise AssertionError(f"{client_name} is connected to no node")


async def test_a_nats_node_killed_loses_no_viewer(cluster: LocalCluster) -> None:
    """kill -9 the NATS node under the viewer's gateway: the viewer keeps
    receiving (the gateway reconnects through the load balancer, takes fresh
    snapshots) and the node rejoins and catches up as a CS_LAST replica."""
    async with GatewayClient(cluster.ws_url) as client:
        sub = await client.subscribe(CHANNELS)
        await sub.wait_for(lambda s: all(v is not None for v in s.values), timeout=30)
        victim = node_serving(cluster, client.hello["gw"])
        assert victim.process is not None
        victim.process.kill()
        killed = time.monotonic()
        at_kill = [v["v"] for v in sub.values]
        await sub.wait_for(
            lambda s: all(
                v["v"] > a + 1 for v, a in zip(s.values, at_kill, strict=True)
            ),
            timeout=20,
        )
        assert time.monotonic() - killed < 20
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


async def test_a_killed_gateway_s_viewers_reconnect_elsewhere(
    cluster: LocalCluster,
) -> None:
    """kill -9 the viewer's gateway: the client reconnects through the load
    balancer to another gateway, takes a fresh snapshot and goes on."""
    async with GatewayClient(cluster.ws_url, backoff_base=0.05) as client:
        sub = await client.subscribe(CHANNELS)
        await sub.wait_for(lambda s: all(v is not None for v in s.values), timeout=30)
        (gateway,) = [g for g in cluster.gateways if g.name == client.hello["gw"]]
        assert gateway.process is not None
        snapshots = sub.snapshots
        gateway.process.kill()
        killed = time.monotonic()
        await sub.wait_for(lambda s: s.snapshots > snapshots, timeout=10)
        reconnected = time.monotonic() - killed
        assert client.hello["gw"] != gateway.name
        assert reconnected <= 2.0, f"reconnected after {reconnected:.2f} s"
        at_snapshot = [v["v"] for v in sub.values]
        await sub.wait_for(
            lambda s: all(
                v["v"] > a for v, a in zip(s.values, at_snapshot, strict=True)
            ),
            timeout=10,
        )
    cluster.start_gateway(gateway)
    wait_until(lambda: gateway.name not in cluster.down, timeout=30)


async def test_an_ioc_restart_shows_disconnected_then_recovers(
    cluster: LocalCluster,
) -> None:
    """Kill the IOC: within 5 s every viewer sees its channels disconnected
    (severity 3), never silently stale; restart it: live values again."""
    async with GatewayClient(cluster.ws_url) as client:
        sub = await client.subscribe(CHANNELS)
        await sub.wait_for(lambda s: all(v is not None for v in s.values), timeout=30)
        cluster.sims["ioc"].kill()
        killed = time.monotonic()
        await sub.wait_for(
            lambda s: all(v["c"] is False and v["sev"] == 3 for v in s.values),
            timeout=15,
        )
        assert time.monotonic() - killed <= 5.0
        await asyncio.to_thread(cluster.start_ioc)
        await sub.wait_for(
            lambda s: all(v["c"] is True and v["sev"] == 0 for v in s.values),
            timeout=30,
        )
        restarted = [v["v"] for v in sub.values]
        await sub.wait_for(
            lambda s: all(v["v"] > r for v, r in zip(s.values, restarted, strict=True)),
            timeout=10,
        )


async def test_a_restarted_adapter_resumes_every_viewer(cluster: LocalCluster) -> None:
    """kill -9 the EPICS adapter and start it again: the gateways' demand
    (want leases) brings its channels back, under a new epoch, unprompted."""
    async with GatewayClient(cluster.ws_url) as client:
        sub = await client.subscribe(CHANNELS)
        await sub.wait_for(lambda s: all(v is not None for v in s.values), timeout=30)
        old_epochs = {v["ep"] for v in sub.values}
        cluster.adapters["epics"].kill()
        await asyncio.to_thread(cluster.start_adapter, "epics")
        await sub.wait_for(
            lambda s: all(v["ep"] not in old_epochs and v["c"] for v in s.values),
            timeout=30,
        )
