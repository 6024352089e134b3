"""What every importer shares: errors naming file and line, the coverage report,
macros, channel names, pixel boxes on a canvas, screen names, placeholders."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from synoptic_schemas import ChannelError, parse_channel

#: Largest source file accepted.
MAX_SOURCE_BYTES = 10 * 1024 * 1024
#: Largest canvas side (the screen schema's limit).
MAX_CANVAS_PX = 20000
MAX_MACRO_DEPTH = 20


class ScreenImportError(ValueError):
    """A file that cannot be imported: the message names the file (and line)."""

    def __init__(self, file: str, reason: str, line: int | None = None) -> None:
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {reason}")
        self.file = file
        self.line = line
        self.reason = reason


@dataclass
class Link:
    """An open-display reference of an imported display (an action, a
    navigation tab): the path as written (macros substituted), the screen it
    opens, and whether that screen is among those imported with it."""

    file: str
    path: str
    screen: str
    inside: bool | None  # None: the path holds the opener's macros


@dataclass
class Report:
    """What an import did: widgets mapped (by source type → Synoptic type),
    placeholders (by source type, with why), links, what was skipped (rules,
    scripts, actions) and warnings."""

    file: str
    source: str
    mapped: Counter[str] = field(default_factory=Counter)
    placeholders: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, str] = field(default_factory=dict)
    #: Every placeholder's reason, by source type: ``{kind: {reason: count}}``.
    why: dict[str, Counter[str]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    #: Every converted widget with its source type, in order (not in the report).
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list, repr=False)
    #: Source widgets that became no widget of their own (a grid layout).
    absorbed: int = 0

    def mapped_as(self, kind: str, widget: dict[str, Any]) -> dict[str, Any]:
        """Count ``widget`` as the mapping of a source ``kind``; return it."""
        self.mapped[f"{kind} → {widget['type']}"] += 1
        self.items.append((kind, widget))
        return widget

    def absorb(self, kind: str, what: str) -> None:
        """Count a source widget that acts on others instead of being drawn."""
        self.mapped[f"{kind} → {what}"] += 1
        self.absorbed += 1

    def placeholder_for(
        self, kind: str, reason: str, w_px: float, h_px: float,
        title: str = "", text: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        """A placeholder for a source ``kind`` (counted, with its reason)."""
        self.placeholders[kind] += 1
        self.reasons.setdefault(kind, reason)
        self.why.setdefault(kind, Counter())[reason[:500]] += 1
        widget = placeholder(
            kind, self.source, reason, int(w_px), int(h_px), title, text
        )
        self.items.append((kind, widget))
        return widget

    @property
    def widgets(self) -> int:
        return sum(self.mapped.values()) + sum(self.placeholders.values())

    def as_dict(self) -> dict[str, Any]:
        out = {
            "file": self.file,
            "source": self.source,
            "widgets": self.widgets,
            "mapped": dict(sorted(self.mapped.items())),
            "placeholders": dict(sorted(self.placeholders.items())),
            "reasons": dict(sorted(self.reasons.items())),
            "skipped": self.skipped,
            "warnings": self.warnings,
        }
        if self.links:
            out["links"] = [{"path": k.path, "screen": k.screen, "inside": k.inside}
                            for k in self.links]  # fmt: skip
        return out

    def text(self) -> str:
        """A few lines for a terminal."""
        total = self.widgets
        done = sum(self.mapped.values())
        pct = f"{100 * done / total:.0f} %" if total else "-"
        lines = [
            f"{self.file} ({self.source}): {done} of {total} widgets mapped ({pct})"
        ]
        for kind, n in sorted(self.mapped.items()):
            lines.append(f"  mapped      {n:5d} {kind}")
        for kind, n in sorted(self.placeholders.items()):
            for reason, k in sorted(self.why.get(kind, Counter({"": n})).items()):
                lines.append(f"  placeholder {k:5d} {kind}: {reason}")
        lines += [f"  skipped     {s}" for s in self.skipped]
        lines += [f"  warning     {w}" for w in self.warnings]
        return "\n".join(lines)


# ---------------------------------------------------------------- macros

_MACRO = re.compile(r"\$\(([^()$]*)\)|\$\{([^{}$]*)\}")


def parse_macro_args(pairs: list[str]) -> dict[str, str]:
    """``["P=SR01:", "R=X"]`` → ``{"P": "SR01:", "R": "X"}``."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"a macro is NAME=VALUE, not {pair!r}")
        out[name.strip()] = value
    return out


