"""The alarm tree: areas and systems holding channels, with guidance and screens.

Pure functions, no I/O. A tree is a JSON object (``json/alarm-tree.schema.json``):
a root node whose ``children`` nest; each node lists ``channels`` (URIs, or
objects with per-channel options) and ``patterns`` (shell-style globs over
normalised URIs). :func:`check_tree` validates one and returns it normalised
(channel URIs as :func:`~synoptic_schemas.channels.parse_channel` writes them),
or raises :class:`AlarmTreeError` with the JSON pointer of the first problem;
:func:`parse_tree_file` reads a YAML or JSON file the same way and names the
line. The tree is stored in a key-value bucket (:func:`encode_stored`,
docs/bus.md).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import jsonschema_rs
import yaml

from synoptic_schemas.channels import PROTOCOLS, parse_channel
from synoptic_schemas.errors import ChannelError, ContractError
from synoptic_schemas.jsonschemas import load_schema

#: The largest tree accepted, as a file or as JSON (uncompressed).
MAX_TREE_BYTES: Final = 16 * 1024 * 1024
#: Deepest nesting of nodes (the root is depth 1).
MAX_DEPTH: Final = 32
#: Most nodes in a tree, and most channels listed in all of them.
MAX_NODES: Final = 100_000
MAX_CHANNELS: Final = 1_000_000
#: The key-value bucket holding the tree, and its one key.
DEFAULT_BUCKET: Final = "alarmtree"
TREE_KEY: Final = "tree"
#: Revisions kept (the KV maximum).
HISTORY: Final = 64
#: The member of a stored tree that records its save.
REV_KEY: Final = "_rev"
SEPARATOR: Final = "/"
#: Deepest nesting of JSON objects and arrays a tree may have (its nodes, their
#: lists and channel options), checked before anything walks it.
MAX_NESTING: Final = 2 * MAX_DEPTH + 8

_PATTERN_SCHEME = re.compile(r"^([a-z]+)://(.+)$", re.IGNORECASE)


class AlarmTreeError(ContractError):
    """A tree that is malformed: ``pointer`` (JSON pointer) or ``line`` (1-based,
    in the file it came from) says where, ``reason`` what."""

    def __init__(self, reason: str, *, pointer: str = "", line: int | None = None):
        where = f"line {line}: " if line else (f"at {pointer}: " if pointer else "")
        super().__init__(f"invalid alarm tree {where}{reason}")
        self.reason = reason
        self.pointer = pointer
        self.line = line


@cache
def _validator() -> Any:
    return jsonschema_rs.validator_for(load_schema("alarm-tree"))


def _pointer(path: Any) -> str:
    return "".join(
        "/" + str(p).replace("~", "~0").replace("/", "~1") for p in list(path)
    )


def normalise_pattern(pattern: str) -> str:
    """A pattern with its scheme lower-cased and, for Tango, all of it lower-cased
    (Tango names are case-insensitive); :class:`ValueError` when it names no
    known scheme."""
    m = _PATTERN_SCHEME.match(pattern)
    if not m or m.group(1).lower() not in PROTOCOLS:
        known = ", ".join(sorted(PROTOCOLS))
        raise ValueError(f"pattern {pattern[:80]!r} must start with a scheme ({known})")
    scheme = m.group(1).lower()
    rest = m.group(2).lower() if scheme == "tango" else m.group(2)
    return f"{scheme}://{rest}"


def check_tree(tree: Any) -> dict[str, Any]:
    """``tree`` validated and normalised (a new object); :class:`AlarmTreeError`
    with the JSON pointer of the first problem otherwise."""
    if not isinstance(tree, dict):
        raise AlarmTreeError("the tree is an object (the root node)")
    if REV_KEY in tree:
        raise AlarmTreeError(f"'{REV_KEY}' is reserved for the store", pointer="/_rev")
    _check_nesting(tree)
    for error in _validator().iter_errors(tree):
        raise AlarmTreeError(error.message[:300], pointer=_pointer(error.instance_path))
    seen: dict[str, tuple[str, int]] = {}
    counts = {"nodes": 0, "channels": 0}
    return _check_node(tree, "", 1, seen, counts)


def _check_nesting(tree: dict[str, Any]) -> None:
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise AlarmTreeError(f"nested deeper than {MAX_DEPTH} nodes")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def _check_node(
    node: dict[str, Any], at: str, depth: int, seen: dict[str, tuple[str, int]],
    counts: dict[str, int],
) -> dict[str, Any]:  # fmt: skip
    if depth > MAX_DEPTH:
        raise AlarmTreeError(f"nodes nest deeper than {MAX_DEPTH}", pointer=at)
    counts["nodes"] += 1
    if counts["nodes"] > MAX_NODES:
        raise AlarmTreeError(f"more than {MAX_NODES} nodes", pointer=at)
    name = node["name"].strip()
    if not name:
        raise AlarmTreeError("a node's name is blank", pointer=f"{at}/name")
    out: dict[str, Any] = {**node, "name": name}
    channels = []
    for i, entry in enumerate(node.get("channels", ())):
        raw = entry if isinstance(entry, str) else entry["ch"]
        try:
            uri = parse_channel(raw).uri
        except ChannelError as exc:
            raise AlarmTreeError(str(exc), pointer=f"{at}/channels/{i}") from None
        first = seen.get(uri)
        if first is not None:
            raise AlarmTreeError(
                f"channel {uri} is listed twice (first at {first[0]}/channels/"
                f"{first[1]})",
                pointer=f"{at}/channels/{i}",
            )
        seen[uri] = (at, i)
        channels.append(uri if isinstance(entry, str) else {**entry, "ch": uri})
    counts["channels"] += len(channels)
    if counts["channels"] > MAX_CHANNELS:
        raise AlarmTreeError(f"more than {MAX_CHANNELS} channels", pointer=at)
    if "channels" in node:
        out["channels"] = channels
    if "patterns" in node:
        patterns = []
        for i, pattern in enumerate(node["patterns"]):
            try:
                patterns.append(normalise_pattern(pattern))
            except ValueError as exc:
                raise AlarmTreeError(str(exc), pointer=f"{at}/patterns/{i}") from None
        out["patterns"] = patterns
    if "children" in node:
        names: set[str] = set()
        children = []
        for i, child in enumerate(node["children"]):
            checked = _check_node(child, f"{at}/children/{i}", depth + 1, seen, counts)
            if checked["name"] in names:
                raise AlarmTreeError(
                    f"two children of one node are named {checked['name']!r}",
                    pointer=f"{at}/children/{i}/name",
                )
            names.add(checked["name"])
            children.append(checked)
        out["children"] = children
    return out


# -- files: YAML (JSON is YAML too), errors with the line -------------------------


def parse_tree_file(data: bytes, limit: int = MAX_TREE_BYTES) -> dict[str, Any]:
    """A tree file (YAML or JSON, UTF-8, at most ``limit`` bytes) validated and
    normalised; :class:`AlarmTreeError` naming the line of the problem otherwise.
    YAML anchors and aliases are refused (a small file could expand without
    bound)."""
    if len(data) > limit:
        raise AlarmTreeError(f"file of {len(data)} bytes exceeds {limit} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise AlarmTreeError("not UTF-8 text", line=line) from None
    _scan_events(text)
    loader = _loader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else None
            raise AlarmTreeError(str(exc.problem or exc), line=line) from None
        except yaml.YAMLError as exc:
            raise AlarmTreeError(f"not YAML or JSON: {exc}") from None
        if root is None:
            raise AlarmTreeError("the file is empty", line=1)
        try:
            tree = loader.construct_document(root)
        except yaml.YAMLError as exc:
            raise AlarmTreeError(f"cannot read a value: {exc}") from None
    finally:
        loader.dispose()
    try:
        return check_tree(tree)
    except AlarmTreeError as exc:
        line = line_of(root, exc.pointer)
        raise AlarmTreeError(exc.reason, pointer=exc.pointer, line=line) from None


def _loader(text: str) -> Any:
    return yaml.CSafeLoader(text) if yaml.__with_libyaml__ else yaml.SafeLoader(text)


def _scan_events(text: str) -> None:
    """Refuse, before anything is built, what could make a small file expensive:
    anchors and aliases (a few lines can expand without bound) and nesting deeper
    than a tree can be. The parser's events come one at a time (no recursion)."""
    loader = _loader(text)
    depth = 0
    try:
        while (event := loader.get_event()) is not None:
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise AlarmTreeError("YAML anchors and aliases are not allowed",
                                     line=line)  # fmt: skip
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    raise AlarmTreeError(f"nested deeper than {MAX_DEPTH} nodes",
                                         line=line)  # fmt: skip
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise AlarmTreeError(
            str(exc.problem or exc), line=mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise AlarmTreeError(f"not YAML or JSON: {exc}") from None
    finally:
        loader.dispose()


def line_of(root: yaml.Node, pointer: str) -> int:
    """The 1-based line of the YAML node at ``pointer`` (or of the deepest node
    on its way that exists)."""
    node = root
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and key.isdigit():
            index = int(key)
            found = node.value[index] if index < len(node.value) else None
        else:
            found = None
        if found is None:
            break
        node = found
    return int(node.start_mark.line) + 1


def dump_tree_file(tree: dict[str, Any]) -> str:
    """A tree as a YAML file (what ``synoptic alarms tree get`` writes)."""
    return yaml.safe_dump(
        tree, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )


# -- what a tree holds ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed channel: its node's path and its options (inherited from the
    nodes above where the channel sets none)."""

    uri: str
    area: str
    latch: bool
    desc: str = ""


def walk(tree: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool, bool]]:
    """Every node of a (checked) tree depth first, in order: its path, the node,
    whether it is enabled (itself and every node above) and its latch default."""
    stack: list[tuple[str, dict[str, Any], bool, bool]] = [
        (tree["name"], tree, tree.get("enabled", True), tree.get("latch", True))
    ]
    while stack:
        path, node, enabled, latch = stack.pop()
        yield path, node, enabled, latch
        for child in reversed(node.get("children", ())):
            stack.append((
                f"{path}{SEPARATOR}{child['name']}", child,
                enabled and child.get("enabled", True), child.get("latch", latch),
            ))  # fmt: skip


def listed(tree: dict[str, Any]) -> Iterator[Entry]:
    """Every enabled listed channel of a (checked) tree, in order."""
    for path, node, enabled, latch in walk(tree):
        if not enabled:
            continue
        for entry in node.get("channels", ()):
            if isinstance(entry, str):
                yield Entry(entry, path, latch)
            elif entry.get("enabled", True):
                yield Entry(entry["ch"], path, entry.get("latch", latch),
                            entry.get("desc", ""))  # fmt: skip


# -- stored in the bucket: zlib-compressed UTF-8 JSON with _rev --------------------


def encode_stored(tree: dict[str, Any], rev: dict[str, str]) -> bytes:
    """The bytes stored in the bucket: the tree plus ``_rev`` (who saved it, when,
    why) as UTF-8 JSON, zlib-compressed (a tree of 100 000 listed channels is a
    few MB of JSON and a few hundred kB stored)."""
    body = json.dumps({**tree, REV_KEY: rev}, ensure_ascii=False,
                      separators=(",", ":")).encode()  # fmt: skip
    return zlib.compress(body, 6)


def decode_stored(data: bytes) -> tuple[dict[str, Any], dict[str, str]]:
    """A stored value split into the tree (checked) and its save record; raises
    :class:`AlarmTreeError` for anything else."""
    try:
        inflater = zlib.decompressobj()
        body = inflater.decompress(data, MAX_TREE_BYTES + 1)
    except zlib.error as exc:
        raise AlarmTreeError(f"stored tree is not zlib data: {exc}") from None
    if len(body) > MAX_TREE_BYTES or inflater.unconsumed_tail:
        raise AlarmTreeError(f"stored tree exceeds {MAX_TREE_BYTES} bytes")
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise AlarmTreeError(f"stored tree is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AlarmTreeError("stored tree is not an object")
    raw = value.pop(REV_KEY, None)
    rev = {k: str(v)[:500] for k, v in raw.items()} if isinstance(raw, dict) else {}
    return check_tree(value), rev


__all__ = [
    "DEFAULT_BUCKET",
    "HISTORY",
    "MAX_TREE_BYTES",
    "REV_KEY",
    "SEPARATOR",
    "TREE_KEY",
    "AlarmTreeError",
    "Entry",
    "check_tree",
    "decode_stored",
    "dump_tree_file",
    "encode_stored",
    "line_of",
    "listed",
    "normalise_pattern",
    "parse_tree_file",
    "walk",
]
