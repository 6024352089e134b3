"""A facility's screen set imported as one linked site: every display of a
folder (or a zip of one) becomes a screen, each open-display action a link to
the screen its file became (resolved like Phoebus, :mod:`.paths`), embedded
displays inlined from the set. Pure: file names and bytes in, screens and a
site report out; storing them is the caller's (``synoptic screens import``, the
gateway's upload).

Screens are named ``<set>--<folder>--<file>`` (``ADCore--ADBase``,
``examples--embedded--motor``) and carry a ``source`` (the set, the file, the
home flag, a digest of the screen as imported: a stored screen whose content
no longer matches its digest was edited since; a digest of its conversion's
inputs: a stored screen whose inputs are those of a new import need not be
converted again)."""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

from synoptic_importer import SUFFIXES, Imported, default_tango_host, import_screen
from synoptic_importer.collect import full_collections_deferred
from synoptic_importer.common import ScreenImportError
from synoptic_importer.macros import references
from synoptic_importer.paths import SetContext
from synoptic_importer.sitereport import SiteReport, build_report
from synoptic_schemas.screens import REV_KEY

#: A set's name in screen names and sources.
SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SEPARATOR = "--"
MAX_NAME = 128
#: File names that make a display its set's home, best first.
HOME_NAMES = ("index", "home", "main", "01_main", "top", "overview", "start", "menu")
#: The packages whose code makes a converted screen: part of every screen's inputs.
CODE = ("synoptic_importer", "synoptic_schemas")
#: The most files a screen's ``source.reads`` lists (a longer list is cut, and
#: the screen's inputs then never match: it is converted each time).
MAX_READS = 1000


@cache
def code_digest() -> bytes:
    """A digest of the importer's code (its and the screen contract's sources):
    a new importer converts every screen again."""
    h = hashlib.sha256()
    for package in CODE:
        root = Path(str(import_module(package).__file__)).parent
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    return h.digest()


class SetInputs:
    """What the conversion of a set's displays reads: the importer, the
    options, the set's file names, and each screen's file and the files it
    read (embedded displays, pictures). :meth:`digest` is a screen's
    ``source.inputs``: the same digest, the same screen."""

    def __init__(self, files: Mapping[str, bytes], set_: str,
                 options: dict[str, Any]) -> None:  # fmt: skip
        self.files = files
        common = json.dumps([set_, options, sorted(files)], sort_keys=True)
        self._base = hashlib.sha256(code_digest() + common.encode()).digest()
        self._each: dict[str, bytes] = {}

    def _of(self, path: str) -> bytes:
        found = self._each.get(path)
        if found is None:
            data = self.files.get(path)
            found = b"-" if data is None else hashlib.sha256(data).digest()
            self._each[path] = found
        return found

    def digest(self, path: str, reads: Sequence[str]) -> str:
        """The inputs of the screen of ``path`` whose conversion read ``reads``."""
        h = hashlib.sha256(self._base)
        for p in (path, *reads):
            h.update(p.encode() + b"\0" + self._of(p))
        return h.hexdigest()[:32]


@dataclass
class SetPlan:
    """A set before its conversion: its displays, their screen names, its inputs."""

    set: str
    displays: list[str]
    names: dict[str, str]  # display path → screen name
    inputs: SetInputs


def plan_set(
    files: Mapping[str, bytes],
    name: str,
    *,
    macros: dict[str, str] | None = None,
    tango_host: str | None = None,
    home: str | None = None,
) -> SetPlan:
    """The displays of ``files`` imported as the set ``name`` (as
    :func:`import_site`), their names and inputs, nothing converted."""
    set_ = set_name(name)
    displays = sorted(p for p in files if posixpath.splitext(p)[1].lower() in SUFFIXES)
    options = {"macros": macros or {}, "home": home,
               "tango_host": tango_host or default_tango_host()}  # fmt: skip
    return SetPlan(set_, displays, screen_names(displays, set_),
                   SetInputs(files, set_, options))  # fmt: skip


