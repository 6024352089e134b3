"""A Phoebus alarm configuration (XML) → a Synoptic alarm tree.

Pure functions. ``<config name>`` becomes the root node, each ``<component>`` a
node, each ``<pv>`` a listed channel (a bare PV name is Channel Access:
``ca://NAME``; ``ca://``, ``pva://`` and ``tango://`` names are kept; other
Phoebus data sources are skipped and reported). ``<guidance>`` entries become the
node's guidance text, ``<display>`` entries its related screens (a ``.bob`` or
``.opi`` file names the screen it imports as, with its macros; an ``http(s)``
address stays a link). ``<description>``, ``<enabled>`` and ``<latching>`` carry
over (Phoebus' defaults: enabled, not latching); ``<delay>``, ``<count>``,
``<filter>``, ``<command>``, ``<automated_action>`` and ``<annunciating>`` have no
equivalent and are reported. A PV listed twice keeps its first place (Phoebus
does the same) with a warning.

The file is parsed with defusedxml (no DTD, entities or external references)
within a size limit; malformed XML and a tree that breaks the tree's rules
(two components of one name …) are refused with the line.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from synoptic_importer.common import screen_name
from synoptic_schemas import ChannelError, parse_channel
from synoptic_schemas.alarmtree import AlarmTreeError, check_tree

#: Largest configuration file accepted.
MAX_ALARM_XML_BYTES = 32 * 1024 * 1024
_LINE = "{synoptic}line"
_SKIP_TAGS = ("delay", "count", "filter", "command", "automated_action", "annunciating")
_DISPLAY_FILE = re.compile(r"^(?P<path>[^\s?\"]+\.(?:bob|opi))(?P<rest>.*)$", re.I)


class AlarmImportError(ValueError):
    """A configuration that cannot be imported: the message names file and line."""

    def __init__(self, file: str, reason: str, line: int | None = None) -> None:
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {reason}")
        self.file = file
        self.line = line
        self.reason = reason


@dataclass
class AlarmImportReport:
    """What the import did."""

    file: str
    nodes: int = 0
    channels: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # what had no equivalent
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "nodes": self.nodes, "channels": self.channels,
                "skipped": dict(sorted(self.skipped.items())),
                "warnings": self.warnings}  # fmt: skip

    def text(self) -> str:
        lines = [f"{self.file}: {self.nodes} nodes, {self.channels} channels"]
        lines += [
            f"  not imported {n:5d} <{tag}>" for tag, n in sorted(self.skipped.items())
        ]
        lines += [f"  warning      {w}" for w in self.warnings]
        return "\n".join(lines)


class _LineBuilder(TreeBuilder):
    """Records the line of each element's start tag in a reserved attribute."""

    parser: Any = None

    def start(self, tag: str, attrs: dict[str, str]) -> Element:
        line = self.parser.parser.CurrentLineNumber if self.parser else 0
        return super().start(tag, {**attrs, _LINE: str(line)})


def _line(element: Element) -> int:
    return int(element.get(_LINE, "0"))


def parse_alarm_xml(data: bytes, file: str) -> Element:
    """The ``<config>`` root element, each element with its line."""
    if len(data) > MAX_ALARM_XML_BYTES:
        raise AlarmImportError(
            file, f"{len(data)} bytes exceed the limit of {MAX_ALARM_XML_BYTES}"
        )
    builder = _LineBuilder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=True, forbid_entities=True,
                              forbid_external=True)  # fmt: skip
    builder.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except DefusedXmlException as exc:
        raise AlarmImportError(file, f"refused: {exc}") from None
    except ParseError as exc:
        line = getattr(exc, "position", (None, None))[0]
        raise AlarmImportError(file, f"malformed XML: {exc}", line) from None
    if root.tag != "config":
        raise AlarmImportError(
            file, f"expected a Phoebus alarm configuration <config>, found <{root.tag}>",
            _line(root),
        )  # fmt: skip
    return root


def import_phoebus_alarms(
    data: bytes, file: str = "alarms.xml"
) -> tuple[dict[str, Any], AlarmImportReport]:
    """A Phoebus alarm configuration's bytes → a checked alarm tree and a report;
    :class:`AlarmImportError` with the line when it cannot be imported."""
    root = parse_alarm_xml(data, file)
    report = AlarmImportReport(file)
    lines: dict[str, int] = {}
    seen: dict[str, int] = {}
    tree = _node(root, "", file, report, lines, seen)
    try:
        return check_tree(tree), report
    except AlarmTreeError as exc:
        line = _line_for(exc.pointer, lines)
        raise AlarmImportError(file, exc.reason, line) from None


