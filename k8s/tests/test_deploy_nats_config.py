"""The NATS configuration in k8s/: ``nats-server -t`` accepts the base and the
production (TLS) configuration, and a real nats-server running our accounts
enforces each role's subject permissions: adapters publish values and answer
puts, gateways read, request puts and use the last-value store, and neither
can do the other's job. The production TLS settings carry a real client."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import numpy as np
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from deploy_helpers import REPO, run_tool

from synoptic_alarms.service import AlarmService
from synoptic_alarms.settings import AlarmSettings
from synoptic_bus.alarmstore import AlarmStreams, ensure_stream
from synoptic_bus.alarmtree import TreeStore, TreeStoreConfig
from synoptic_bus.archiver import history_feed
from synoptic_bus.arrays import ArraysConfig, ensure_arrays
from synoptic_bus.history import HistoryConfig, ensure_history, oldest, read_range
from synoptic_bus.learned import TANGO_READS_BUCKET, ensure_learned_bucket
from synoptic_bus.metahistory import MetaHistoryConfig, ensure_meta_history
from synoptic_bus.moment import last_at
from synoptic_bus.natsserver import NatsServer, nats_server_executable
from synoptic_bus.rollup import Rollup, ensure_rollup, large_value_plan
from synoptic_bus.screens import ScreenBucket, ScreensConfig
from synoptic_bus.store import StoreConfig, ensure_store, fetch_last, store_barrier
from synoptic_gateway.history.blocks import read_blocks
from synoptic_schemas import Subjects, decode_put_reply, encode, parse_channel
from synoptic_schemas.alarms import decode_alarm, decode_alarm_reply
from synoptic_schemas.codec import encode_sev, encode_value
from synoptic_schemas.subjects import subject_tail

NATS_DIR = REPO / "k8s/base/nats"
PASSWORDS = {
    "NATS_ADAPTER_PASSWORD": "pw-adapter",
    "NATS_GATEWAY_PASSWORD": "pw-gateway",
    "NATS_READER_PASSWORD": "pw-reader",
    "NATS_ROLLUP_PASSWORD": "pw-rollup",
    "NATS_ALARMS_PASSWORD": "pw-alarms",
    "NATS_ADMIN_PASSWORD": "pw-admin",
    "NATS_SYS_PASSWORD": "pw-sys",
}
ENV = {**os.environ, **PASSWORDS, "SERVER_NAME": "nats-0"}


def config_test(conf: Path, env: dict[str, str]) -> tuple[int, str]:
    result = run_tool(nats_server_executable(), "-t", "-c", conf, env=env)
    return result.returncode, result.stdout + result.stderr


def test_base_config_is_valid() -> None:
    code, out = config_test(NATS_DIR / "nats.conf", ENV)
    assert code == 0, out
    assert "is valid" in out


def test_a_missing_password_is_an_error() -> None:
    env = {k: v for k, v in ENV.items() if k != "NATS_GATEWAY_PASSWORD"}
    code, out = config_test(NATS_DIR / "nats.conf", env)
    assert code != 0
    assert "NATS_GATEWAY_PASSWORD" in out


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test CA and a server certificate for nats, nats-headless, localhost."""
    folder = tmp_path_factory.mktemp("certs")
    now = datetime.datetime.now(datetime.UTC)

    def make(subject: str, issuer_key, issuer_name, sans, ca: bool):  # type: ignore[no-untyped-def]
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(issuer_name or name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), True)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), False)
        cert = builder.sign(issuer_key or key, hashes.SHA256())
        return key, cert

    ca_key, ca_cert = make("synoptic-test-ca", None, None, None, True)
    sans = [
        x509.DNSName("nats"),
        x509.DNSName("nats-headless"),
        x509.DNSName("*.nats-headless"),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    key, cert = make("nats", ca_key, ca_cert.subject, sans, False)
    pem = serialization.Encoding.PEM
    (folder / "ca.crt").write_bytes(ca_cert.public_bytes(pem))
    (folder / "tls.crt").write_bytes(cert.public_bytes(pem))
    (folder / "tls.key").write_bytes(
        key.private_bytes(
            pem,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return folder


def production_config(kustomize: Path, certs: Path, folder: Path) -> Path:
    """The production overlay's rendered nats-config files, certificates
    pointed at the test ones; returns the main file."""
    rendered = run_tool(kustomize, "build", REPO / "k8s/overlays/production")
    assert rendered.returncode == 0, rendered.stderr
    (config_map,) = [
        doc
        for doc in yaml.safe_load_all(rendered.stdout)
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"].startswith("nats-")
    ]
    for filename, text in config_map["data"].items():
        (folder / filename).write_text(text.replace("/etc/nats-certs", str(certs)))
    return folder / "nats.conf"


def test_production_config_with_tls_is_valid(
    kustomize: Path, certs: Path, tmp_path: Path
) -> None:
    conf = production_config(kustomize, certs, tmp_path)
    assert "verify: true" in (tmp_path / "cluster-tls.conf").read_text()
    code, out = config_test(conf, ENV)
    assert code == 0, out


def server_config(folder: Path, *, tls: bool) -> Path:
    """A standalone server config using our accounts (and our client TLS)."""
    shutil.copy(NATS_DIR / "accounts.conf", folder / "accounts.conf")
    conf = folder / "server.conf"
    lines = ['include "accounts.conf"']
    if tls:
        lines.append('include "tls.conf"')
    conf.write_text("\n".join(lines) + "\n")
    return conf


@pytest.fixture
def accounts_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[NatsServer]:
    conf = server_config(tmp_path, tls=False)
    for name, value in PASSWORDS.items():  # the server reads them (not leaked)
        monkeypatch.setenv(name, value)
    server = NatsServer(extra_args=["-c", str(conf)]).start()
    try:
        yield server
    finally:
        server.close()


class Client:
    """A connection as one role, recording permission violations."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.nc: nats.NATS | None = None

    async def connect(self, server: NatsServer, user: str) -> nats.NATS:
        async def on_error(exc: Exception) -> None:
            self.errors.append(str(exc))

        self.nc = await nats.connect(
            f"nats://{user}:pw-{user}@127.0.0.1:{server.port}",
            error_cb=on_error,
            allow_reconnect=False,
        )
        return self.nc

    async def violation(self, subject: str, timeout: float = 5.0) -> None:
        """Wait until the server reported a permission violation on subject."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not any(
            "permissions violation" in e.lower() and subject.lower() in e.lower()
            for e in self.errors
        ):
            assert loop.time() < deadline, f"no violation on {subject}: {self.errors}"
            await asyncio.sleep(0.05)


@pytest.fixture
async def roles(accounts_server: NatsServer) -> AsyncIterator[dict[str, Client]]:
    users = ("admin", "adapter", "gateway", "reader", "rollup", "alarms")
    clients = {user: Client() for user in users}
    for user, client in clients.items():
        await client.connect(accounts_server, user)
    try:
        yield clients
    finally:
        for client in clients.values():
            if client.nc:
                await client.nc.close()


async def request_answered(nc: nats.NATS, subject: str, payload: bytes) -> bytes:
    """A request's answer. The responder subscribed and flushed on the same
    server, yet once in many CI runs the server answered "no responders": asked
    again until a deadline, a permission refusal still fails (it never answers)."""
    async with asyncio.timeout(10):
        while True:
            try:
                return (await nc.request(subject, payload, timeout=5)).data
            except nats.errors.NoRespondersError:
                await asyncio.sleep(0.05)


async def test_roles_can_do_their_jobs(roles: dict[str, Client]) -> None:
    admin, adapter, gateway = (
        roles["admin"].nc,
        roles["adapter"].nc,
        roles["gateway"].nc,
    )
    assert admin and adapter and gateway
    subjects = Subjects("cs")
    channel = parse_channel("ca://DEMO:SETPOINT")
    await ensure_store(admin, StoreConfig(storage="file"))  # the bus-init Job
    await ensure_history(admin, HistoryConfig(storage="file"))  # the bus-init Job
    await ensure_store(adapter, StoreConfig(storage="file"))  # exists: info only
    # what Tango adapters learn about reading attributes: the bus-init Job makes
    # the bucket, an adapter reads and writes its devices' keys
    await ensure_learned_bucket(admin)
    learned = await adapter.jetstream().key_value(TANGO_READS_BUCKET)
    await learned.put("127.0.0.1=3A10000/sim/test/1", b"{}")
    assert (await learned.get("127.0.0.1=3A10000/sim/test/1")).value == b"{}"

    live = await gateway.subscribe(subjects.all_of("val"))
    # The gateway's own pattern: value and metadata of a channel in one
    # subscription; a put on the same channel is never delivered to it.
    both = await gateway.subscribe(f"cs.*.{subjects.val(channel).split('.', 2)[2]}")
    beats = await gateway.subscribe("cs.hb.>")  # adapter liveness (src frames)
    await gateway.flush()

    async def answer_puts(msg: nats.aio.msg.Msg) -> None:
        await msg.respond(encode({"ver": 1, "ok": True}))

    await adapter.subscribe(
        f"{subjects.put(channel).split('.ca.')[0]}.ca.>", cb=answer_puts
    )
    await adapter.subscribe(subjects.want("ca"))
    await adapter.flush()

    value = {
        "ver": 1,
        "v": 1.5,
        "t": 1,
        "sev": 0,
        "st": "",
        "seq": 1,
        "ep": 1,
        "c": True,
    }
    await adapter.publish(subjects.val(channel), encode(value))
    await adapter.publish(subjects.hb("epics-0"), b"beat")
    assert (await live.next_msg(timeout=5)).subject == subjects.val(channel)
    assert (await beats.next_msg(timeout=5)).subject == subjects.hb("epics-0")

    reply = await request_answered(gateway, subjects.put(channel), encode({"v": 2}))
    assert decode_put_reply(reply)["ok"] is True
    command = parse_channel("tango://tg:10000/sr/ps/1/Reset")
    await adapter.subscribe(subjects.all_of("cmd", "tango"), cb=answer_puts)
    await adapter.flush()
    reply = await request_answered(gateway, subjects.cmd(command), encode({"ver": 1}))
    assert decode_put_reply(reply)["ok"] is True
    await adapter.publish(subjects.meta(channel), b"meta")
    received = [(await both.next_msg(timeout=5)).subject for _ in range(2)]
    assert received == [subjects.val(channel), subjects.meta(channel)]
    await gateway.publish(subjects.want("ca"), b"want")
    await gateway.publish(subjects.audit("ca"), b"audit")

    # the barrier a gateway publishes before each snapshot read (decision 0009)
    barrier = StoreConfig().barrier_subject
    assert await store_barrier(gateway, barrier) > 0

    # the value came from another connection (the adapter user may not publish
    # barriers): the store has it once a read finds it
    async with asyncio.timeout(20):
        while True:
            snapshot = await fetch_last(
                gateway, [subjects.val(channel)], stream="CS_LAST"
            )
            if subjects.val(channel) in snapshot.messages:
                break
            await asyncio.sleep(0.05)
    # recent history: a gateway reads CS_HIST with its own pull consumer (0022);
    # the last-value stream feeds it (republish), a moment later
    tail = subjects.val(channel).split(".", 2)[2]
    async with asyncio.timeout(20):
        while True:
            if await oldest(gateway, "CS_HIST") is not None:
                break
            await asyncio.sleep(0.05)
    hist = await read_range(gateway, "CS_HIST", [f"cs.hist.val.{tail}"], 0, 2**62)
    assert hist.count == 1
    # screens: the bus-init Job creates the bucket, a gateway reads, watches and
    # writes it
    await ScreenBucket.ensure(admin, ScreensConfig())
    bucket = await ScreenBucket.open(gateway, ScreensConfig())
    screen = {"title": "Roles", "widgets": []}
    entry = await bucket.put("roles", screen, 0, "op")
    assert (await bucket.get("roles")).screen == screen
    assert [e.revision for e in await bucket.history("roles")] == [entry.revision]
    assert [e.name for e in await bucket.entries()] == ["roles"]
    await bucket.delete("roles", entry.revision, "op")
    await gateway.publish(subjects.audit("screens"), b"audit")
    await gateway.flush()
    assert not roles["gateway"].errors, roles["gateway"].errors
    assert not roles["adapter"].errors, roles["adapter"].errors


async def test_the_rollup_writes_blocks_that_a_gateway_reads(
    roles: dict[str, Client],
) -> None:
    """Decisions 0027, 0030: the rollup reads values and writes CS_ROLL and
    CS_ARRAYS (made by the bus-init Job); a gateway reads the blocks and the large
    values; neither needs more."""
    admin, adapter, gateway, writer = (
        roles[u].nc for u in ("admin", "adapter", "gateway", "rollup")
    )
    assert admin and adapter and gateway and writer
    history = HistoryConfig(storage="file")
    await ensure_store(admin, StoreConfig(storage="file"))  # the bus-init Job
    await ensure_history(admin, history)
    await ensure_rollup(admin, history)
    await ensure_arrays(admin, ArraysConfig(history))
    await ensure_rollup(writer, history, update=False)  # exists: info only
    await ensure_arrays(writer, ArraysConfig(history), update=False)
    large_from, thinner = await large_value_plan(writer, "cs")
    rollup = Rollup(writer, "cs", span=1.0, large_from=large_from, thinner=thinner)
    tap = rollup.tap(["cs.val.>"])
    await tap.start()  # a consumer of CS_HIST
    reading = asyncio.create_task(tap.run())
    await rollup.watch_live(writer, ["cs.val.>"])  # large values, live
    channel = parse_channel("ca://DEMO:ROLLED")
    wave = parse_channel("ca://DEMO:WAVE")
    tail = subject_tail(channel)
    t = time.time_ns()
    await adapter.publish(
        Subjects().val(channel), encode_value(4.5, t, 1, "", 1, 1, True)
    )
    waveform = np.arange(1000, dtype="<f8")
    await adapter.publish(
        Subjects().val(wave), encode_value(waveform, t, 0, "", 1, 1, True)
    )
    await adapter.flush()
    published = 0
    try:
        async with asyncio.timeout(30):  # one tick after another until both are in
            while rollup.values == 0 or rollup.large_kept == 0:
                published += await rollup.step()
                await asyncio.sleep(0.05)
    except TimeoutError:
        state = (rollup.values, rollup.large_kept, tap.messages, tap.gaps, tap.next_seq)
        raise AssertionError(f"values, large, tapped, gaps, next: {state}") from None
    assert published >= 1  # its growing block
    read = await read_blocks(
        gateway, "CS_ROLL", "CS_HIST", "cs", [tail], t - 10**9, t + 10**9,
        max_values=100, timeout=5,
    )  # fmt: skip
    assert read.columns[tail].v.tolist() == [4.5]
    assert read.columns[tail].sev.tolist() == [1]
    kept = await fetch_last(gateway, [Subjects().hist_large(wave)], stream="CS_ARRAYS")
    assert len(kept.messages) == 1 and rollup.large_kept == 1
    reading.cancel()
    await rollup.close()
    await writer.publish("cs.val.ca.FORGED", b"x")  # a rollup cannot forge values
    await roles["rollup"].violation("cs.val.ca.FORGED")
    await writer.publish("$JS.API.STREAM.DELETE.CS_ROLL", b"")  # nor manage streams
    await roles["rollup"].violation("$JS.API.STREAM.DELETE.CS_ROLL")
    assert not roles["gateway"].errors, roles["gateway"].errors


async def test_a_gateway_reads_values_and_metadata_at_a_moment(
    roles: dict[str, Client],
) -> None:
    """Rewind: the bus-init Job makes CS_META; the last-value stream feeds it and
    CS_HIST; a gateway (and a reader, for metadata) reads both as they stood at a
    moment by Direct Get, and may not publish into the history."""
    admin, adapter, gateway, reader = (
        roles[u].nc for u in ("admin", "adapter", "gateway", "reader")
    )
    assert admin and adapter and gateway and reader
    history = HistoryConfig(storage="file")
    await ensure_store(admin, StoreConfig(storage="file"))
    await ensure_history(admin, history)
    await ensure_meta_history(admin, MetaHistoryConfig())
    channel = parse_channel("ca://DEMO:REWOUND")
    subjects = Subjects()
    meta = {"ver": 1, "dt": "f8", "shape": [], "unit": "mA", "w": False,
            "t": time.time_ns(), "ep": 1}  # fmt: skip
    await adapter.publish(subjects.meta(channel), encode(meta))
    await adapter.publish(
        subjects.val(channel), encode_value(2.5, time.time_ns(), 0, "", 1, 1, True)
    )
    await adapter.flush()
    js = admin.jetstream()
    async with asyncio.timeout(10):
        while (await js.stream_info("CS_META")).state.messages < 1:  # noqa: ASYNC110 - no event for a stream count
            await asyncio.sleep(0.05)
    at = time.time_ns()
    values = await last_at(gateway, "CS_HIST", [subjects.hist(channel)], at)
    assert list(values) == [subjects.hist(channel)]
    metas = await last_at(reader, "CS_META", [subjects.hist_meta(channel)], at)
    assert list(metas) == [subjects.hist_meta(channel)]
    await gateway.publish(subjects.hist_meta(channel), b"forged")
    await roles["gateway"].violation(subjects.hist_meta(channel))


async def test_the_archiver_reads_the_raw_history_as_the_reader(
    roles: dict[str, Client],
) -> None:
    """Decision 0031: ``synoptic archiver`` (user ``reader``) keeps a durable
    consumer on CS_HIST (made by the bus-init Job) and acknowledges what it wrote;
    the reader may do nothing else with JetStream."""
    admin, adapter, reader = (roles[u].nc for u in ("admin", "adapter", "reader"))
    assert admin and adapter and reader
    await ensure_store(admin, StoreConfig(storage="file"))
    await ensure_history(admin, HistoryConfig(storage="file"))
    feed = await history_feed(reader, "cs", ["cs.val.ca.>"])
    channel = parse_channel("ca://DEMO:ARCHIVED")
    await adapter.publish(
        Subjects().val(channel), encode_value(7.5, time.time_ns(), 0, "", 1, 1, True)
    )
    await adapter.flush()
    msgs = await feed.fetch(10, timeout=10)
    assert msgs[-1].subject == "cs.hist.val.ca.DEMO:ARCHIVED"
    await msgs[-1].ack()
    await reader.publish("$JS.API.STREAM.DELETE.CS_HIST", b"")  # nor manage streams
    await roles["reader"].violation("$JS.API.STREAM.DELETE.CS_HIST")
    assert len(roles["reader"].errors) == 1, roles["reader"].errors  # that one


async def test_roles_cannot_do_each_others_jobs(roles: dict[str, Client]) -> None:
    adapter, gateway, reader = roles["adapter"], roles["gateway"], roles["reader"]
    assert adapter.nc and gateway.nc and reader.nc
    await gateway.nc.publish("cs.val.ca.FORGED", b"x")  # a gateway cannot forge values
    await gateway.violation("cs.val.ca.FORGED")
    await gateway.nc.subscribe("cs.put.>")  # nor intercept puts
    await gateway.violation("cs.put.>")
    await gateway.nc.subscribe("cs.cmd.>")  # nor commands
    await gateway.violation("cs.cmd.>")
    await adapter.nc.subscribe("cs.val.>")  # an adapter does not read others' values
    await adapter.violation("cs.val.>")
    await adapter.nc.publish("$JS.API.STREAM.DELETE.CS_LAST", b"")  # nor manage streams
    await adapter.violation("$JS.API.STREAM.DELETE.CS_LAST")
    await adapter.nc.publish("cs.audit.ca", b"x")
    await adapter.violation("cs.audit.ca")
    await reader.nc.publish("cs.put.ca.DEMO:SETPOINT", b"x")  # readers only read
    await reader.violation("cs.put.ca.DEMO:SETPOINT")
    await reader.nc.publish("cs.cmd.tango.tg:10000.sr.ps.1.reset", b"x")
    await reader.violation("cs.cmd.tango.tg:10000.sr.ps.1.reset")
    await reader.nc.publish("cs.want.ca", b"x")
    await reader.violation("cs.want.ca")
    await adapter.nc.publish("cs.sync.barrier", b"")  # barriers are the gateways'
    await adapter.violation("cs.sync.barrier")


async def test_wrong_password_is_refused(accounts_server: NatsServer) -> None:
    nc = nats.NATS()
    try:
        with pytest.raises(Exception, match=r"(?i)authorization"):
            await nc.connect(
                f"nats://gateway:wrong@127.0.0.1:{accounts_server.port}",
                allow_reconnect=False,
                max_reconnect_attempts=0,
            )
    finally:
        await nc.close()


async def test_clients_reach_nats_over_production_tls(
    kustomize: Path, certs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the production overlay sets them up: tls:// URL, CA via SSL_CERT_FILE,
    the admin role creating the stream (the bus-init Job's command)."""
    production_config(kustomize, certs, tmp_path)
    conf = server_config(tmp_path, tls=True)
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    server = NatsServer(extra_args=["-c", str(conf)]).start()
    try:
        env = {
            **os.environ,
            "SSL_CERT_FILE": str(certs / "ca.crt"),
            "SYNOPTIC_NATS_URL": f"tls://admin:pw-admin@localhost:{server.port}",
        }
        synoptic = Path(sys.executable).parent / "synoptic"
        argv = [synoptic, "bus", "init", "--storage", "file", "--replicas", "1"]
        result = await asyncio.to_thread(run_tool, *argv, env=env)
        assert result.returncode == 0, result.stderr
        assert "CS_LAST" in result.stdout + result.stderr
    finally:
        server.close()


async def test_the_alarm_service_works_on_its_permissions(
    roles: dict[str, Client], accounts_server: NatsServer
) -> None:
    """Decision 0030: the bus-init Job makes the alarm streams and the tree's
    bucket; the alarm service follows an adapter's transitions, answers a
    gateway's acknowledge, and can do nothing else; a gateway reads the states
    and the tree."""
    admin, adapter, gateway, service_nc, reader = (
        roles[u].nc for u in ("admin", "adapter", "gateway", "alarms", "reader")
    )
    assert admin and adapter and gateway and service_nc and reader
    streams = AlarmStreams(storage="file")
    await ensure_stream(admin, streams.sev_config())  # the bus-init Job
    await ensure_stream(admin, streams.alarm_config())
    tree_store = await TreeStore.ensure(admin, TreeStoreConfig())
    tree = {"name": "Plant", "channels": ["ca://ROLE:P1"]}
    await tree_store.put(tree, (await tree_store.latest()).revision, "op")
    service = AlarmService(service_nc, AlarmSettings(no_data_after=600))
    await service.start()
    async with asyncio.timeout(30):
        await service.ready.wait()
    states = await gateway.subscribe(Subjects().alarms())
    await gateway.flush()
    channel = parse_channel("ca://ROLE:P1")
    await adapter.publish(Subjects().sev(channel),
                          encode_sev(9.0, time.time_ns(), 2, "HIHI", 1, 7, True))  # fmt: skip
    state = decode_alarm((await states.next_msg(timeout=10)).data)
    assert (state["ch"], state["lat"]) == ("ca://ROLE:P1", 2)
    reply = await gateway.request(Subjects().alarm_request(), encode(
        {"ver": 1, "op": "ack", "ch": ["ca://ROLE:P1"], "who": "op", "by": "gw"}
    ), timeout=10)  # fmt: skip
    assert decode_alarm_reply(reply.data)["ok"]
    snap = await fetch_last(gateway, [Subjects().alarm(channel)], stream="CS_ALARM")
    assert decode_alarm(snap.messages[Subjects().alarm(channel)])["ackd"]
    snap = await fetch_last(reader, [Subjects().alarm(channel)], stream="CS_ALARM")
    assert len(snap.messages) == 1
    assert (await TreeStore(gateway, TreeStoreConfig()).latest()).tree == tree
    await service.stop()
    await service_nc.publish("cs.val.ca.FORGED", b"x")  # it cannot forge values
    await roles["alarms"].violation("cs.val.ca.FORGED")
    await service_nc.publish("$JS.API.STREAM.DELETE.CS_ALARM", b"")
    await roles["alarms"].violation("$JS.API.STREAM.DELETE.CS_ALARM")
    for user in ("alarms", "gateway", "adapter", "reader"):
        unexpected = [e for e in roles[user].errors if "forged" not in e.lower()
                      and "stream.delete" not in e.lower()]  # fmt: skip
        assert not unexpected, (user, unexpected)
