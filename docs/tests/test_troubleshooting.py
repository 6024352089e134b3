"""docs/troubleshooting.md says what really happens: each situation it describes
is provoked here against real servers (nats-server with and without JetStream, a
gateway with a JWT key and an Origin list, the EPICS adapter and a soft IOC), and
the message it quotes is the one the program gives. Messages only the browser
shows are checked in the UI's source, where they are made."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from synoptic_adapters.testing import EpicsAdapter, SimIoc
from synoptic_bus.natsserver import NatsServer, nats_server_executable
from synoptic_bus.procs import Process, free_port
from synoptic_gateway.testing import GatewayProc, start_gateway
from synoptic_schemas import frames

pytestmark = pytest.mark.system

ROOT = Path(__file__).parents[2]
PAGE = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
SYNOPTIC = str(Path(sys.executable).parent / "synoptic")
SECRET = "troubleshooting-secret-of-32-bytes-or-more"
ORIGIN = "https://synoptic.example.org"


def quoted(message: str) -> None:
    """The page quotes ``message`` (whitespace as it wraps)."""
    assert " ".join(message.split()) in " ".join(PAGE.split()), message


def token(**claims: object) -> str:
    return jwt.encode({"sub": "tester", **claims}, SECRET, algorithm="HS256")


def cli(*args: str, nats: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SYNOPTIC, *args, "--nats", nats], capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


@pytest.fixture(scope="module")
def gateway(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gw = start_gateway(
        nats_server.url, "--jwt-secret", SECRET, "--allowed-origin", ORIGIN
    )
    try:
        yield gw
    finally:
        gw.stop()


def bearer(value: str) -> dict[str, str]:
    """The header a program sends its token in (never the URL)."""
    return {"Authorization": f"Bearer {value}"}


async def refusal(url: str, sent: str | None) -> tuple[dict, int | None, str]:
    """The last ``err`` frame a refused socket gets, its close code and reason."""
    err: dict = {}
    headers = bearer(sent) if sent is not None else None
    async with connect(url, origin=ORIGIN, additional_headers=headers) as ws:
        with pytest.raises(ConnectionClosed):
            while True:
                frame = frames.unpack(await ws.recv())
                if frame["op"] == "err":
                    err = frame
        return err, ws.close_code, ws.close_reason


async def test_4401_with_the_reasons_quoted(gateway: GatewayProc) -> None:
    quoted("Your sign-in was refused or has expired: sign in again.")
    quoted("gateway refused the connection: closed (4401: unauthorized)")
    cases: dict[str | None, str] = {
        "not-a-jwt": "not a token: ",
        token(exp=int(time.time()) - 600): "the token expired",
        jwt.encode({"sub": "x"}, "another-key-of-32-bytes-or-more!!", "HS256"): (
            "the token's signature does not verify"
        ),
        # no token at all: the socket waits for one in an ``auth`` frame
        None: "no token in 10 s: a bearer token is required",
    }
    for sent, reason in cases.items():
        err, code, _ = await refusal(gateway.ws_url, sent)
        assert (err.get("code"), code) == ("unauthorized", 4401), err
        assert err["msg"].startswith(reason), err
        quoted(f"`{reason.rstrip(': ')}")
    # the browser's words: the close as the page reports it (gateway.svelte.ts)
    source = (ROOT / "ui/src/lib/transport/gateway.svelte.ts").read_text()
    assert "this.lastError = userMessage('unauthorized', why);" in source
    assert "console.warn(`gateway refused the connection: ${why}`);" in source
    assert "`closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`" in source
    words = (ROOT / "ui/src/lib/transport/errors.ts").read_text()
    assert "'Your sign-in was refused or has expired: sign in again.'" in words


async def test_403_for_an_origin_not_listed(gateway: GatewayProc) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(
            gateway.ws_url, additional_headers=bearer(token()),
            origin="https://elsewhere.example",
        ):  # fmt: skip
            pass
    assert refused.value.response.status_code == 403
    async with connect(  # a program without Origin is not checked
        gateway.ws_url, additional_headers=bearer(token()), origin=None
    ) as ws:
        assert frames.unpack(await ws.recv())["op"] == "hello"
    quoted("--allowed-origin")


async def test_limits_say_exceeds(gateway: GatewayProc) -> None:
    async with connect(
        gateway.ws_url, additional_headers=bearer(token()), origin=ORIGIN,
        max_size=None,
    ) as ws:  # fmt: skip
        assert frames.unpack(await ws.recv())["op"] == "hello"
        await ws.send(frames.pack(frames.sub(1, ["ca://A" + "x" * 600_000])))
        err = frames.unpack(await ws.recv())
        assert err["code"] == "frame_too_big"
        assert re.fullmatch(r"frame of \d+ bytes exceeds 524288", err["msg"])
        quoted("`frame of N bytes exceeds 524288`")
        many = [f"ca://MANY:{i}" for i in range(5001)]
        await ws.send(frames.pack(frames.sub(2, many)))
        err = frames.unpack(await ws.recv())
        assert (err["code"], err["msg"]) == (
            "too_many_channels",
            "5001 channels on this connection would exceed the limit of 5000",
        )
        quoted("`N channels on this connection would exceed the limit of 5000`")


def test_a_screen_over_the_bus_payload_is_refused(gateway: GatewayProc) -> None:
    """On a nats-server without a configuration (1 MiB payloads) a 2 MiB screen
    is refused with 413 ``too_large``."""
    screen = {
        "version": 1, "title": "big",
        "layout": {"type": "grid", "columns": 12, "row_height": 28, "gap": 4},
        "widgets": [{"type": "text", "title": f"{i:05} " + "x" * 180, "w": 12,
                     "h": 1} for i in range(12000)],
    }  # fmt: skip
    deadline = time.monotonic() + 60
    auth = {"Authorization": f"Bearer {token()}"}
    while gateway.get("/api/screens", auth)[0] != 200:  # the bucket opens after NATS
        assert time.monotonic() < deadline, "the screens API never answered"
        time.sleep(0.2)
    body = json.dumps({"screen": screen, "base_revision": 0}).encode()
    request = urllib.request.Request(
        f"{gateway.http_url}/api/screens/big", data=body, method="PUT",
        headers={"Content-Type": "application/json", "Origin": ORIGIN,
                 "Authorization": f"Bearer {token(screens='*')}"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    answer = json.loads(refused.value.read())
    assert (refused.value.code, answer["error"]) == (413, "too_large"), answer
    assert re.fullmatch(
        r"screen of \d+ bytes exceeds the limit of \d+ bytes", answer["reason"]
    ), answer
    quoted("`screen of N bytes exceeds the limit of M bytes` (413 `too_large`)")


def test_the_other_exceeds_messages_are_the_codes() -> None:
    """Messages of the table that need a detector or a year of history: the
    format strings are the code's."""
    sources = {
        "adapters/synoptic_adapters/pva/convert.py": (
            'f"array of {size} bytes exceeds the limit of {max_bytes} bytes"'
        ),
        "gateway/synoptic_gateway/history/service.py": 'days exceeds the limit "',
        "bus/synoptic_bus/prereq.py": "exceeds the bus's max_payload of {limit} bytes: ",
    }
    for path, text in sources.items():
        assert text in (ROOT / path).read_text(), path
    quoted("`array of N bytes exceeds the limit of M bytes`")
    quoted("`a range of N days exceeds the limit …`")
    quoted("`value of N bytes exceeds the bus's max_payload of M bytes: raise")


