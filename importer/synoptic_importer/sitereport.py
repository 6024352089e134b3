"""The site report of an imported set: per source widget type how many were
mapped (to what) and how many are placeholders (each with why); links resolved
inside the set and those pointing outside it; channels by scheme; the macros a
screen leaves for whoever opens it; files refused with the line. As JSON, and
as text for a terminal."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from synoptic_importer.common import Report


class _Imported(Protocol):
    name: str
    screen: dict[str, Any]
    report: Report


class _Refused(Protocol):
    def as_dict(self) -> dict[str, Any]: ...


class SiteLike(Protocol):
    """What a report is made of (:class:`synoptic_importer.site.Site`)."""

    set: str
    home: str | None
    files: dict[str, str]
    #: The macros each screen's widgets and title still refer to, by name.
    references: dict[str, set[str]]

    @property
    def screens(self) -> Sequence[_Imported]: ...

    @property
    def refused(self) -> Sequence[_Refused]: ...


#: How many examples a list in the report keeps (the counts cover all).
MAX_EXAMPLES = 200


def _channels(widget: dict[str, Any]) -> list[str]:
    out = list(widget.get("channels", []))
    out += [r["channel"] for r in widget.get("rules", []) if "channel" in r]
    out += [a["channel"] for a in widget.get("actions", []) if a.get("type") == "write"]
    for tab in (
        widget.get("options", {}).get("tabs", []) if widget["type"] == "tabs" else []
    ):
        for inner in tab.get("widgets", []):
            out += _channels(inner)
    return out


def scheme_of(uri: str) -> str:
    """``ca``, ``pva``, ``tango``, ``sim``, ``loc`` or ``formula``."""
    if uri.startswith(("=", "eq://")):
        return "formula"
    return uri.split("://", 1)[0] if "://" in uri else "ca"


@dataclass
class SiteReport:
    """Counts and lists of one imported set (see the module's docstring)."""

    set: str
    home: str | None
    screens: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    types: dict[str, dict[str, Any]] = field(default_factory=dict)
    links: dict[str, Any] = field(default_factory=dict)
    channels: dict[str, int] = field(default_factory=dict)
    macros: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def widgets(self) -> int:
        return sum(t["widgets"] for t in self.types.values())

    @property
    def mapped(self) -> int:
        return sum(t["mapped"] for t in self.types.values())

    @property
    def mapped_pct(self) -> float:
        return round(100 * self.mapped / self.widgets, 1) if self.widgets else 100.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "set": self.set,
            "home": self.home,
            "files": len(self.screens) + len(self.refused),
            "screens": self.screens,
            "refused": self.refused,
            "widgets": self.widgets,
            "mapped": self.mapped,
            "placeholders": self.widgets - self.mapped,
            "mapped_pct": self.mapped_pct,
            "types": self.types,
            "links": self.links,
            "channels": self.channels,
            "macros": self.macros,
            "skipped": self.skipped,
            "warnings": self.warnings[:MAX_EXAMPLES],
        }

    def json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False)

    def text(self) -> str:
        """The report for a terminal: totals, then the gaps."""
        links = self.links
        lines = [
            f"set {self.set}: {len(self.screens)} screens, {len(self.refused)} files "
            f"refused; home {self.home or '-'}",
            f"widgets: {self.mapped} of {self.widgets} mapped ({self.mapped_pct} %), "
            f"{self.widgets - self.mapped} placeholders",
            f"links: {links.get('resolved', 0)} resolved inside the set, "
            f"{links.get('at_open', 0)} named by the opener's macros (resolved "
            f"when used), {links.get('outside', 0)} pointing outside it",
            "channels: " + ", ".join(f"{k} {n}" for k, n in self.channels.items()),
        ]
        for r in self.refused:
            where = f"{r['file']}:{r['line']}" if r["line"] else r["file"]
            lines.append(f"  refused     {where}: {r['reason']}")
        for kind, t in self.types.items():
            mapped = ", ".join(f"{n} as {a}" for a, n in t["as"].items())
            lines.append(f"  type        {kind}: {t['mapped']} of {t['widgets']} mapped"
                         + (f" ({mapped})" if mapped else ""))  # fmt: skip
            for reason, n in t["reasons"].items():
                lines.append(f"    placeholder {n:5d}: {reason}")
        for k in links.get("outside_list", []):
            lines.append(f"  outside     {k['file']} → {k['path']}")
        if self.macros:
            lines.append("  macros left for the opener: "
                         + ", ".join(f"{k} ({n} screens)" for k, n in self.macros.items()))  # fmt: skip
        for what, n in self.skipped.items():
            lines.append(f"  not run     {n:5d} {what}")
        return "\n".join(lines)


def build_report(site: SiteLike) -> SiteReport:
    """The report of ``site``."""
    report = SiteReport(site.set, site.home)
    report.refused = [r.as_dict() for r in site.refused]
    types: dict[str, dict[str, Any]] = {}
    channels: set[str] = set()
    macros: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    resolved = at_open = 0
    outside: dict[tuple[str, str], None] = {}
    for imported in site.screens:
        r = imported.report
        for key, n in r.mapped.items():
            kind, _, target = key.partition(" → ")
            entry = types.setdefault(f"{r.source}:{kind}", _type())
            entry["widgets"] += n
            entry["mapped"] += n
            entry["as"][target] = entry["as"].get(target, 0) + n
        for kind, reasons in r.why.items():
            entry = types.setdefault(f"{r.source}:{kind}", _type())
            for reason, n in reasons.items():
                entry["widgets"] += n
                entry["reasons"][reason] = entry["reasons"].get(reason, 0) + n
        for link in r.links:
            if link.inside:
                resolved += 1
            elif link.inside is None:
                at_open += 1
            else:
                outside[(r.file, link.path)] = None
        for note in r.skipped:
            skipped[_skip_kind(note)] += 1
        report.warnings += [f"{r.file}: {w}" for w in r.warnings]
        for _, widget in r.items:
            channels.update(_channels(widget))
        names = site.references[imported.name]
        macros.update(sorted(names))  # ties in the report in name order
        report.screens.append({
            "name": imported.name, "file": site.files[imported.name],
            "title": imported.screen.get("title", ""), "widgets": r.widgets,
            "placeholders": sum(r.placeholders.values()),
            "links": len(r.links), "home": imported.name == site.home,
            "macros": sorted(names),
        })  # fmt: skip
    report.types = dict(sorted(types.items()))
    report.links = {
        "resolved": resolved,
        "at_open": at_open,
        "outside": len(outside),
        "outside_list": [
            {"file": f, "path": p} for f, p in list(outside)[:MAX_EXAMPLES]
        ],
    }
    report.channels = dict(sorted(Counter(scheme_of(c) for c in channels).items()))
    report.macros = dict(macros.most_common())
    report.skipped = dict(skipped.most_common())
    return report


def _type() -> dict[str, Any]:
    return {"widgets": 0, "mapped": 0, "as": {}, "reasons": {}}


def _skip_kind(note: str) -> str:
    if note.startswith("script "):
        return "scripts"
    if note.startswith("rule "):
        return "rules"
    if note.startswith("action "):
        if "runs a script" in note:
            return "actions running a script"
        if "runs a program" in note:
            return "actions running a program"
        return "other actions"
    return "other"
