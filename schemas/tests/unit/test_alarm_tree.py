"""The alarm tree: validation with the JSON pointer, files with the line, storage."""

from __future__ import annotations

import json
import zlib

import pytest

from synoptic_schemas.alarmtree import (
    MAX_TREE_BYTES,
    AlarmTreeError,
    check_tree,
    decode_stored,
    dump_tree_file,
    encode_stored,
    listed,
    parse_tree_file,
    walk,
)

TREE_YAML = b"""\
# the demo plant
name: Plant
guidance: Call the control room.
children:
  - name: Vacuum
    latch: false
    screens:
      - {title: Vacuum overview, screen: epics-demo, macros: {CELL: "05"}}
    channels:
      - ca://VAC:P1
      - ch: ca://VAC:P2
        desc: ion pump 2
        latch: true
        guidance: Check the controller.
    children:
      - name: Gauges
        patterns: ["ca://VAC:G*"]
  - name: Diagnostics
    enabled: false
    channels: ["TANGO://Host:10000/SR/DCCT/1/Current"]
  - name: RF
    channels: ["tango://host/sr/rf/1/Power"]
    screens:
      - {title: Vendor page, url: "https://rf.example/status"}
"""


def test_a_tree_file_is_read_checked_and_normalised() -> None:
    tree = parse_tree_file(TREE_YAML)
    paths = [path for path, *_ in walk(tree)]
    assert paths == ["Plant", "Plant/Vacuum", "Plant/Vacuum/Gauges",
                     "Plant/Diagnostics", "Plant/RF"]  # fmt: skip
    entries = list(listed(tree))
    assert [(e.uri, e.area, e.latch, e.desc) for e in entries] == [
        ("ca://VAC:P1", "Plant/Vacuum", False, ""),
        ("ca://VAC:P2", "Plant/Vacuum", True, "ion pump 2"),
        # Diagnostics is disabled: its channel raises no alarm
        ("tango://host:10000/sr/rf/1/power", "Plant/RF", True, ""),
    ]
    assert tree["children"][1]["channels"] == ["tango://host:10000/sr/dcct/1/current"]
    assert parse_tree_file(dump_tree_file(tree).encode()) == tree
    assert parse_tree_file(json.dumps(tree).encode()) == tree  # JSON files too


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (b"name: A\nchildren:\n  - name: B\n    colour: red\n", 3, "colour"),
        (b"name: A\nchannels:\n  - ca://X\n  - nope://Y\n", 4, "unknown scheme"),
        (
            b"name: A\nchannels:\n  - ca://X\nchildren:\n  - name: B\n"
            b"    channels: [ca://X]\n",
            6,
            "listed twice",
        ),
        (
            b"name: A\nchildren:\n  - name: B\n  - name: C\n  - name: B\n",
            5,
            "named 'B'",
        ),
        (b"name: A\npatterns:\n  - 'SR:*'\n", 3, "must start with a scheme"),
        (b"name: A/B\n", 1, "does not match"),
        (b"name: A\nchildren: [\n", 3, "expected"),
        (b"name: &x A\nguidance: *x\n", 1, "aliases are not allowed"),
        (
            b"name: A\nscreens:\n  - {title: T, screen: s, url: 'https://x'}\n",
            3,
            "valid under",
        ),
        (b"\n\n\xff\n", 3, "not UTF-8"),
        (b"- just\n- a list\n", 1, "is an object"),
    ],
)
def test_a_malformed_file_is_refused_with_its_line(
    text: bytes, line: int, reason: str
) -> None:
    with pytest.raises(AlarmTreeError) as info:
        parse_tree_file(text)
    assert info.value.line == line, str(info.value)
    assert reason in str(info.value)
    assert str(info.value).startswith(f"invalid alarm tree line {line}: ")


def test_deep_nesting_and_huge_files_are_refused_before_anything_is_built() -> None:
    deep = b"name: A\nchildren:\n" + b"".join(
        b"  " * (2 * i) + b"- name: N\n" + b"  " * (2 * i + 1) + b"children:\n"
        for i in range(40)
    )
    with pytest.raises(AlarmTreeError, match="nested deeper than 32 nodes"):
        parse_tree_file(deep)
    with pytest.raises(AlarmTreeError, match="exceeds"):
        parse_tree_file(b" " * (MAX_TREE_BYTES + 1))
    nested: dict = {"name": "A"}
    for _ in range(100):
        nested = {"name": "A", "children": [nested]}
    with pytest.raises(AlarmTreeError, match="nested deeper"):
        check_tree(nested)


def test_objects_name_the_json_pointer() -> None:
    with pytest.raises(AlarmTreeError) as info:
        check_tree({"name": "A", "children": [{"name": "B", "channels": [3]}]})
    assert info.value.pointer == "/children/0/channels/0"
    with pytest.raises(AlarmTreeError, match="reserved"):
        check_tree({"name": "A", "_rev": {}})


def test_the_stored_form_is_compressed_and_round_trips() -> None:
    tree = check_tree({
        "name": "Bench",
        "channels": [f"ca://BENCH:CH:{i:06d}" for i in range(100_000)],
    })  # fmt: skip
    data = encode_stored(tree, {"by": "alice", "at": "now", "summary": "import"})
    assert len(data) < 600_000  # ~2.3 MB of JSON
    back, rev = decode_stored(data)
    assert back == tree and rev["by"] == "alice"
    with pytest.raises(AlarmTreeError, match="not zlib"):
        decode_stored(b"{}")
    bomb = zlib.compress(b" " * (MAX_TREE_BYTES + 10))
    with pytest.raises(AlarmTreeError, match="exceeds"):
        decode_stored(bomb)
