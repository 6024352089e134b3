"""The screens bucket against a real nats-server: writes, conflicts, history,
delete markers, seeding, and bad input."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path

import pytest

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.natsserver import NatsServer
from synoptic_bus.procs import free_port
from synoptic_bus.screens import (
    ConflictError,
    ScreenBucket,
    ScreenNotFoundError,
    ScreensConfig,
    StoreUnavailableError,
)
from synoptic_schemas.screens import (
    ScreenInvalidError,
    ScreenNameError,
    ScreenTooLargeError,
)

pytestmark = pytest.mark.system

SCREEN = {"title": "One", "widgets": [{"type": "label", "channels": ["ca://A"]}]}


@pytest.fixture
async def bucket(nc: NatsClient) -> ScreenBucket:
    return await ScreenBucket.ensure(nc, ScreensConfig(f"t{secrets.token_hex(4)}"))


async def test_bucket_layout(nc: NatsClient, bucket: ScreenBucket) -> None:
    info = await nc.jetstream().stream_info(bucket.config.stream)
    assert info.config.max_msgs_per_subject == 64
    assert info.config.storage == "file"
    again = await ScreenBucket.ensure(nc, bucket.config)  # idempotent
    assert again.config.stream == bucket.config.stream


async def test_write_conflict_history_revert_delete(bucket: ScreenBucket) -> None:
    first = await bucket.put("main", SCREEN, 0, "alice", "first")
    with pytest.raises(ConflictError) as created_twice:
        await bucket.put("main", SCREEN, 0, "bob")
    assert created_twice.value.revision == first.revision
    assert created_twice.value.rev.by == "alice"
    second = await bucket.put("main", {**SCREEN, "title": "Two"}, first.revision, "bob")
    with pytest.raises(ConflictError) as stale:
        await bucket.put("main", {**SCREEN, "title": "Three"}, first.revision, "carol")
    assert (stale.value.revision, stale.value.rev.by) == (second.revision, "bob")
    assert stale.value.rev.at == second.rev.at
    current = await bucket.get("main")
    assert current.screen == {**SCREEN, "title": "Two"} and current.rev.by == "bob"
    assert (await bucket.get("main", first.revision)).screen == SCREEN
    reverted = await bucket.revert("main", first.revision, second.revision, "dave")
    assert reverted.rev.summary == f"revert to {first.revision}"
    assert (await bucket.get("main")).screen == SCREEN
    gone = await bucket.delete("main", reverted.revision, "erin")
    with pytest.raises(ScreenNotFoundError):
        await bucket.get("main")
    history = await bucket.history("main")
    assert [(e.revision, e.deleted, e.rev.by) for e in history] == [
        (gone.revision, True, "erin"),
        (reverted.revision, False, "dave"),
        (second.revision, False, "bob"),
        (first.revision, False, "alice"),
    ]
    with pytest.raises(ScreenNotFoundError):
        await bucket.delete("main", gone.revision, "erin")
    again = await bucket.put("main", SCREEN, 0, "frank")  # re-created after delete
    assert again.revision > gone.revision
    assert [e.name for e in await bucket.entries()] == ["main"]


async def test_a_listing_right_after_writes_has_every_screen(
    bucket: ScreenBucket,
) -> None:
    """An empty bucket lists nothing at once; after each write the listing has
    every screen (the watch's end-of-current marker can come before the entries,
    ``synoptic_bus.kvwatch``)."""
    assert await bucket.entries(timeout=5) == []
    names: list[str] = []
    for index in range(30):
        names.append(f"s{index:02d}")
        await bucket.put(names[-1], SCREEN, 0, "op")
        assert [e.name for e in await bucket.entries()] == names


async def test_invalid_writes_store_nothing(bucket: ScreenBucket) -> None:
    bad = {"title": "x", "widgets": [SCREEN["widgets"][0]] * 3 + [{"type": "nope"}]}
    with pytest.raises(ScreenInvalidError) as invalid:
        await bucket.put("bad", bad, 0, "alice")
    assert invalid.value.pointer == "/widgets/3/type"
    assert "nope" in invalid.value.reason
    for screen in ([], "text", None, {**SCREEN, "_rev": {}}):
        with pytest.raises(ScreenInvalidError):
            await bucket.put("bad", screen, 0, "alice")
    for name in ["a.b", "a*", "a>", "..", "ü", "", "a/b", "x" * 129, " a"]:
        with pytest.raises(ScreenNameError):
            await bucket.put(name, SCREEN, 0, "alice")
    assert await bucket.history("bad") == []
    assert await bucket.latest("bad") is None


async def test_large_screens(bucket: ScreenBucket) -> None:
    widget = {"type": "label", "channels": ["ca://DEMO:CNT:00001"], "w": 1}
    many = {"title": "10k", "widgets": [widget] * 10_000}
    entry = await bucket.put("many", many, 0, "alice")  # ~500 KB: fits max_payload
    assert len((await bucket.get("many")).screen["widgets"]) == 10_000  # type: ignore[index]
    titled = {**widget, "title": "t" * 150}
    huge = {"title": "huge", "widgets": [titled] * 15_000}  # > 1 MiB, < 5 MiB
    with pytest.raises(ScreenTooLargeError, match="exceeds the limit"):
        await bucket.put("many", huge, entry.revision, "alice")
    assert (await bucket.get("many")).revision == entry.revision


async def test_seeding_is_idempotent_and_keeps_deletes(
    bucket: ScreenBucket, tmp_path: Path
) -> None:
    (tmp_path / "a.json").write_text(json.dumps(SCREEN))
    (tmp_path / "b.json").write_text(json.dumps({"title": "b", "widgets": []}))
    (tmp_path / "broken.json").write_bytes(b'{"title": "\xff", "widgets": []}')
    (tmp_path / "bad.name.json").write_text(json.dumps(SCREEN))
    report = await bucket.seed_folder(tmp_path)
    assert report.created == ["a", "b"]
    assert sorted(report.refused) == ["bad.name.json", "broken.json"]
    assert "UTF-8" in report.refused["broken.json"]
    edited = await bucket.put(
        "a", {**SCREEN, "title": "edited"}, 0 + (await bucket.get("a")).revision, "x"
    )
    b = await bucket.get("b")
    await bucket.delete("b", b.revision, "x")
    again = await bucket.seed_folder(tmp_path)
    assert again.created == [] and again.present == ["a", "b"]
    assert (await bucket.get("a")).revision == edited.revision
    with pytest.raises(ScreenNotFoundError):
        await bucket.get("b")  # a deleted screen is not seeded back


async def test_missing_bucket_and_nats_down(nc: NatsClient) -> None:
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        await ScreenBucket.open(nc, ScreensConfig("absent"))
    server = NatsServer().start()
    client = await connect(server.url, name="t", retry_on_failed_connect=False)
    try:
        bucket = await ScreenBucket.ensure(client, ScreensConfig("down"))
        server.stop()
        with pytest.raises(StoreUnavailableError):
            await bucket.put("x", SCREEN, 0, "alice")
    finally:
        await client.close()
        server.close()
    assert free_port()  # the fixture's server is untouched


async def test_a_bucket_removed_under_an_open_handle_refuses_writes_clearly(
    nc: NatsClient,
) -> None:
    name = f"gone{secrets.token_hex(3)}"
    bucket = await ScreenBucket.ensure(nc, ScreensConfig(name))
    await nc.jetstream().delete_key_value(name)
    with pytest.raises(StoreUnavailableError, match="no stream answers"):
        await bucket.put("x", SCREEN, 0, "alice")


async def test_history_is_whole_on_every_read_and_keeps_only_the_kept(
    nc: NatsClient,
) -> None:
    """Many reads at once each see every kept revision (never an empty answer
    while revisions exist), and a bucket keeping 3 revisions returns 3."""
    bucket = await ScreenBucket.ensure(
        nc, ScreensConfig(f"hist{secrets.token_hex(3)}", history=3)
    )
    revision = 0
    for n in range(5):
        revision = (await bucket.put("h", {**SCREEN, "title": f"t{n}"}, revision,
                                     "x")).revision  # fmt: skip
    reads = await asyncio.gather(*(bucket.history("h") for _ in range(50)))
    for history in reads:
        assert [e.rev.by for e in history] == ["x"] * 3
        assert history[0].revision == revision
        assert [e.screen["title"] for e in history if e.screen] == ["t4", "t3", "t2"]