def test_stale_and_bus_down_words_are_the_uis() -> None:
    badge = (ROOT / "ui/src/lib/ConnectionBadge.svelte").read_text()
    assert "'bus-down': 'bus down: values stale'" in badge
    quoted("*bus down: values stale*")
    paint = (ROOT / "ui/src/lib/widgets/paint.ts").read_text()
    for words in ("stale: no live source (the adapter stopped reporting)",
                  "stale: not live"):  # fmt: skip
        assert f"'{words}'" in paint
        quoted(f"`{words}`")


def test_no_adapter_owns_the_channel(nats_server: NatsServer) -> None:
    assert cli("bus", "init", nats=nats_server.url).returncode == 0
    got = cli("get", "ca://NOBODY:HERE", "--wait", "0.5", nats=nats_server.url)
    assert got.returncode == 1
    assert "no value in the store, nor within 0.5 s of asking (no adapter owns" in (
        got.stdout
    )
    quoted(
        "no value in the store, nor within 8 s of asking (no adapter owns this channel: …)"
    )


@pytest.fixture(scope="module")
def ioc() -> Iterator[SimIoc]:
    with SimIoc(records=1).start() as sim:
        yield sim


def test_an_ioc_not_found_is_reported_and_searched(
    nats_server: NatsServer, ioc: SimIoc
) -> None:
    """A PV no server answers: `synoptic get` asks for it, and the adapter
    publishes it disconnected, never connected, within its connect timeout."""
    with EpicsAdapter(nats_server.url, ioc, []).start():
        got = cli("get", "ca://NO:SUCH:PV", "--wait", "20", nats=nats_server.url)
    assert "ca://NO:SUCH:PV = None sev=3" in got.stdout, got.stdout + got.stderr
    assert "DISCONNECTED" in got.stdout
    assert re.search(r"never connected: no server answered within \d+ s", got.stdout)
    quoted("`never connected: no server answered within 5 s`")
    from synoptic_adapters.adapter_command import DEFAULT_CONNECT_TIMEOUT

    assert DEFAULT_CONNECT_TIMEOUT == 5.0  # the page's figure