def _line_for(pointer: str, lines: dict[str, int]) -> int | None:
    while True:
        if pointer in lines:
            return lines[pointer]
        if not pointer:
            return None
        pointer = pointer.rsplit("/", 1)[0]


def _node(
    element: Element, at: str, file: str, report: AlarmImportReport,
    lines: dict[str, int], seen: dict[str, int],
) -> dict[str, Any]:  # fmt: skip
    lines[at] = _line(element)
    name = (element.get("name") or "").strip()
    if not name:
        raise AlarmImportError(file, f"<{element.tag}> without a name", _line(element))
    report.nodes += 1
    node: dict[str, Any] = {"name": name.replace("/", "-")}
    guidance, screens = _guidance(element), _screens(element, report)
    if guidance:
        node["guidance"] = guidance
    if screens:
        node["screens"] = screens
    for tag in _SKIP_TAGS:
        report.skipped[tag] += len(element.findall(tag))
    channels: list[Any] = []
    children: list[dict[str, Any]] = []
    for child in element:
        if child.tag == "pv":
            entry = _channel(child, file, report, seen)
            if entry is not None:
                lines[f"{at}/channels/{len(channels)}"] = _line(child)
                channels.append(entry)
        elif child.tag == "component":
            children.append(
                _node(
                    child, f"{at}/children/{len(children)}", file, report, lines, seen
                )
            )
    if channels:
        node["channels"] = channels
    if children:
        node["children"] = children
    return node


def _channel(
    element: Element, file: str, report: AlarmImportReport, seen: dict[str, int]
) -> Any:
    line = _line(element)
    name = (element.get("name") or "").strip()
    if not name:
        raise AlarmImportError(file, "<pv> without a name", line)
    try:
        uri = parse_channel(name if "://" in name else f"ca://{name}").uri
    except ChannelError as exc:
        report.skipped["pv of another data source"] += 1
        report.warnings.append(f"line {line}: {name[:80]}: skipped ({exc})")
        return None
    if uri in seen:
        report.warnings.append(
            f"line {line}: {uri} is listed again (first at line {seen[uri]}): "
            "the first is kept"
        )
        return None
    seen[uri] = line
    report.channels += 1
    options: dict[str, Any] = {}
    description = _text(element, "description")
    if description:
        options["desc"] = description[:500]
    enabled = _text(element, "enabled").lower()
    if enabled and enabled not in ("true", "false"):
        report.warnings.append(
            f"line {line}: {uri} enabled {enabled!r} (until a date): imported disabled"
        )
        options["enabled"] = False
    elif enabled == "false":
        options["enabled"] = False
    options["latch"] = _text(element, "latching").lower() == "true"
    guidance, screens = _guidance(element), _screens(element, report)
    if guidance:
        options["guidance"] = guidance
    if screens:
        options["screens"] = screens
    for tag in _SKIP_TAGS:
        report.skipped[tag] += len(element.findall(tag))
    return {"ch": uri, **options}


def _text(element: Element, tag: str) -> str:
    found = element.find(tag)
    return (found.text or "").strip() if found is not None else ""


def _title_details(element: Element) -> tuple[str, str]:
    details = _text(element, "details") or _text(element, "detail")
    return _text(element, "title"), details


def _guidance(element: Element) -> str:
    parts = []
    for entry in element.findall("guidance"):
        title, details = _title_details(entry)
        parts.append(f"{title}: {details}" if title and details else title or details)
    return "\n\n".join(p for p in parts if p)[:10000]


def _screens(element: Element, report: AlarmImportReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in element.findall("display"):
        title, details = _title_details(entry)
        title = (title or details or "display")[:200]
        if re.match(r"^https?://", details):
            out.append({"title": title, "url": details[:2000]})
            continue
        m = _DISPLAY_FILE.match(details)
        if m is None:
            report.warnings.append(
                f"line {_line(entry)}: display {details[:80]!r} is neither a .bob/.opi "
                "file nor a web address: not imported"
            )
            continue
        screen: dict[str, Any] = {"title": title, "screen": screen_name(m["path"])}
        macros = _macros(m["rest"])
        if macros:
            screen["macros"] = macros
        out.append(screen)
    return out[:32]


def _macros(rest: str) -> dict[str, str]:
    """``?A=1&B=2`` or `` "A=1,B=2"`` after a display file → its macros."""
    text = rest.strip().lstrip("?").strip().strip('"')
    out: dict[str, str] = {}
    for pair in re.split(r"[&,]", text):
        name, sep, value = pair.partition("=")
        if sep and name.strip():
            out[name.strip()[:100]] = value.strip()[:1000]
    return dict(list(out.items())[:64])
