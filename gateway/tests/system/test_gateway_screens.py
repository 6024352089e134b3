"""Screens in the KV bucket through real gateways: two gateways serve the same
screens; saves, conflicts, validation, grants, history, revert, delete, the
``screen`` frame on another gateway within 1 s, audit records, an unavailable
store, and the channel directory."""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest

from synoptic_bus.connect import NatsClient
from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.screen_api import WRITE_TIMEOUT_S
from synoptic_gateway.testing import GatewayProc, Publisher, start_gateway
from synoptic_schemas import decode

pytestmark = pytest.mark.system

SECRET = "test-secret-of-at-least-32-bytes-long!"
VACUUM_BOB = Path(__file__).resolve().parents[3] / "importer/tests/corpus/vacuum.bob"
SCREEN = {"title": "Seeded", "widgets": [{"type": "label", "channels": ["ca://S:A"]}]}


def token(sub: str = "alice", **claims: object) -> str:
    """A token valid for a day: the module's tokens are made at collection time, and
    a full test run can reach this module more than ten minutes later."""
    return jwt.encode({"sub": sub, "exp": int(time.time()) + 86400, **claims}, SECRET)


EDITOR = token("alice", screens=["*"])
LIMITED = token("bob", screens="lab-*")
LIMITED_EXP = jwt.decode(LIMITED, options={"verify_signature": False})["exp"]
VIEWER = token("carol")


@pytest.fixture(scope="module")
def bucket_name() -> str:
    return f"scr{secrets.token_hex(3)}"


@pytest.fixture(scope="module")
def pair(
    nats_server: NatsServer, tmp_path_factory: pytest.TempPathFactory, bucket_name: str
) -> Iterator[tuple[GatewayProc, GatewayProc]]:
    seed: Path = tmp_path_factory.mktemp("seed")
    (seed / "seeded.json").write_text(json.dumps(SCREEN))
    args = ["--jwt-secret", SECRET, "--allow-anonymous", "--screens", str(seed),
            "--screens-bucket", bucket_name]  # fmt: skip
    a = start_gateway(nats_server.url, *args)
    b = None
    try:
        b = start_gateway(nats_server.url, *args)
        yield a, b
    finally:
        a.stop()
        if b is not None:
            b.stop()


