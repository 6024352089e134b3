"""Which screens show a channel: channels found anywhere a screen names one,
searched by words, ranked, bounded."""

from __future__ import annotations

from synoptic_gateway.screenindex import SHOWN, ScreenChannels, channels_of, search


def screen(*channels: str, **extra: object) -> dict[str, object]:
    return {"title": "t", "widgets": [{"type": "label", "channels": [c]} for c in channels],
            **extra}  # fmt: skip


def test_channels_are_found_in_widgets_rules_actions_and_tabs_once_each() -> None:
    s = {
        "title": "t",
        "source": {"set": "s", "file": "f.bob", "channel": "ca://NOT"},
        "macros": {"channel": "ca://NOR"},
        "widgets": [
            {"type": "label", "channels": ["ca://A", "ca://B"],
             "rules": [{"channel": "ca://R", "set": {"visible": False}}],
             "actions": [{"type": "write", "channel": "ca://W", "value": 1}]},
            {"type": "tabs", "options": {"tabs": [{"title": "x", "widgets": [
                {"type": "label", "channels": ["ca://IN", "ca://A"]}]}]}},
        ],
    }  # fmt: skip
    assert sorted(channels_of(s)) == ["ca://A", "ca://B", "ca://IN", "ca://R", "ca://W"]


def index(**screens: dict[str, object]) -> list[tuple[str, ScreenChannels]]:
    return [(name, ScreenChannels.of(s)) for name, s in screens.items()]


def test_the_screen_showing_the_channel_itself_comes_first_then_its_start() -> None:
    found, total = search(index(
        inside=screen("tango://h:1/sr/ring:current/x"),
        prefix=screen("ca://RING:CURRENT:MAX", "pva://RING:CURRENT:MIN"),
        other=screen("ca://LINAC:V"),
        exact=screen("ca://RING:CURRENT"),
        alpha=screen("ca://RING:CURRENT"),
    ), "ring:current", 10)  # fmt: skip
    assert total == 4
    assert [f["name"] for f in found] == ["alpha", "exact", "prefix", "inside"]
    assert found[2] == {"name": "prefix", "matches": 2,
                        "channels": ["ca://RING:CURRENT:MAX", "pva://RING:CURRENT:MIN"]}  # fmt: skip


def test_every_word_in_one_channel_case_and_scheme_ignored() -> None:
    screens = index(
        a=screen("ca://SR:BPM01:X", "ca://SR:CURRENT"), b=screen("ca://SR:BPM02:Y")
    )
    assert [f["name"] for f in search(screens, "bpm x", 10)[0]] == ["a"]
    assert [f["name"] for f in search(screens, "CA://sr:bpm", 10)[0]] == ["a", "b"]
    assert search(screens, "current bpm", 10) == ([], 0)
    assert search(screens, "   ", 10) == ([], 0)


def test_the_answer_is_bounded_and_counts_all() -> None:
    many = index(**{f"s{i:03d}": screen(*(f"ca://DEV{i}:CH{k}" for k in range(20)))
                    for i in range(300)})  # fmt: skip
    found, total = search(many, "dev", 7)
    assert total == 300 and len(found) == 7
    assert all(len(f["channels"]) == SHOWN and f["matches"] == 20 for f in found)
