"""Channel URIs parse in one place, normalise, and round-trip through subjects."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from synoptic_schemas import ChannelError, Subjects, parse_channel
from synoptic_schemas.channels import MAX_NAME_CHARS
from synoptic_schemas.subjects import escape_token, unescape_token

SUBJECTS = Subjects()

# Any character but control characters; plenty of the awkward ones on purpose.
_AWKWARD = st.sampled_from(list(".*>% {}#:/\\$é€😀\u00a0\u2003\t"))
_name_char = st.one_of(
    st.characters(blacklist_categories=("Cc", "Cs")),
    _AWKWARD.filter(lambda c: c != "\t"),
)
pv_names = st.text(_name_char, min_size=1, max_size=300)
tango_part = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/"),
    min_size=1,
    max_size=60,
).filter(lambda s: s.strip() and not s.endswith("#dbase=no"))


@given(pv_names)
def test_any_pv_name_round_trips_through_its_subject(name: str) -> None:
    channel = parse_channel(f"ca://{name}")
    assert channel.name == name
    for kind in ("val", "meta", "put", "cmd", "sev"):
        subject = SUBJECTS.of(kind, channel)
        assert " " not in subject and "*" not in subject and ">" not in subject
        assert subject.count(".") == 3  # prefix.kind.proto.<one escaped token>
        assert SUBJECTS.parse(subject) == (kind, channel)


@given(st.lists(tango_part, min_size=4, max_size=4), st.integers(1, 65535))
def test_any_tango_name_round_trips_through_its_subject(
    parts: list[str], port: int
) -> None:
    uri = f"tango://Host.Example:{port}/" + "/".join(parts)
    channel = parse_channel(uri)
    assert channel.name == f"host.example:{port}/" + "/".join(p.lower() for p in parts)
    subject = SUBJECTS.val(channel)
    assert subject.count(".") == 2 + 5  # prefix.val.tango + 5 tokens
    assert SUBJECTS.parse(subject) == ("val", channel)


def test_long_names_of_200_plus_characters_round_trip() -> None:
    name = "SR:" + "X" * 250 + ".VAL"
    channel = parse_channel(f"ca://{name}")
    assert SUBJECTS.parse(SUBJECTS.val(channel))[1].name == name


@given(st.text(max_size=50))
def test_escape_is_reversible_for_any_text(text: str) -> None:
    assert unescape_token(escape_token(text)) == text


def test_tango_is_case_insensitive_and_gets_a_default_port() -> None:
    a = parse_channel("tango://LocalHost/Sys/TG_Test/1/Double_Scalar")
    b = parse_channel("TANGO://localhost:10000/sys/tg_test/1/double_scalar#dbase=no")
    assert a == b
    assert a.uri == "tango://localhost:10000/sys/tg_test/1/double_scalar"
    assert a.tango_parts == ("localhost:10000", "sys", "tg_test", "1", "double_scalar")
    assert a.tango_device == "localhost:10000/sys/tg_test/1"


def test_wildcards_select_tango_families() -> None:
    channel = parse_channel("tango://h:1/sr/dcct/1/current")
    assert SUBJECTS.val(channel) == "cs.val.tango.h:1.sr.dcct.1.current"
    assert SUBJECTS.sev(channel) == "cs.sev.tango.h:1.sr.dcct.1.current"
    assert Subjects("site-a.cs").val(channel).startswith("site-a.cs.val.tango.")


def test_epics_names_stay_case_sensitive() -> None:
    assert parse_channel("ca://Sr:Dcct").name == "Sr:Dcct"
    assert parse_channel("CA://X").uri == "ca://X"


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("SR:DCCT", "no scheme"),
        ("http://x", "unknown scheme 'http'"),
        ("ca://", "empty channel name"),
        ("ca://a\nb", "control character"),
        (f"ca://{'x' * (MAX_NAME_CHARS + 1)}", "exceeds"),
        ("tango://h:1/a/b/c", "expected 4"),
        ("tango://h:1/a/b/c/d/e", "expected 4"),
        ("tango://h:1/a//c/d", "empty or blank part"),
        ("tango://h:x/a/b/c/d", "HOST:PORT"),
        ("tango://h:70000/a/b/c/d", "HOST:PORT"),
        (42, "must be a string"),
    ],
)
def test_invalid_uris_raise_one_error_type_naming_the_problem(
    uri: object, problem: str
) -> None:
    with pytest.raises(ChannelError, match=problem):
        parse_channel(uri)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "subject",
    [
        "other.val.ca.X",
        "cs.val",
        "cs.nope.ca.X",
        "cs.val.zz.X",
        "cs.val.ca.a.b",
        "cs.val.ca.%FF",
    ],
)
def test_subjects_that_name_no_channel_are_rejected(subject: str) -> None:
    with pytest.raises(ChannelError):
        SUBJECTS.parse(subject)


def test_prefix_must_be_a_valid_subject_prefix() -> None:
    with pytest.raises(ValueError, match="invalid subject prefix"):
        Subjects("bad prefix")


@given(
    st.lists(pv_names, max_size=5),
    st.lists(st.lists(tango_part, min_size=4, max_size=4), max_size=3),
)
def test_many_subjects_map_to_the_uris_parse_gives(
    pvs: list[str], devices: list[list[str]]
) -> None:
    channels = [parse_channel(f"ca://{n}") for n in pvs]
    channels += [parse_channel("tango://h:1/" + "/".join(p)) for p in devices]
    subjects = [SUBJECTS.val(c) for c in channels]
    assert SUBJECTS.uris(subjects) == [c.uri for c in channels]
    metas = [SUBJECTS.meta(c) for c in channels]
    assert SUBJECTS.uris(metas, "meta") == [c.uri for c in channels]
    assert SUBJECTS.uris(metas) == []  # another kind: skipped


def test_many_subjects_skip_those_that_name_no_channel() -> None:
    bad = ["other.val.ca.X", "cs.val", "cs.val.zz.X", "cs.val.ca.a.b", "cs.val.ca.%FF"]
    assert SUBJECTS.uris([*bad, "cs.val.ca.DEMO:SINE", "cs.val.ca." + "X" * 1001]) == [
        "ca://DEMO:SINE"
    ]