@pytest.fixture(scope="module")
def plain_nats() -> Iterator[str]:
    """A nats-server without JetStream."""
    port = free_port()
    proc = Process(
        "nats-nojs", [nats_server_executable(), "-a", "127.0.0.1", "-p", str(port)]
    )
    proc.wait_for(NatsServer.READY, 20)
    try:
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.stop()


def test_jetstream_off(plain_nats: str, tmp_path: Path) -> None:
    init = cli("bus", "init", nats=plain_nats)
    assert (init.returncode, init.stdout) == (3, "")
    assert init.stderr.startswith(f"synoptic bus: JetStream is off on {plain_nats} ")
    assert "start nats-server with -js" in init.stderr
    quoted(
        "`synoptic bus: JetStream is off on nats://… (…): start nats-server with -js …`"
    )
    got = cli("get", "ca://A", "--wait", "0", nats=plain_nats)
    assert (got.returncode, got.stdout) == (3, "")
    assert got.stderr == (
        "synoptic get: stream CS_LAST not found or JetStream unavailable\n"
    )
    quoted("`synoptic get: stream CS_LAST not found or JetStream unavailable`")
    config = tmp_path / "epics.yaml"
    config.write_text("id: no-js\n")
    adapter = subprocess.run(
        [SYNOPTIC, "adapter", "epics", "--config", str(config), "--nats", plain_nats],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    out = adapter.stdout + adapter.stderr
    assert adapter.returncode == 2, out
    assert "cannot start: JetStream is off on" in out and "Traceback" not in out
    quoted(
        "`adapter … cannot start: JetStream is off on nats://… (…): start nats-server with -js …`"
    )


def small_nats(tmp_path: Path, name: str, max_file_store: str) -> tuple[Process, str]:
    """A JetStream server whose file store is ``max_file_store``."""
    port = free_port()
    conf = tmp_path / f"{name}.conf"
    conf.write_text(
        f"listen: 127.0.0.1:{port}\n"
        f'jetstream {{ store_dir: "{tmp_path / name}", max_file_store: {max_file_store} }}\n'
    )
    proc = Process(name, [nats_server_executable(), "-c", str(conf)])
    proc.wait_for(NatsServer.READY, 20)
    return proc, f"nats://127.0.0.1:{port}"


def test_jetstream_without_room(tmp_path: Path) -> None:
    """A server whose max_file_store cannot hold the default budgets: bus init
    names the stream and what to change; smaller budgets fit."""
    proc, url = small_nats(tmp_path, "nats-512mb", "512MB")
    try:
        init = cli("bus", "init", "--history-storage", "file", nats=url)
    finally:
        proc.stop()
    assert init.returncode == 3, init.stderr
    assert init.stderr.splitlines()[-1].startswith(
        f"synoptic bus: JetStream on {url} has no room left to reserve "
        "1073741824 bytes for CS_HIST: raise max_file_store"
    ), init.stderr
    assert "Traceback" not in init.stderr
    quoted("`synoptic bus: JetStream on nats://… has no room left to reserve")
    quoted("raise max_file_store …")
    proc, url = small_nats(tmp_path, "nats-2gb", "2GB")
    try:
        small = cli(
            "bus", "init", "--history-storage", "file",
            "--history-bytes", "100000000", "--history-blocks-bytes", "50000000",
            "--history-arrays-bytes", "100000000", "--meta-history-bytes", "50000000",
            nats=url,
        )  # fmt: skip
    finally:
        proc.stop()
    assert small.returncode == 0, small.stderr
    assert "stream CS_HIST ready" in small.stdout


async def test_readyz_without_nats() -> None:
    nats = NatsServer().start()
    gw = start_gateway(nats.url)
    try:
        nats.close()
        url = f"{gw.http_url}/readyz"

        def status() -> tuple[int, dict]:
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    return answer.status, json.loads(answer.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        async with asyncio.timeout(60):
            while (got := await asyncio.to_thread(status))[0] != 503:  # noqa: ASYNC110 - no event for a probe's answer
                await asyncio.sleep(0.2)
        assert got[1]["ready"] is False
        quoted('503 `{"ready":false,…}`')
    finally:
        gw.stop()
        nats.close()
