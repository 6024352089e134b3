"""A gateway's playbacks share its frame rate: each an equal part of the total,
never more than a playback's own rate."""

from synoptic_gateway.playback import PlaybackShare


def test_each_gets_an_equal_part_of_the_total_up_to_its_own_rate() -> None:
    share = PlaybackShare(30.0, 240.0)
    assert share.fps() == 30.0  # none playing yet: the one asking gets its rate
    for playing, fps in ((1, 30.0), (8, 30.0), (16, 15.0), (20, 12.0)):
        share.playing = playing
        assert share.fps() == fps


def test_no_total_leaves_each_its_own_rate() -> None:
    share = PlaybackShare(30.0, 0.0)
    share.playing = 100
    assert share.fps() == 30.0