def expand(
    text: str, macros: dict[str, str], file: str, keep: frozenset[str] = frozenset()
) -> tuple[str, list[str]]:
    """``$(P)``/``${P}`` (``$(P=default)`` with a default) replaced from
    ``macros``, repeatedly (a value may name macros); returns the text and the
    names left unresolved. Names in ``keep`` and not in ``macros`` stay as
    written, default included (the screen's own macros, expanded at open).
    A macro loop is an error."""
    missing: list[str] = []
    used = 0

    def one(match: re.Match[str]) -> str:
        nonlocal used
        body = match.group(1) if match.group(1) is not None else match.group(2)
        name, sep, default = body.partition("=")
        if name in macros:
            used += 1
            return macros[name]
        if sep and name not in keep:
            return default
        missing.append(name)
        return match.group(0)

    for _ in range(MAX_MACRO_DEPTH):
        used = 0
        new = _MACRO.sub(one, text)
        if new == text:
            if used:  # a macro that expands to itself
                break
            return new, sorted(set(missing))
        text = new
        missing.clear()
    raise ScreenImportError(file, f"macro loop expanding {text[:80]!r}")


# ---------------------------------------------------------------- channels


#: Channels the browser serves itself (local, simulated functions, formulas),
#: as the screen schema accepts them.
_BROWSER_CHANNEL = re.compile(
    r"^loc://[^\s<(]+(<[A-Za-z]+>)?(\(.*\))?$|^sim://[A-Za-z]+\(.*\)$|^(=|eq://)\S.*$",
    re.DOTALL,
)
MAX_CHANNEL_CHARS = 2000


def convert_channel(name: str, default_scheme: str = "ca") -> tuple[str | None, str]:
    """A source PV name as a channel URI, or ``(None, reason)``: ``pva://``,
    ``ca://`` and ``sim://`` kept, bare names get ``default_scheme``; local
    (``loc://``) and formula (``=…``, ``eq://…``) channels kept as written (the
    browser serves them); ``$(P)`` references kept (expanded at open)."""
    name = name.strip()
    if not name:
        return None, "no channel"
    if len(name) > MAX_CHANNEL_CHARS:
        return None, f"channel of {len(name)} characters exceeds {MAX_CHANNEL_CHARS}"
    if name.startswith(("=", "loc://", "eq://")) or (
        name.startswith("sim://") and "(" in name
    ):
        if name.startswith(("loc://", "sim://")):  # lines of an initial value
            name = name.replace("\r\n", "\\n").replace("\n", "\\n").replace("\t", "\\t")
        if _BROWSER_CHANNEL.match(name) and "\n" not in name:
            return name, ""
        return None, f"not a local, simulated or formula channel: {name[:80]!r}"
    if name.startswith("tango://") and ("$(" in name or "${" in name):
        return None, f"unresolved macro in {name[:80]!r}"
    uri = name if "://" in name else f"{default_scheme}://{name}"
    try:
        return parse_channel(uri).uri, ""
    except ChannelError as exc:
        return None, str(exc)


# ---------------------------------------------------------------- placement


def _clamp(value: float, low: int, high: int) -> int:
    return max(low, min(high, round(value)))


def canvas_layout(width: float, height: float) -> dict[str, Any]:
    """The absolute layout of a ``width`` × ``height`` pixel display."""
    return {"type": "canvas", "width": _clamp(width, 1, MAX_CANVAS_PX),
            "height": _clamp(height, 1, MAX_CANVAS_PX)}  # fmt: skip


def box(x: float, y: float, w: float, h: float) -> dict[str, int]:
    """A widget's pixel box on the canvas (clamped to the schema's ranges)."""
    return {"x": _clamp(x, -20000, 100000), "y": _clamp(y, -20000, 100000),
            "w": _clamp(w, 0, 100000), "h": _clamp(h, 0, 100000)}  # fmt: skip


def screen_name(file: str) -> str:
    """A valid screen name from a file name (``SR01 main.bob`` → ``SR01_main``);
    links and embedded displays name their target screen by the same rule."""
    stem = PurePath(file.replace("\\", "/")).stem
    name = "".join(
        c if (c.isascii() and c.isalnum()) or c in "_-" else "_" for c in stem
    )
    name = name.lstrip("_-")[:128]
    return name or "imported"


def placeholder(
    original: str, source: str, reason: str, w_px: int, h_px: int,
    title: str = "", text: str = "",
) -> dict[str, Any]:  # fmt: skip
    """A placeholder widget (without its place)."""
    options: dict[str, Any] = {"original": original[:200], "source": source,
                               "reason": reason[:500], "width_px": max(0, int(w_px)),
                               "height_px": max(0, int(h_px))}  # fmt: skip
    if text:
        options["text"] = text[:2000]
    widget: dict[str, Any] = {"type": "placeholder", "options": options}
    if title:
        widget["title"] = title[:200]
    return widget
