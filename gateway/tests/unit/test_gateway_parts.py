"""Small parts without servers: rate bucket, histogram, screens folder, settings,
the demo component."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from synoptic_bus.demo import DemoContext
from synoptic_bus.screens import Entry
from synoptic_gateway.channel_state import ChannelState
from synoptic_gateway.demo import components
from synoptic_gateway.directory import DirectoryIndex
from synoptic_gateway.limits import TokenBucket
from synoptic_gateway.metrics import Histogram, Stats, make_registry, render
from synoptic_gateway.screens import ScreenWatchers, cache_entry
from synoptic_gateway.settings import Settings
from synoptic_schemas import ContractError, Subjects, encode, frames, parse_channel
from synoptic_schemas.screens import RevInfo

SCREEN = {"title": "Fixture", "widgets": []}


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=10, burst=5, clock=lambda: now[0])
    assert [bucket.take() for _ in range(6)] == [True] * 5 + [False]
    now[0] += 0.25  # 2.5 tokens
    assert [bucket.take() for _ in range(3)] == [True, True, False]
    now[0] += 100
    assert sum(bucket.take() for _ in range(10)) == 5  # never more than the burst


def test_histogram_buckets_are_cumulative() -> None:
    hist = Histogram(bounds=(0.01, 0.1))
    for value in (0.005, 0.05, 0.05, 3.0):
        hist.observe(value)
    assert hist.buckets() == [("0.01", 1), ("0.1", 3), ("+Inf", 4)]
    assert hist.total == pytest.approx(3.105)


def test_metrics_render_counters_gauges_and_histograms() -> None:
    stats = Stats(updates_in=7)
    stats.latency.observe(0.003)
    text = render(make_registry(stats, lambda: {"connections": 2})).decode()
    assert "synoptic_gateway_updates_in_total 7.0" in text
    assert "synoptic_gateway_connections 2.0" in text
    assert 'synoptic_gateway_latency_seconds_bucket{le="0.005"} 1.0' in text


def test_screen_cache_entries_are_validated_once() -> None:
    good = cache_entry(Entry("good", 3, SCREEN, RevInfo("a", "t")))
    assert good.error is None and json.loads(good.body) == SCREEN
    assert good.etag == cache_entry(Entry("x", 9, SCREEN, RevInfo())).etag
    bad = cache_entry(Entry("bad", 4, {"widgets": "nope"}, RevInfo()))
    assert bad.error is not None and bad.error.pointer == ""
    for validated in (False, True):  # a delete marker, seen or written here
        gone = cache_entry(Entry("gone", 5, None, RevInfo(), True), validated=validated)
        assert gone.body == b"" and gone.error is None
    trusted = cache_entry(Entry("t", 6, SCREEN, RevInfo()), validated=True)
    assert trusted.body == good.body


def test_screen_watchers_tell_exactly_the_sockets_watching_a_name() -> None:
    class Sock:
        def __init__(self) -> None:
            self.frames: list[dict] = []

        def send_frame(self, frame: dict) -> None:
            self.frames.append(frame)

    a, b = Sock(), Sock()
    watchers = ScreenWatchers()
    watchers.set(a, frozenset({"one", "two"}))
    watchers.set(b, frozenset({"two"}))
    assert watchers.notify(Entry("two", 5, None, RevInfo("x", "t"), True)) == 2
    assert a.frames == b.frames == [{"op": "screen", "name": "two", "rev": 5,
                                     "by": "x", "at": "t", "deleted": True}]  # fmt: skip
    watchers.set(a, frozenset())
    watchers.drop(b)
    assert watchers.notify(Entry("two", 6, SCREEN, RevInfo())) == 0
    assert watchers.notify(Entry("one", 6, SCREEN, RevInfo())) == 0


def test_channel_directory_prefix_search() -> None:
    uris = [f"ca://SR:BPM{i:05d}:X" for i in range(1000)] + [
        "ca://CA:ODD", "tango://h:1/sr/d/1/current", "pva://SR:IMG"]  # fmt: skip
    index = DirectoryIndex(uris + uris[:10])
    assert len(index) == len(uris)
    assert index.search("sr:bpm0001", 50) == (
        [f"ca://SR:BPM{i:05d}:X" for i in range(10, 20)], 10)  # fmt: skip
    found, total = index.search("SR:", 5)
    assert total == 1001 and found[0] == "pva://SR:IMG"  # the shortest name first
    assert index.search("ca://ca:", 5) == (["ca://CA:ODD"], 1)
    assert index.search("TANGO://H:1/SR", 5)[0] == ["tango://h:1/sr/d/1/current"]
    assert index.search("zzz", 5) == ([], 0)
    assert index.search("", 3)[1] == len(uris)


DEMO = {
    "ca://DEMO:SINE": ("Sine wave, 0.1 Hz", "mm"),
    "ca://DEMO:SINE:AMPL": ("Amplitude of the sine", "mm"),
    "ca://DEMO:COSINE": ("Cosine wave", "mm"),
    "ca://DEMO:NOISE": ("Gaussian noise", "V"),
    "ca://DEMO:TEMP": ("Cryostat temperature", "K"),
    "ca://SINE": ("", ""),
    "tango://h:10000/sys/tg_test/1/double_scalar": ("A double", "mA"),
}


def test_channel_directory_finds_any_part_of_the_name_description_and_units() -> None:
    index = DirectoryIndex(list(DEMO), DEMO)
    # "SINE" names no channel's start but three channels' parts or insides
    found, total = index.search("SINE", 10)
    assert total == 4
    assert found == [
        "ca://SINE",  # the whole name
        "ca://DEMO:SINE",  # a part of the name, the shorter first
        "ca://DEMO:SINE:AMPL",
        "ca://DEMO:COSINE",  # inside a part
    ]
    assert index.search("temperature", 5) == (["ca://DEMO:TEMP"], 1)
    assert index.search("K", 5)[0][-1] == "ca://DEMO:TEMP"  # by its units, after names
    assert index.search("scalar", 5)[0] == [
        "tango://h:10000/sys/tg_test/1/double_scalar"]  # fmt: skip
    # every word must match, each anywhere: name, description or units
    assert index.search("demo wave", 5) == (["ca://DEMO:SINE", "ca://DEMO:COSINE"], 2)
    assert index.search("noise V", 5) == (["ca://DEMO:NOISE"], 1)
    assert index.details("ca://DEMO:TEMP") == ("Cryostat temperature", "K")
    assert index.details("ca://NONE") == ("", "")


def test_channel_directory_ranks_many_matches_by_rank_then_length() -> None:
    uris = [f"ca://SR{i:05d}:SINE:X" for i in range(3000)] + [
        "ca://SINE",
        "ca://A:SINE",
    ]
    index = DirectoryIndex(uris, {u: ("a sine", "mm") for u in uris})
    found, total = index.search("sine", 3)  # more matches than four times the limit
    assert total == len(uris)
    assert found == ["ca://SINE", "ca://A:SINE", "ca://SR00000:SINE:X"]
    assert index.search("mm", 2) == (["ca://SINE", "ca://A:SINE"], len(uris))


def test_settings_announce_limits_and_keep_uvicorn_above_them() -> None:
    settings = Settings(max_frame_bytes=1000)
    assert settings.limits()["frame_bytes"] == 1000
    assert settings.ws_max_size > 1000
    assert settings.ws_per_message_deflate is False
    assert Settings(jwt_secret="x").anonymous_allowed is False


def test_demo_runs_one_gateway_on_the_http_port(tmp_path: Path) -> None:
    ctx = DemoContext("nats://127.0.0.1:4", tmp_path, 8123, idp_port=8765)
    (proc,) = components(ctx)
    argv = proc.argv
    assert argv[argv.index("--port") + 1] == "8123"
    assert argv[argv.index("--nats") + 1] == "nats://127.0.0.1:4"
    # anonymous viewers read; people sign in with the demo's provider to write
    assert "--allow-anonymous" in argv and "--anonymous-screens" not in argv
    assert (
        argv[argv.index("--oidc-issuer") + 1] == "http://127.0.0.1:8765/realms/synoptic"
    )
    assert argv[argv.index("--roles") + 1].endswith("docker/config/roles.toml")
    assert "8123" in proc.banner and proc.name == "gateway"


def test_registering_the_gateway_command_imports_nothing_heavy() -> None:
    """Every ``synoptic`` command registers ``gateway``: that must not import the
    web stack (it cost ~1 s per command)."""
    code = (
        "import argparse, sys\n"
        "from synoptic_gateway.cli import register\n"
        "register(argparse.ArgumentParser().add_subparsers())\n"
        "heavy = ('fastapi', 'starlette', 'uvicorn', 'uvloop', 'synoptic_gateway.app')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "uri", ["ca://SR:DCCT", "ca://a.b*c>d%e f", "tango://h:10000/sr/d-ct/1/current"]
)
def test_channel_state_subjects_are_the_contract_s(uri: str) -> None:
    channel = parse_channel(uri)
    subjects = Subjects("cs")
    state = ChannelState(channel, "cs")
    assert state.val_subject == subjects.val(channel)
    assert state.meta_subject == subjects.meta(channel)


def test_meta_order_reads_epoch_and_time_and_refuses_bad_payloads() -> None:
    meta = {"ver": 1, "dt": "f8", "shape": [], "w": False, "t": 5, "ep": 2}
    assert frames.meta_order(encode(meta)) == (2, 5)
    for bad in (
        b"\xc1",
        encode([1]),
        encode({**meta, "ver": 9}),
        encode({**meta, "t": "x"}),
    ):
        with pytest.raises(ContractError):
            frames.meta_order(bad)


def test_default_folders_come_from_the_environment_the_checkout_or_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synoptic_gateway import settings

    monkeypatch.delenv("SYNOPTIC_SCREENS_DIR", raising=False)
    monkeypatch.delenv("SYNOPTIC_UI_DIR", raising=False)
    assert settings.source_checkout() == settings.REPO_ROOT  # tests run from one
    assert Settings().screens_dir == settings.REPO_ROOT / "screens"
    assert Settings().ui_dir == settings.REPO_ROOT / "ui" / "dist"
    installed = tmp_path / "lib" / "python3.11" / "site-packages"
    installed.mkdir(parents=True)
    assert settings.source_checkout(installed) is None
    monkeypatch.setattr(settings, "source_checkout", lambda: None)
    assert Settings().screens_dir == Path("screens")  # the working directory's
    assert Settings().ui_dir == Path("ui/dist")
    monkeypatch.setenv("SYNOPTIC_SCREENS_DIR", str(tmp_path / "s"))
    monkeypatch.setenv("SYNOPTIC_UI_DIR", str(tmp_path / "u"))
    assert Settings().screens_dir == tmp_path / "s"
    assert Settings().ui_dir == tmp_path / "u"


@pytest.mark.parametrize(
    "ages",
    [
        # a small batch (one by one inside): bucket edges and beyond the last
        [0, 999_999, 1_000_000, 1_000_001, 7_500_000, 120_000_000, 9 * 10**9],
        # a burst's batch (numpy path): every bucket edge, either side of it
        [
            b + d
            for b in (0, 1_000_000, 2_000_000, 5 * 10**9, 10**10)
            for d in (-1, 0, 1)
        ]
        * 20,
        # stamps in the future, and ages beyond int64 (the loop takes those)
        [-5, -(10**12), 3_000_000] * 30 + [2**63 + 7],
        [1_700_000_000_000_000_000 + 1] * 70,  # a stamp of -1 (negative t)
    ],
)
def test_histogram_counts_a_large_batch_like_one_by_one(ages: list[int]) -> None:
    one, batch = Histogram(), Histogram()
    now = 1_700_000_000_000_000_000
    for age in ages:
        one.observe(age * 1e-9)
    batch.observe_ages(now, [now - age for age in ages])
    assert batch.counts == one.counts
    assert batch.n == one.n == len(ages)
    assert batch.total == pytest.approx(one.total)