@dataclass
class Refused:
    """A file of the set that could not be imported: why, and where."""

    file: str
    reason: str
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "reason": self.reason, "line": self.line}


@dataclass
class Site:
    """The screens of an imported set, its home, the files refused."""

    set: str
    screens: list[Imported] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # screen name → file
    refused: list[Refused] = field(default_factory=list)
    home: str | None = None
    #: The macros each screen's widgets and title still refer to, by name.
    references: dict[str, set[str]] = field(default_factory=dict)
    #: The set's other files each screen's conversion read, by name.
    reads: dict[str, list[str]] = field(default_factory=dict)
    #: Each screen (``source`` included) as compact JSON, validated: what the
    #: store writes (:meth:`synoptic_bus.screens.ScreenBucket.put`'s ``valid_json``).
    encoded: dict[str, str] = field(default_factory=dict)
    inputs: SetInputs | None = None

    def report(self) -> SiteReport:
        return build_report(self)


def set_name(name: str) -> str:
    """A valid set name from a folder's or zip's name (``ADCore op`` → ``ADCore_op``)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", name.strip()).lstrip("_.-")[:64]
    return name or "site"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


_REF = re.compile(r"(\$\([^()]*\)|\$\{[^{}]*\})")


def name_for(path: str, set_: str) -> str:
    """A path's screen name by the set's rule: the set, the folders and the
    stem joined by ``--``, other characters as ``_``; ``$(MACRO)`` references
    kept (a link whose file its opener names: filled when it is used)."""
    stem = posixpath.splitext(path)[0]

    def part(text: str) -> str:
        return "".join(p if _REF.fullmatch(p) else _slug(p) for p in _REF.split(text))

    return _slug(set_) + SEPARATOR + SEPARATOR.join(part(p) for p in stem.split("/"))


def screen_names(paths: list[str], set_: str) -> dict[str, str]:
    """Each display's screen name: the set, its folders and its stem joined by
    ``--``; a ``.opi`` beside a ``.bob`` of the same stem gets ``-opi``; names
    longer than the limit end in a hash of the path."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for path in sorted(paths, key=lambda p: (not p.lower().endswith(".bob"), p)):
        suffix = posixpath.splitext(path)[1]
        name = name_for(path, set_)
        if name.lower() in taken:
            name += "-" + suffix.lstrip(".").lower()
        if len(name) > MAX_NAME or name.lower() in taken:
            digest = hashlib.blake2b(path.encode(), digest_size=5).hexdigest()
            name = name[: MAX_NAME - 11] + "-" + digest
        taken.add(name.lower())
        out[path] = name
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content(screen: dict[str, Any]) -> tuple[str, str]:
    """A screen's content as canonical JSON (sorted keys, compact), its
    ``source`` left out, and the part of it that is its widgets: the same
    characters ``_canonical`` makes of the whole, one member at a time."""
    parts = {k: _canonical(screen[k]) for k in sorted(screen) if k != "source"}
    text = "{" + ",".join(f"{_canonical(k)}:{v}" for k, v in parts.items()) + "}"
    return text, parts.get("widgets", "")


def _digest_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def digest(screen: dict[str, Any]) -> str:
    """The digest of a screen's content, its ``source`` left out."""
    return _digest_of(_content(screen)[0])


def edited_since_import(screen: dict[str, Any]) -> bool:
    """Whether a stored imported screen's content differs from what its import
    wrote (an edit in the browser since)."""
    source = screen.get("source")
    if not isinstance(source, dict) or "digest" not in source:
        return False
    return digest(screen) != source["digest"]


_SOURCE = b',"source":{'


def stored_source(data: bytes) -> dict[str, Any] | None:
    """The ``source`` of a stored screen that is as its import wrote it: its
    content's canonical JSON (:func:`digest`'s), then its ``source``, then the
    store's ``_rev``, and the content's digest still its source's; None for
    any other value (written by another path, or edited since). Nothing but
    the end of the value is decoded."""
    at = data.rfind(_SOURCE)
    if at < 0:
        return None
    try:
        tail = json.loads(b"{" + data[at + 1 :])
    except ValueError:
        return None
    if not isinstance(tail, dict) or set(tail) - {"source", REV_KEY}:
        return None
    source = tail.get("source")
    if not isinstance(source, dict):
        return None
    if hashlib.sha256(data[:at] + b"}").hexdigest()[:32] != source.get("digest"):
        return None
    return source