async def until(check, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    """Poll an HTTP condition (gateways load the bucket in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        await asyncio.sleep(0.05)
    raise TimeoutError("condition not met")


async def test_both_gateways_serve_the_seeded_screen(pair) -> None:
    for gw in pair:
        status, body, _ = await until(
            lambda gw=gw: (r := gw.api("GET", "/api/screens"))[0] == 200 and r
        )
        assert [(s["name"], s["title"], s["by"]) for s in body] == [
            ("seeded", "Seeded", "seed")
        ]
        status, screen, headers = gw.api("GET", "/api/screens/seeded")
        assert status == 200 and screen == SCREEN
        assert int(headers["x-synoptic-revision"]) == body[0]["revision"]
        assert headers["x-synoptic-editable"] == "0"  # anonymous: no grant
        assert (
            gw.api("GET", "/api/screens/seeded", token=EDITOR)[2]["x-synoptic-editable"]
            == "1"
        )
        assert gw.api("GET", "/api/screens/nothing")[0] == 404
    assert pair[0].api("GET", "/api/whoami", token=LIMITED)[1] == {
        "user": "bob", "name": "bob", "write": False, "screens": ["lab-*"],
        "command": [], "ack": [], "exp": LIMITED_EXP,
    }  # fmt: skip


async def test_save_on_a_reaches_a_viewer_of_b_within_a_second(
    pair, nc: NatsClient
) -> None:
    a, b = pair
    audits: list[dict] = []
    got_audit = asyncio.Event()

    async def on_audit(msg) -> None:  # type: ignore[no-untyped-def]
        audits.append(decode(msg.data))
        got_audit.set()

    await nc.subscribe("cs.audit.screens", cb=on_audit)
    await nc.flush()
    async with GatewayClient(b.ws_url) as viewer:
        await viewer.watch(["live", "other"])
        t0 = time.monotonic()
        status, saved, _ = a.api("PUT", "/api/screens/live", {
            "screen": SCREEN, "base_revision": 0, "summary": "new"}, token=EDITOR)  # fmt: skip
        assert status == 200, saved
        frame = await viewer.wait_screen(lambda f: f["name"] == "live", timeout=5)
        seen_s = time.monotonic() - t0
        assert frame == {"op": "screen", "name": "live", "rev": saved["revision"],
                         "by": "alice", "at": saved["at"], "deleted": False}  # fmt: skip
        assert seen_s < 1.0, seen_s
        assert b.api("GET", "/api/screens/live")[1] == SCREEN  # B serves it
        await asyncio.wait_for(got_audit.wait(), 5)
        assert audits[0] | {"t": 0, "by": ""} == {
            "ver": 1, "who": "alice", "screen": "live", "op": "put",
            "rev": saved["revision"], "summary": "new", "t": 0, "by": "",
        }  # fmt: skip

        status, gone, _ = b.api(
            "DELETE",
            f"/api/screens/live?base_revision={saved['revision']}",
            token=EDITOR,
        )
        assert status == 200
        deleted = await viewer.wait_screen(lambda f: f["deleted"], timeout=5)
        assert deleted["rev"] == gone["revision"] and deleted["by"] == "alice"
        await until(lambda: a.api("GET", "/api/screens/live")[0] == 404)
        await viewer.watch([])
        a.api("PUT", "/api/screens/live", {"screen": SCREEN, "base_revision": 0},
                  token=EDITOR)  # fmt: skip
        await until(lambda: b.api("GET", "/api/screens/live")[0] == 200)
        assert len([f for f in viewer.screens if f["name"] == "live"]) == 2


async def test_a_screen_saved_on_a_opens_on_b_at_once(pair) -> None:
    """B reads a name it has not seen yet from the bucket: a link opened right after
    a save through another gateway (or ``synoptic screens import``) is never a 404."""
    a, b = pair
    for i in range(20):
        name = f"at-once-{i}"
        status, saved, _ = a.api("PUT", f"/api/screens/{name}", {
            "screen": SCREEN, "base_revision": 0}, token=EDITOR)  # fmt: skip
        assert status == 200, saved
        status, body, headers = b.api("GET", f"/api/screens/{name}")
        assert (status, body) == (200, SCREEN), (i, body)
        assert int(headers["x-synoptic-revision"]) == saved["revision"]
    assert b.api("GET", "/api/screens/never-saved")[0] == 404


async def test_screens_are_found_by_a_channel_they_show(pair) -> None:
    """GET /api/channels/screens: the screens whose widgets, rules or tabs
    show a channel holding the query's words, best first, on either gateway."""
    a, b = pair
    tag = secrets.token_hex(3).upper()
    shows = {
        f"ch-exact-{tag}": [f"ca://RING{tag}:CURRENT"],
        f"ch-prefix-{tag}": [
            f"ca://RING{tag}:CURRENT:MAX",
            f"pva://RING{tag}:CURRENT:MIN",
        ],
        f"ch-inside-{tag}": [f"tango://h:1/sr/ring{tag}:current/dev/x"],
    }
    for name, channels in shows.items():
        widgets = [{"type": "label", "channels": [c]} for c in channels]
        screen = {"title": name, "widgets": widgets}
        if "inside" in name:  # in a tab, and a rule's
            screen = {"title": name, "widgets": [{"type": "tabs", "options": {"tabs": [
                {"title": "t", "widgets": widgets}]}, "rules": [
                {"channel": "ca://ELSEWHERE", "op": ">", "value": 1,
                 "set": {"visible": False}}]}]}  # fmt: skip
        status, saved, _ = a.api("PUT", f"/api/screens/{name}", {
            "screen": screen, "base_revision": 0}, token=EDITOR)  # fmt: skip
        assert status == 200, saved

    def found() -> dict | None:  # type: ignore[type-arg]
        body = b.api("GET", f"/api/channels/screens?q=ring{tag}:current")[1]
        return body if body["total"] == 3 else None

    body = await until(found)
    assert [s["name"] for s in body["screens"]] == [
        f"ch-exact-{tag}", f"ch-prefix-{tag}", f"ch-inside-{tag}"]  # fmt: skip
    assert body["screens"][1] == {"name": f"ch-prefix-{tag}", "matches": 2,
        "channels": [f"ca://RING{tag}:CURRENT:MAX", f"pva://RING{tag}:CURRENT:MIN"]}  # fmt: skip
    two = a.api("GET", f"/api/channels/screens?q=max%20ring{tag}&limit=1")[1]
    assert two["total"] == 1 and two["screens"][0]["name"] == f"ch-prefix-{tag}"
    assert a.api("GET", "/api/channels/screens?q=elsewhere")[1]["total"] >= 1
    assert a.api("GET", f"/api/channels/screens?q=nothing{tag}")[1] == {
        "q": f"nothing{tag}", "screens": [], "total": 0}  # fmt: skip
    assert a.api("GET", "/api/channels/screens?q=x&limit=0")[0] == 400
    assert a.api("GET", "/api/channels/screens?q=" + "x" * 600)[0] == 400


async def test_conflict_validation_grants_and_limits(pair) -> None:
    a, b = pair
    put = lambda gw, body, tok=EDITOR, name="edit": gw.api(  # noqa: E731
        "PUT", f"/api/screens/{name}", body, token=tok
    )
    status, first, _ = put(a, {"screen": SCREEN, "base_revision": 0})
    assert status == 200
    status, second, _ = put(
        b, {"screen": {**SCREEN, "title": "B"}, "base_revision": first["revision"]}
    )
    assert status == 200
    status, conflict, _ = put(a, {"screen": SCREEN, "base_revision": first["revision"]}, token(
        "dave", screens="*"))  # fmt: skip
    assert status == 409
    assert conflict | {"reason": ""} == {"error": "conflict", "revision": second["revision"],
        "by": "alice", "at": second["at"], "deleted": False, "reason": ""}  # fmt: skip
    bad = {"title": "x", "widgets": [SCREEN["widgets"][0], {"type": "dial"}]}
    status, invalid, _ = put(a, {"screen": bad, "base_revision": second["revision"]})
    assert status == 422 and invalid["pointer"] == "/widgets/1/type", invalid
    assert put(a, {"screen": SCREEN, "base_revision": 0}, VIEWER)[0:2] == (
        403, {"error": "forbidden", "reason": "carol may not edit screen 'edit'"})  # fmt: skip
    assert put(a, {"screen": SCREEN, "base_revision": 0}, None)[0] == 403
    assert put(a, {"screen": SCREEN, "base_revision": 0}, LIMITED)[0] == 403
    assert put(a, {"screen": SCREEN, "base_revision": 0}, LIMITED, "lab-1")[0] == 200
    assert put(a, {"screen": SCREEN, "base_revision": 0}, "garbage")[0] == 401
    for name in ["a.b", "a%2Ab", "a%3E", "%C3%BC", "%2E%2E", "x" * 129]:
        status, body, _ = put(a, {"screen": SCREEN, "base_revision": 0}, EDITOR, name)
        assert status == 400 and body["error"] == "bad_name", (name, body)
    big = b"x" * (5 * 1024 * 1024 + 100 * 1024)
    assert a.api("PUT", "/api/screens/edit", data=big, token=EDITOR)[0] == 413
    widget = {"type": "label", "channels": ["ca://X"], "title": "t" * 150}
    mid = {"screen": {"title": "t", "widgets": [widget] * 15_000}, "base_revision": 0}
    status, body, _ = put(a, mid, EDITOR, "mid")  # ~2.5 MB: over NATS max_payload
    assert status == 413 and body["error"] == "too_large", body
    status, body, _ = a.api(
        "PUT", "/api/screens/edit", data=b'{"screen": "\xff"}', token=EDITOR
    )
    assert status == 400 and "UTF-8" in body["reason"]
    many = {"title": "10k", "widgets": [{"type": "nope"}] * 10_000}
    status, body, _ = put(a, {"screen": many, "base_revision": 0}, EDITOR, "many")
    assert status == 422 and body["pointer"] == "/widgets/0/type"
    assert put(a, {"screen": SCREEN}, EDITOR)[0] == 400
    assert a.api("GET", "/api/screens/edit")[1] == {**SCREEN, "title": "B"}
    assert a.api("GET", "/healthz")[0] == 200  # still serving


async def test_history_revision_and_revert(pair) -> None:
    a, b = pair
    _, one, _ = a.api("PUT", "/api/screens/hist", {"screen": SCREEN, "base_revision": 0,
                          "summary": "one"}, token=EDITOR)  # fmt: skip
    two_screen = {**SCREEN, "title": "Two"}
    _, two, _ = b.api("PUT", "/api/screens/hist", {"screen": two_screen,
                          "base_revision": one["revision"], "summary": "two"}, token=EDITOR)  # fmt: skip
    status, history, _ = a.api("GET", "/api/screens/hist/history")
    assert status == 200
    assert [(r["revision"], r["summary"], r["op"], r["by"]) for r in history["revisions"]] == [
        (two["revision"], "two", "put", "alice"), (one["revision"], "one", "put", "alice")]  # fmt: skip
    assert a.api("GET", f"/api/screens/hist/revisions/{one['revision']}")[1] == SCREEN
    assert a.api("GET", "/api/screens/hist/revisions/999999")[0] == 404
    assert a.api("GET", "/api/screens/nothing/history")[0] == 404
    status, reverted, _ = a.api("POST", "/api/screens/hist/revert", {
        "revision": one["revision"], "base_revision": two["revision"]}, token=EDITOR)  # fmt: skip
    assert status == 200
    assert a.api("GET", "/api/screens/hist")[1] == SCREEN
    status, history, _ = b.api("GET", "/api/screens/hist/history")
    assert history["revisions"][0]["summary"] == f"revert to {one['revision']}"
    stale = a.api("POST", "/api/screens/hist/revert", {
        "revision": one["revision"], "base_revision": two["revision"]}, token=EDITOR)  # fmt: skip
    assert stale[0] == 409 and stale[1]["revision"] == reverted["revision"]
    assert a.api("POST", "/api/screens/hist/revert", {"revision": 1, "base_revision": 0},
                     token=VIEWER)[0] == 403  # fmt: skip


async def test_missing_bucket_is_503_and_the_gateway_keeps_serving(
    nats_server: NatsServer,
) -> None:
    gw = start_gateway(nats_server.url, "--no-seed-screens", "--screens-bucket", "absent",
                       "--anonymous-screens", "*")  # fmt: skip
    try:
        status, body, _ = await until(
            lambda: (r := gw.api("GET", "/api/screens"))[0] == 503 and r
        )
        assert (
            body["error"] == "store_unavailable" and "does not exist" in body["reason"]
        )
        status, body, _ = gw.api(
            "PUT", "/api/screens/x", {"screen": SCREEN, "base_revision": 0}
        )
        assert status == 503 and body["error"] == "store_unavailable"
        assert gw.api("GET", "/healthz")[0] == 200
    finally:
        gw.stop()


async def test_channel_directory(pair, publisher: Publisher, nc: NatsClient) -> None:
    a, _ = pair
    tag = secrets.token_hex(3).upper()
    uris = [f"ca://DIR{tag}:SINE", f"ca://DIR{tag}:sine2", f"ca://DIR{tag}:COS",
            f"tango://h:1/dir{tag.lower()}/f/m/attr"]  # fmt: skip
    for uri in uris:
        await publisher.value(uri)
    await publisher.meta(uris[2], unit="rad", desc=f"cosine {tag} of the phase")
    await nc.flush()
    await asyncio.sleep(0)

    def search(prefix: str, limit: int = 50) -> dict:
        query = urllib.parse.quote(prefix)
        status, body, _ = a.api("GET", f"/api/channels?prefix={query}&limit={limit}")
        assert status == 200, body
        return body

    body = await until(
        lambda: (r := search(f"DIR{tag}:S"))["total"] == 2 and r, timeout=30
    )
    assert sorted(body["channels"]) == sorted(uris[:2])  # after the scheme, any case
    assert search(f"ca://dir{tag.lower()}:c") == {
        "channels": [uris[2]], "total": 1, "desc": [f"cosine {tag} of the phase"],
        "unit": ["rad"]}  # fmt: skip
    assert search(f"tango://h:1/DIR{tag}")["channels"] == [uris[3]]
    assert search(f"DIR{tag}", limit=1)["total"] == 4  # any part of the URI
    assert len(search(f"DIR{tag}", limit=1)["channels"]) == 1
    # by a part of the name, the description, the units: every word, ranked
    assert search(f"{tag}:sine")["channels"] == uris[:2]
    assert search(f"phase {tag}")["channels"] == [uris[2]]
    body = a.api("GET", f"/api/channels?q=rad%20{tag}")[1]
    assert body["channels"] == [uris[2]]
    assert a.api("GET", "/api/channels?limit=0")[0] == 400

    # more channels with metadata than the server answers for a wildcard (1024):
    # every description is still searched (the directory refreshes within 10 s)
    many = [f"ca://DIR{tag}:BPM{i:04d}" for i in range(1100)]
    for uri in many:
        await publisher.value(uri)
        await publisher.meta(uri, unit="mm", desc=f"monitor {tag.lower()}x")
    await nc.flush()
    body = await until(
        lambda: (r := search(f"{tag}X mm", limit=5))["total"] == 1100 and r, timeout=60
    )
    assert body["channels"] == many[:5] and body["unit"] == ["mm"] * 5


async def test_import_converts_without_storing(pair) -> None:
    a, _ = pair
    data = VACUUM_BOB.read_bytes()
    status, body, _ = a.api(
        "POST", "/api/import?file=vacuum.bob&macro=S%3DSR05", data=data
    )
    assert status == 200, body
    assert body["name"] == "vacuum" and body["screen"]["title"] == "SR05 vacuum"
    assert body["report"]["placeholders"]["embedded"] == 1
    assert a.api("GET", "/api/screens/vacuum")[0] == 404  # nothing stored
    bomb = b'<!DOCTYPE d [<!ENTITY a "x">]><display>&a;</display>'
    status, body, _ = a.api("POST", "/api/import?file=bomb.bob", data=bomb)
    assert (
        status == 422
        and body["error"] == "unconvertible"
        and "refused" in body["reason"]
    )
    status, body, _ = a.api("POST", "/api/import?file=x.bob&macro=nonsense", data=data)
    assert status == 400
    status, body, _ = a.api("POST", "/api/import?file=x.bob", data=b"<display>\n<x>")
    assert status == 422 and body["line"] == 2


async def test_nats_down_serves_the_cache_refuses_writes_and_recovers(
    tmp_path: Path,
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "kept.json").write_text(json.dumps(SCREEN))
    server = NatsServer(store_dir=tmp_path / "js").start()
    gw = start_gateway(server.url, "--screens", str(seed), "--anonymous-screens", "*")
    try:
        status, listed, _ = await until(
            lambda: (r := gw.api("GET", "/api/screens"))[0] == 200 and r
        )
        revision = listed[0]["revision"]
        server.stop()
        await until(lambda: gw.api("GET", "/readyz")[0] == 503)
        assert gw.api("GET", "/api/screens/kept")[1] == SCREEN  # from the cache
        status, body, _ = gw.api("PUT", "/api/screens/kept", {
            "screen": SCREEN, "base_revision": revision})  # fmt: skip
        assert status == 503 and body["error"] == "store_unavailable"
        server.start()  # same port, same JetStream folder
        await until(lambda: gw.api("GET", "/readyz")[0] == 200, timeout=30)
        async with GatewayClient(gw.ws_url) as viewer:
            await viewer.watch(["kept"])
            status, saved, _ = await until(lambda: (r := gw.api(
                "PUT", "/api/screens/kept", {"screen": {**SCREEN, "title": "Back"},
                "base_revision": revision}))[0] == 200 and r, timeout=30)  # fmt: skip
            frame = await viewer.wait_screen(lambda f: f["rev"] == saved["revision"])
            assert frame["name"] == "kept"
        assert gw.api("GET", "/api/screens/kept")[1]["title"] == "Back"
    finally:
        gw.stop()
        server.close()


async def test_a_hung_nats_refuses_a_write_within_the_bound(tmp_path: Path) -> None:
    """A NATS that stops answering (SIGSTOP: alive, silent) never holds a save:
    the answer is 503 within the gateway's write bound, and saves work once it
    answers again."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "kept.json").write_text(json.dumps(SCREEN))
    server = NatsServer(store_dir=tmp_path / "js").start()
    gw = start_gateway(server.url, "--screens", str(seed), "--anonymous-screens", "*")
    assert server.process is not None
    try:
        _, listed, _ = await until(
            lambda: (r := gw.api("GET", "/api/screens"))[0] == 200 and r
        )
        revision = listed[0]["revision"]
        server.process.signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            status, body, _ = await asyncio.to_thread(gw.api, "PUT", "/api/screens/kept",
                {"screen": SCREEN, "base_revision": revision})  # fmt: skip
            waited = time.monotonic() - started
        finally:
            server.process.signal(signal.SIGCONT)
        assert status == 503 and body["error"] == "store_unavailable", body
        assert "may have been stored" in body["reason"]
        assert waited < WRITE_TIMEOUT_S + 2

        def save_on_the_current_revision():  # the unanswered write may have landed
            current = int(gw.api("GET", "/api/screens/kept")[2]["x-synoptic-revision"])
            r = gw.api("PUT", "/api/screens/kept", {"screen": {**SCREEN, "title": "Back"},
                       "base_revision": current})  # fmt: skip
            return r[0] == 200 and r

        _, saved, _ = await until(save_on_the_current_revision, timeout=30)
        assert saved["revision"] > revision
    finally:
        gw.stop()
        server.close()


async def test_an_invalid_stored_screen_is_opened_raw_and_repaired(
    pair, nc: NatsClient, bucket_name: str
) -> None:
    """A value another tool wrote straight into the bucket, failing the schema:
    GET says where (422, pointer, revision); its raw JSON is readable for
    repair; a valid save on that revision replaces it."""
    b = pair[1]
    kv = await nc.jetstream().key_value(bucket_name)
    broken = {"title": "Broken", "widgets": [SCREEN["widgets"][0], {"type": "dial"}]}
    revision = await kv.put("broken", json.dumps(broken).encode())
    status, body, _ = await until(
        lambda: (r := b.api("GET", "/api/screens/broken", token=EDITOR))[0] != 404 and r
    )
    assert status == 422, body
    assert body | {"reason": ""} == {"error": "invalid", "pointer": "/widgets/1/type",
        "revision": revision, "editable": True, "reason": ""}  # fmt: skip
    assert b.api("GET", "/api/screens/broken", token=VIEWER)[1]["editable"] is False
    status, raw, headers = b.api("GET", f"/api/screens/broken/revisions/{revision}")
    assert status == 200 and raw == broken
    assert int(headers["x-synoptic-revision"]) == revision
    still = {
        "screen": {**broken, "widgets": [{"type": "nope"}]},
        "base_revision": revision,
    }
    status, body, _ = b.api("PUT", "/api/screens/broken", still, token=EDITOR)
    assert status == 422 and body["pointer"] == "/widgets/0/type"  # validated as usual
    fixed = {"title": "Broken", "widgets": [SCREEN["widgets"][0]]}
    status, saved, _ = b.api("PUT", "/api/screens/broken",
                             {"screen": fixed, "base_revision": revision}, token=EDITOR)  # fmt: skip
    assert status == 200 and saved["revision"] > revision
    for gw in pair:
        await until(lambda gw=gw: gw.api("GET", "/api/screens/broken")[1] == fixed)
