"""``POST /api/sites/import`` on a real gateway and nats-server: a zipped
display set becomes linked screens with its report, for users with the edit
grant only (screens outside the grant forbidden); a dry run writes nothing;
importing it again writes nothing unchanged; a hostile zip is refused whole."""

from __future__ import annotations

import io
import secrets
import time
import zipfile
from collections.abc import Iterator

import jwt
import pytest

from synoptic_bus.natsserver import NatsServer
from synoptic_gateway.testing import GatewayProc, start_gateway

pytestmark = pytest.mark.system

SECRET = "test-secret-of-at-least-32-bytes-long!"


def token(sub: str, **claims: object) -> str:
    return jwt.encode({"sub": sub, "exp": int(time.time()) + 86400, **claims}, SECRET)


EDITOR = token("alice", screens=["*"])
LAB_ONLY = token("bob", screens=["lab-*"])
VIEWER = token("carol")


def display(body: str, macros: str = "") -> str:
    return (f'<display version="2.0.0"><macros>{macros}</macros><width>300</width>'
            f"<height>200</height>{body}</display>")  # fmt: skip


def button(path: str, macros: str) -> str:
    return (f'<widget type="action_button"><text>{path}</text><actions><action '
            f'type="open_display"><file>{path}</file><macros>{macros}</macros>'
            "</action></actions></widget>")  # fmt: skip


def zipped(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return buf.getvalue()


RING = {
    "ring/main.bob": display(button("sect/sector.bob", "<S>01</S>"), "<P>SR:</P>"),
    "ring/sect/sector.bob": display(
        '<widget type="textupdate"><pv_name>$(P)$(S):I</pv_name></widget>'
        + button("../dev.bob", "<D>q1</D>")
    ),
    "ring/dev.bob": display(
        '<widget type="textupdate"><pv_name>$(P)$(D)</pv_name></widget>'
    ),
    "ring/README.md": "not a display",
}


def gw_ready(gateway: GatewayProc) -> bool:
    return gateway.api("GET", "/api/screens", token=EDITOR)[0] == 200


@pytest.fixture(scope="module")
def gw(nats_server: NatsServer) -> Iterator[GatewayProc]:
    gateway = start_gateway(nats_server.url, "--jwt-secret", SECRET, "--allow-anonymous",
                            "--screens-bucket", f"site{secrets.token_hex(3)}")  # fmt: skip
    try:
        deadline = time.monotonic() + 30  # the screens bucket opens in the background
        while gw_ready(gateway) is False and time.monotonic() < deadline:
            time.sleep(0.05)
        yield gateway
    finally:
        gateway.stop()


def test_a_zipped_set_is_imported_as_linked_screens_for_editors_only(
    gw: GatewayProc,
) -> None:
    data = zipped(RING)
    status, body, _ = gw.api("POST", "/api/sites/import", data=data, token=VIEWER)
    assert status == 403 and body["error"] == "forbidden"
    status, body, _ = gw.api("POST", "/api/sites/import", data=data, token=LAB_ONLY)
    assert status == 200 and body["counts"] == {"forbidden": 3}, body
    assert gw.api("GET", "/api/screens/ring--main", token=EDITOR)[0] == 404

    status, body, _ = gw.api("POST", "/api/sites/import?dry_run=1", data=data,
                             token=EDITOR)  # fmt: skip
    assert status == 200 and body["dry_run"] and body["counts"] == {"created": 3}
    assert gw.api("GET", "/api/screens/ring--main", token=EDITOR)[0] == 404

    status, body, _ = gw.api("POST", "/api/sites/import", data=data, token=EDITOR)
    assert status == 200, body
    assert body["set"] == "ring" and body["home"] == "ring--main"
    assert body["counts"] == {"created": 3} and body["ignored"] == ["ring/README.md"]
    report = body["report"]
    assert report["links"]["resolved"] == 2 and report["refused"] == []
    status, main, _ = gw.api("GET", "/api/screens/ring--main", token=EDITOR)
    assert status == 200
    assert main["widgets"][0]["options"] == {"screen": "ring--sect--sector",
                                             "macros": {"P": "SR:", "S": "01"}}  # fmt: skip
    assert main["source"]["home"] is True
    status, history, _ = gw.api("GET", "/api/screens/ring--dev/history", token=EDITOR)
    assert history["revisions"][0]["by"] == "alice"

    status, body, _ = gw.api("POST", "/api/sites/import", data=data, token=EDITOR)
    assert body["counts"] == {"unchanged": 3}
    listed = {e["name"]: e for e in gw.api("GET", "/api/screens", token=EDITOR)[1]}
    assert (
        listed["ring--main"]["home"] is True and listed["ring--main"]["set"] == "ring"
    )
    assert listed["ring--sect--sector"]["file"] == "sect/sector.bob"
    assert "home" not in listed["ring--sect--sector"]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (zipped({"../escape.bob": "<display/>"}), "leaves the set"),
        (zipped({"a.bob": "\0" * (4 * 1024 * 1024)}), "zip bomb"),
        (b"not a zip at all", "not a zip"),
    ],
)
def test_a_hostile_or_broken_zip_is_refused_whole(
    gw: GatewayProc, data: bytes, why: str
) -> None:
    status, body, _ = gw.api("POST", "/api/sites/import", data=data, token=EDITOR)
    assert status == 422 and body["error"] == "unreadable" and why in body["reason"]