def unchanged(plan: SetPlan, path: str, source: dict[str, Any]) -> bool:
    """Whether the stored screen of ``path`` (its ``source``, from
    :func:`stored_source`) is what converting it again would make: same set,
    file and inputs (the same files read, unchanged)."""
    reads = source.get("reads", [])
    return (
        source.get("set") == plan.set
        and source.get("file") == path
        and isinstance(reads, list)
        and all(isinstance(r, str) for r in reads)
        and source.get("inputs") == plan.inputs.digest(path, reads)
    )


def import_site(
    files: Mapping[str, bytes],
    name: str,
    *,
    macros: dict[str, str] | None = None,
    tango_host: str | None = None,
    home: str | None = None,
) -> Site:
    """Import every display of ``files`` (POSIX paths relative to the set's
    root → bytes) as the set ``name``. A file that cannot be imported is
    refused (the others are not affected); ``home`` (a path) names the home
    screen, else it is found (:func:`find_home`)."""
    plan = plan_set(files, name, macros=macros, tango_host=tango_host, home=home)
    set_, names = plan.set, plan.names
    context = SetContext(files, names, name_rule=lambda p: name_for(p, set_))
    site = Site(set_, inputs=plan.inputs)
    with full_collections_deferred():
        for path in plan.displays:
            context.reads = []
            try:
                imported = import_screen(files[path], path, macros=macros,
                                         tango_host=tango_host, context=context)  # fmt: skip
            except ScreenImportError as exc:
                site.refused.append(Refused(path, exc.reason, exc.line))
                continue
            imported = Imported(names[path], imported.screen, imported.report)
            site.screens.append(imported)
            site.files[imported.name] = path
            site.reads[imported.name] = list(dict.fromkeys(context.reads))
        context.reads = None
        site.home = names.get(home) if home else find_home(site)
        _add_sources(site)
    return site


def _add_sources(site: Site) -> None:
    """Each screen's ``source`` (its set, file, home flag, digest, inputs),
    its JSON as stored, and the macros it still refers to."""
    for imported in site.screens:
        path = site.files[imported.name]
        source: dict[str, Any] = {"set": site.set, "file": path[:1000]}
        if imported.name == site.home:
            source["home"] = True
        imported.screen.pop("source", None)
        text, widgets = _content(imported.screen)
        source["digest"] = _digest_of(text)
        reads = site.reads.get(imported.name, [])
        if site.inputs is not None:
            source["inputs"] = site.inputs.digest(path, reads)
        if reads:
            source["reads"] = [r[:1000] for r in reads[:MAX_READS]]
        imported.screen["source"] = source
        site.encoded[imported.name] = f'{text[:-1]},"source":{_canonical(source)}}}'
        site.references[imported.name] = references(widgets) | references(
            imported.screen.get("title", "")
        )


def find_home(site: Site) -> str | None:
    """The set's home screen: a display named like one (``main``, ``index``,
    ``top`` … nearest the root), else the one from which links reach the most
    screens (fewest folders deep, then by name)."""
    if not site.screens:
        return None
    by_stem: list[tuple[int, int, str]] = []
    for screen, path in site.files.items():
        stem = posixpath.splitext(posixpath.basename(path))[0].lower()
        if stem in HOME_NAMES:
            by_stem.append((path.count("/"), HOME_NAMES.index(stem), screen))
    if by_stem:
        return min(by_stem)[2]
    graph = {
        s.name: {k.screen for k in s.report.links if k.inside} for s in site.screens
    }

    def reach(start: str) -> int:
        seen, todo = {start}, [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return len(seen)

    return min(graph, key=lambda s: (-reach(s), site.files[s].count("/"), s))
