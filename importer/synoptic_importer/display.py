"""Phoebus Display Builder (``.bob``) and CS-Studio BOY (``.opi``) displays: XML
of nested ``<widget>`` elements with pixel positions (a group's children relative
to it), PV names, macros, rules and scripts; they become canvas screens (pixel
boxes, group children in absolute coordinates). Parsed with defusedxml: a DTD,
entity declarations and external references are refused."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from synoptic_importer.common import (
    Report,
    ScreenImportError,
    box,
    canvas_layout,
    convert_channel,
    expand,
    screen_name,
)
from synoptic_importer.rules import rules_of
from synoptic_importer.shapes import (
    SHAPES,
    line_colour,
    picture_src,
    shape_options,
)
from synoptic_importer.style import hex_colour, style_of

OPI_PREFIX = "org.csstudio.opibuilder.widgets."

#: Source type → (Synoptic type, options maker); a type not here is a placeholder.
Mapper = Callable[[Element], dict[str, Any]]


def _text(el: Element, tag: str, default: str = "") -> str:
    child = el.find(tag)
    return (child.text or "").strip() if child is not None and child.text else default


def _num(el: Element, tag: str, default: float = 0.0) -> float:
    try:
        value = float(_text(el, tag) or default)
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _bool(el: Element, tag: str, default: bool = False) -> bool:
    text = _text(el, tag).lower()
    return default if not text else text == "true"


def _label_options(el: Element) -> dict[str, Any]:
    """Value only; the precision when the display fixes it (not from the PV)."""
    options: dict[str, Any] = {"compact": True}
    prec = _num(el, "precision", -1)
    if 0 <= prec <= 17 and not _bool(el, "precision_from_pv", False):
        options["prec"] = int(prec)
    return options


def _range_options(vertical: bool | None = None) -> Mapper:
    def make(el: Element) -> dict[str, Any]:
        options: dict[str, Any] = {}
        from_pv = _bool(el, "limits_from_pv", True)
        if not from_pv and el.find("minimum") is not None:
            options["min"] = _num(el, "minimum")
            options["max"] = _num(el, "maximum", 100.0)
        if vertical is True or (vertical is None and not _bool(el, "horizontal", True)):
            options["orientation"] = "vertical"
        return options

    return make


def _none(el: Element) -> dict[str, Any]:
    return {}


def _led(el: Element) -> dict[str, Any]:
    """Bit, and the lamp's on/off colours (as ``#rrggbb``)."""
    options: dict[str, Any] = {"compact": True}
    bit = int(_num(el, "bit", -1))
    if 0 <= bit <= 63:
        options["bit"] = bit
    for tag in ("on_color", "off_color"):
        if (c := hex_colour(el.find(f"{tag}/color"))) is not None:
            options[tag] = c
    return options


def _input(el: Element) -> dict[str, Any]:
    return {"kind": "number", "confirm": False}


def _toggle(el: Element) -> dict[str, Any]:
    return {"confirm": _bool(el, "confirm_dialog") or _bool(el, "show_confirm_dialog")}


def _menu(el: Element) -> dict[str, Any]:
    return {}


BOB: dict[str, tuple[str, Mapper]] = {
    "textupdate": ("label", _label_options),
    "textentry": ("input", _input),
    "led": ("led", _led),
    "byte_monitor": ("led", _led),
    "progressbar": ("bar", _range_options()),
    "meter": ("gauge", _range_options(False)),
    "gauge": ("gauge", _range_options(False)),
    "tank": ("bar", _range_options(True)),
    "thermometer": ("bar", _range_options(True)),
    "bool_button": ("toggle", _toggle),
    "checkbox": ("toggle", _toggle),
    "combo": ("menu", _menu),
    "choice": ("menu", _menu),
    "radio": ("menu", _menu),
    "slider": ("input", _input),
    "scaledslider": ("input", _input),
    "spinner": ("input", _input),
    "scrollbar": ("input", _input),
    "image": ("image", _none),
    "thumbwheel": ("input", _input),
    "table": ("table", _none),
}
OPI: dict[str, tuple[str, Mapper]] = {
    "TextUpdate": ("label", _label_options),
    "TextInput": ("input", _input),
    "LED": ("led", _led),
    "ImageBoolIndicator": ("led", _led),
    "bytemonitor": ("led", _led),
    "progressbar": ("bar", _range_options()),
    "MeterWidget": ("gauge", _range_options(False)),
    "gauge": ("gauge", _range_options(False)),
    "tank": ("bar", _range_options(True)),
    "thermometer": ("bar", _range_options(True)),
    "BoolButton": ("toggle", _toggle),
    "checkbox": ("toggle", _toggle),
    "combo": ("menu", _menu),
    "choiceButton": ("menu", _menu),
    "radioBox": ("menu", _menu),
    "scaledslider": ("input", _input),
    "spinner": ("input", _input),
    "scrollbar": ("input", _input),
    "intensityGraph": ("image", _none),
    "ThumbWheel": ("input", _input),
}
#: Containers: their children are placed relative to them.
GROUPS = {"group", "groupingContainer"}
#: Widgets showing another display file (inlined when the file can be read).
EMBEDDED = {"embedded", "linkingContainer"}
MAX_EMBED_DEPTH = 8
#: Reads an embedded display by the name a display gives it (None: not found).
Resolver = Callable[[str], bytes | None]
#: Plain frames, drawn as an untitled section.
FRAMES = {"rectangle", "Rectangle", "RoundedRectangle"}
LABELS = {"label", "Label"}
BUTTONS = {"action_button", "ActionButton"}
#: Navigation tabs: one display per tab.
NAVTABS = {"navtabs"}
#: Macro names the screen schema accepts.
_MACRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
XY = {"xyplot", "xyGraph", "stripchart"}
#: Rules a widget may hold (the screen schema's limit).
MAX_RULES = 50
#: Byte monitors: one LED per bit, side by side in the widget's box.
BYTE_MONITORS = {"byte_monitor", "bytemonitor"}
MAX_BITS = 64
#: Tabbed containers: each tab holds its own widgets.
TABBED = {"tabs", "tab"}
#: Height of a tabbed container's tab bar, when the display does not say.
TAB_BAR_PX = 30


def _bits(el: Element, led: dict[str, Any], x: float, y: float, w: float,
          h: float) -> Iterator[dict[str, Any]]:  # fmt: skip
    """A byte monitor's LEDs, one per bit in its box (highest bit first, left to
    right or top to bottom, unless ``bitReverse``); the first is ``led`` itself."""
    start = max(0, min(63, int(_num(el, "startBit", 0))))
    count = max(1, min(MAX_BITS - start, int(_num(el, "numBits", 8))))
    bits = list(range(start + count - 1, start - 1, -1))
    if _bool(el, "bitReverse"):
        bits.reverse()
    across = _bool(el, "horizontal", True)
    step = (w if across else h) / count
    for k, bit in enumerate(bits):
        one = led if k == 0 else {**led, "options": dict(led.get("options", {}))}
        one["options"] = {**one.get("options", {}), "bit": bit}
        one["box"] = (box(x + k * step, y, step, h) if across
                      else box(x, y + k * step, w, step))  # fmt: skip
        yield one


def parse_xml(data: bytes, file: str) -> Element:
    """The root element; :class:`ScreenImportError` with the line for malformed
    XML, and for any DTD, entity or external reference (refused, not expanded)."""
    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True,
                          forbid_external=True)  # fmt: skip
    except DefusedXmlException as exc:
        raise ScreenImportError(file, f"refused: {exc}") from None
    except ParseError as exc:
        line = getattr(exc, "position", (None, None))[0]
        raise ScreenImportError(file, f"malformed XML: {exc}", line) from None


class DisplayImporter:
    """One ``.bob`` or ``.opi`` display → widgets of a Synoptic screen."""

    def __init__(
        self,
        file: str,
        kind: str,
        macros: dict[str, str],
        resolve: Resolver | None = None,
        stack: tuple[str, ...] = (),
        report: Report | None = None,
        siblings: frozenset[str] = frozenset(),
        keep: frozenset[str] = frozenset(),
    ) -> None:
        self.file = file
        self.kind = kind  # "bob" | "opi"
        self.macros = macros
        self.resolve = resolve
        self.stack = (*stack, file)  # the displays embedding this one, and it
        self.report = report or Report(file, kind)
        self.types = BOB if kind == "bob" else OPI
        self.siblings = siblings  # screens imported together: embedded, not inlined
        self.keep = keep  # the screen's own macros: left for the browser
        self.defaults: dict[str, str] = {}  # their values, for rule expressions

    def _x(self, text: str, macros: dict[str, str]) -> str:
        """``text`` with the macros known here expanded (the screen's own kept)."""
        return expand(text, macros, self.file, self.keep)[0]

    def _link_macros(self, el: Element, macros: dict[str, str]) -> dict[str, str]:
        """An action's or embedding widget's ``<macros>`` (values expanded here)."""
        out: dict[str, str] = {}
        for child in el.findall("macros/*"):
            if child.tag != "include_parent_macros" and _MACRO_NAME.match(child.tag):
                out[child.tag] = self._x(child.text or "", macros)[:1000]
        return dict(list(out.items())[:200])

    def type_of(self, el: Element) -> str:
        if self.kind == "bob":
            return el.get("type", "") or "widget"
        return (el.get("typeId", "") or "widget").removeprefix(OPI_PREFIX)

    def _macros_of(
        self, el: Element, inherited: dict[str, str], defaults: bool = False
    ) -> dict[str, str]:
        """The element's ``<macros>`` over ``inherited`` (under it with
        ``defaults``: an embedded display's own macros are defaults for what its
        embedding widget gives); the command line's win."""
        own = el.find("macros")
        merged = {**inherited, **self.macros}
        fixed = set(self.macros) | (set(inherited) if defaults else set())
        if own is not None:
            for child in own:
                if child.tag != "include_parent_macros" and child.tag not in fixed:
                    merged[child.tag] = self._x(child.text or "", merged)
        return merged

    def convert(self, root: Element) -> dict[str, Any]:
        if root.tag != "display":
            raise ScreenImportError(self.file, f"not a display: root <{root.tag}>")
        version = root.get("version", "")
        if version and not version.startswith(("1.", "2.")):
            raise ScreenImportError(self.file, f"unknown {self.kind} version {version}")
        # Without command-line macros, the display's own become the screen's and
        # their references stay for the browser; with them, all are expanded.
        own = self._link_macros(root, {}) if not self.macros else {}
        self.keep = frozenset(own)
        self.defaults = dict(own)
        expanded = self._macros_of(root, {})
        for value in expanded.values():  # a macro loop is refused either way
            expand(value, expanded, self.file)
        macros = expanded if self.macros else {}
        if self.macros:
            own = dict([(k, v[:1000]) for k, v in macros.items()
                        if _MACRO_NAME.match(k)][:200])  # fmt: skip
        width = _num(root, "width", 800) or 800
        height = _num(root, "height", 600) or 600
        widgets = list(self._widgets(root, 0.0, 0.0, macros))
        title = self._x(_text(root, "name") or self.file, macros)
        layout = canvas_layout(width, height)
        if bg := style_of(root).get("bg"):
            layout["background"] = bg
        screen: dict[str, Any] = {
            "version": 1,
            "title": (title or "Imported")[:200],
            "description": f"Imported from {self.file} ({self.kind})"[:2000],
            "layout": layout,
            "widgets": widgets,
        }
        if own:
            screen["macros"] = own
        return screen

    def _widgets(
        self, parent: Element, ox: float, oy: float, macros: dict[str, str]
    ) -> Iterator[dict[str, Any]]:
        for el in parent.findall("widget"):
            kind = self.type_of(el)
            x, y = ox + _num(el, "x"), oy + _num(el, "y")
            w, h = _num(el, "width", 100), _num(el, "height", 20)
            local = (
                self._macros_of(el, macros) if el.find("macros") is not None else macros
            )
            name = self._x(_text(el, "name"), local)
            self._skipped(el, kind, name)
            embed = self._embed(el, kind, local) if kind in EMBEDDED else None
            inner = (
                self._embedded(el, kind, local)
                if kind in EMBEDDED and embed is None
                else None
            )
            if embed is not None:
                widget = self.report.mapped_as(kind, embed)
            elif inner is not None:
                widget = self.report.mapped_as(kind, {"type": "section"})
            elif kind in EMBEDDED:
                widget = self.report.placeholder_for(
                    kind, "embedded display neither found nor imported with it",
                    w, h, name)  # fmt: skip
            else:
                widget = self._one(el, kind, name, local, w, h)
            widget["box"] = box(x, y, w, h)
            self._look(el, kind, name, local, widget)
            if kind in BYTE_MONITORS and widget["type"] == "led":
                yield from _bits(el, widget, x, y, w, h)
                continue
            yield widget
            if kind in GROUPS:
                yield from self._widgets(el, x, y, local)
            elif inner is not None:
                child, root, inner_macros = inner
                yield from child._widgets(root, x, y, inner_macros)

    def _look(self, el: Element, kind: str, name: str, macros: dict[str, str],
              widget: dict[str, Any]) -> None:  # fmt: skip
        """Style, simple rules (the others reported) and the base visibility."""
        style = {**style_of(el), **widget.get("style", {})}
        if widget["type"] == "shape" and (stroke := line_colour(el)):
            style["fg"] = stroke
        if style:
            widget["style"] = style
        if _text(el, "visible").lower() == "false":
            widget["visible"] = False

        def channel_of(raw: str) -> str | None:
            return convert_channel(self._x(raw, macros))[0]

        def expand_text(text: str) -> str:
            return expand(text, {**self.defaults, **macros}, self.file)[0]

        rules, skipped = rules_of(el, channel_of, self.kind, expand_text)
        if rules := rules + widget.get(
            "rules", []
        ):  # the display's rules first: they win
            widget["rules"] = rules[:MAX_RULES]
        self.report.skipped += [f"{s} of {kind} {name!r}" for s in skipped]

    def _embed(
        self, el: Element, kind: str, macros: dict[str, str]
    ) -> dict[str, Any] | None:
        """An ``embed`` of a display imported alongside this one (else None)."""
        raw = _text(el, "file") or _text(el, "opi_file")
        if not raw:
            return None
        target = screen_name(self._x(raw, macros))
        if target not in self.siblings:
            return None
        options: dict[str, Any] = {"screen": target}
        if own := self._link_macros(el, macros):
            options["macros"] = own
        options["resize"] = "fit" if _text(el, "resize") in ("1", "2") else "none"
        return {"type": "embed", "options": options}

    def _embedded(
        self, el: Element, kind: str, macros: dict[str, str]
    ) -> tuple[DisplayImporter, Element, dict[str, str]] | None:
        """The display an embedded widget shows, when it can be read: an importer
        for it, its root and its macros (the file's own, under the embedding
        widget's). None: no file or none found (the widget stays a placeholder)."""
        raw = _text(el, "file") or _text(el, "opi_file")
        if not raw or self.resolve is None:
            return None
        name = self._x(raw, macros)
        if name in self.stack or len(self.stack) > MAX_EMBED_DEPTH:
            chain = " → ".join((*self.stack, name))
            raise ScreenImportError(self.file, f"embedded display loop: {chain}")
        data = self.resolve(name)
        if data is None:
            self.report.warnings.append(f"embedded display {name!r} not found")
            return None
        sub_kind = "opi" if name.lower().endswith(".opi") else "bob"
        child = DisplayImporter(name, sub_kind, self.macros, self.resolve, self.stack,
                                self.report, self.siblings, self.keep)  # fmt: skip
        child.defaults = self.defaults
        root = parse_xml(data, name)
        return child, root, child._macros_of(root, macros, defaults=True)

    def _skipped(self, el: Element, kind: str, name: str) -> None:
        for script in el.iterfind("scripts/*"):
            what = script.get("file") or script.get("pathString") or script.tag
            self.report.skipped.append(f"script {what!r} of {kind} {name!r} (not run)")

    def _pv(
        self, el: Element, tag: str, macros: dict[str, str]
    ) -> tuple[str | None, str]:
        raw = _text(el, tag)
        if not raw:
            return None, f"no {tag}"
        return convert_channel(self._x(raw, macros))

    def _one(self, el: Element, kind: str, name: str, macros: dict[str, str],
             w: float, h: float) -> dict[str, Any]:  # fmt: skip
        text = self._x(_text(el, "text"), macros)
        if kind in LABELS:
            return self.report.mapped_as(
                kind, {"type": "text", "options": {"text": text[:2000]}}
            )
        if kind in GROUPS or kind in FRAMES:
            widget: dict[str, Any] = {"type": "section"}
            if name and kind in GROUPS:
                widget["title"] = name[:200]
            return self.report.mapped_as(kind, widget)
        if kind in BUTTONS:
            return self._button(el, kind, name, text, macros, w, h)
        if kind in XY:
            return self._plot(el, kind, name, macros, w, h)
        if kind in NAVTABS:
            return self._tabs(el, kind, name, macros, w, h)
        if kind in TABBED:
            return self._tabbed(el, kind, name, macros, w, h)
        if kind == "multi_state_led":
            return self._states(el, kind, name, macros, w, h)
        if kind in SHAPES:
            file = self._x(_text(el, "file") or _text(el, "image_file"), macros)
            options = shape_options(el, kind, self.kind, file)
            beside = self.resolve(file) if self.resolve and file else None
            if options["kind"] == "picture" and (src := picture_src(file, beside)):
                options["src"] = src  # the image beside the display, carried along
            return self.report.mapped_as(kind, {"type": "shape", "options": options})
        if kind not in self.types:
            return self.report.placeholder_for(kind, "no Synoptic widget for this type", w, h,
                                     name, text)  # fmt: skip
        target, options_of = self.types[kind]
        uri, why = self._pv(el, "pv_name", macros)
        if uri is None:
            return self.report.placeholder_for(kind, why, w, h, name, text)
        widget = {"type": target, "channels": [uri]}
        options = options_of(el)
        if options:
            widget["options"] = options
        return self.report.mapped_as(kind, widget)

    def _button(self, el: Element, kind: str, name: str, text: str,
                macros: dict[str, str], w: float, h: float) -> dict[str, Any]:  # fmt: skip
        for action in el.iterfind("actions/action"):
            if action.get("type", "").lower() != "write_pv":
                continue
            uri, why = self._pv(action, "pv_name", macros)
            if uri is None:
                return self.report.placeholder_for(kind, why, w, h, name, text)
            raw = self._x(_text(action, "value"), macros)
            try:
                value: Any = float(raw) if raw.strip() else 0
                value = int(value) if float(value).is_integer() else value
            except ValueError:
                value = raw
            options: dict[str, Any] = {"value": value, "confirm": False}
            if text:
                options["label"] = text[:80]
            return self.report.mapped_as(kind, {"type": "button", "channels": [uri],
                                       "options": options})  # fmt: skip
        for action in el.iterfind("actions/action"):
            if action.get("type", "").lower() == "open_display":
                return self.report.mapped_as(kind, self._link(action, text, macros))
        actions = [a.get("type", "?") for a in el.iterfind("actions/action")]
        return self.report.placeholder_for(kind, f"actions not mapped: {', '.join(actions) or 'none'}",
                                 w, h, name, text)  # fmt: skip

    def _plot(self, el: Element, kind: str, name: str, macros: dict[str, str],
              w: float, h: float) -> dict[str, Any]:  # fmt: skip
        """An XY plot with an X PV → ``xy`` (X, then every trace's Y); without →
        ``spectrum`` (arrays by index) for a ``.bob`` XY plot, ``trend`` for strip
        charts and BOY XY graphs (time plots)."""
        if self.kind == "bob":
            pairs = [(_text(t, "x_pv"), _text(t, "y_pv"))
                     for t in el.iterfind("traces/trace") if _text(t, "y_pv")]  # fmt: skip
        else:
            count = min(int(_num(el, "trace_count", 0)), 20)
            pairs = [(_text(el, f"trace_{i}_x_pv"), _text(el, f"trace_{i}_y_pv"))
                     for i in range(count) if _text(el, f"trace_{i}_y_pv")]  # fmt: skip
        if not pairs:
            return self.report.placeholder_for(kind, "no traces", w, h, name)
        names = [y for _, y in pairs]
        if pairs[0][0] and kind != "stripchart":
            target, names = "xy", [pairs[0][0], *names]
        else:
            target = "spectrum" if kind == "xyplot" else "trend"
        uris: list[str] = []
        for raw in names:
            uri, why = convert_channel(self._x(raw, macros))
            if uri is None:
                return self.report.placeholder_for(kind, why, w, h, name)
            uris.append(uri)
        widget: dict[str, Any] = {"type": target, "channels": uris}
        if name:
            widget["title"] = name[:200]
        return self.report.mapped_as(kind, widget)

    def _link(
        self, action: Element, text: str, macros: dict[str, str]
    ) -> dict[str, Any]:
        """An open-display action as a ``link`` to the screen its file becomes."""
        raw = _text(action, "file") or _text(action, "path")
        options: dict[str, Any] = {"screen": screen_name(self._x(raw, macros))}
        if own := self._link_macros(action, macros):
            options["macros"] = own
        target = (_text(action, "target") or _text(action, "mode")).lower()
        if target in ("tab", "window"):
            options["target"] = target
        elif target in ("standalone", "7", "8"):
            options["target"] = "window"
        elif target and target not in ("replace", "0"):
            options["target"] = "tab"
        title = text or self._x(_text(action, "description"), macros) or raw
        return {"type": "link", "title": title[:200] or "Open", "options": options}

    def _states(self, el: Element, kind: str, name: str, macros: dict[str, str],
                w: float, h: float) -> dict[str, Any]:  # fmt: skip
        """A multi-state LED: a lamp (ellipse, or square) filled with the colour of
        the state its value equals (one rule per state), else its fallback."""
        uri, why = self._pv(el, "pv_name", macros)
        if uri is None:
            return self.report.placeholder_for(kind, why, w, h, name)
        rules: list[dict[str, Any]] = []
        for state in el.iterfind("states/state"):
            value, fill = (
                _num(state, "value", math.nan),
                hex_colour(state.find("color/color")),
            )
            if math.isfinite(value) and fill is not None:
                number = int(value) if value.is_integer() else value
                rules.append({"channel": uri, "op": "==", "value": number,
                              "set": {"bg": fill}})  # fmt: skip
        options: dict[str, Any] = {"kind": "ellipse"}
        if _bool(el, "square"):
            options = {"kind": "polygon", "points": [[0, 0], [w, 0], [w, h], [0, h]]}
        widget: dict[str, Any] = {"type": "shape", "options": options,
                                  "rules": rules[:MAX_RULES]}  # fmt: skip
        if fallback := hex_colour(el.find("fallback_color/color")):
            widget["style"] = {"bg": fallback}
        return self.report.mapped_as(kind, widget)

    def _tabbed(self, el: Element, kind: str, name: str, macros: dict[str, str],
                w: float, h: float) -> dict[str, Any]:  # fmt: skip
        """A tabbed container: each tab with its own widgets, placed in the tab
        body (Phoebus: ``<tabs><tab><children>``; BOY: a grouping container per
        tab, titled by ``tab_N_title``)."""
        bar = _num(el, "tab_height", TAB_BAR_PX) or TAB_BAR_PX
        body = {"width": max(1, min(20000, round(w))),
                "height": max(1, min(20000, round(h - bar)))}  # fmt: skip
        if self.kind == "bob":
            holders = [(self._x(_text(t, "name"), macros), t.find("children"))
                       for t in el.iterfind("tabs/tab")]  # fmt: skip
        else:
            holders = [(self._x(_text(el, f"tab_{i}_title"), macros), child)
                       for i, child in enumerate(el.findall("widget"))]  # fmt: skip
        tabs: list[dict[str, Any]] = []
        for k, (title, holder) in enumerate(holders[:100]):
            inner = [] if holder is None else list(self._widgets(holder, 0, 0, macros))
            tabs.append({"title": (title or f"Tab {k + 1}")[:200],
                         "widgets": inner[:2000], **body})  # fmt: skip
        if not tabs:
            return self.report.placeholder_for(kind, "no tabs", w, h, name)
        return self.report.mapped_as(kind, {"type": "tabs", "options": {"tabs": tabs}})

    def _tabs(self, el: Element, kind: str, name: str, macros: dict[str, str],
              w: float, h: float) -> dict[str, Any]:  # fmt: skip
        """Navigation tabs: a tab per display."""
        tabs: list[dict[str, Any]] = []
        for tab in el.iterfind("tabs/tab"):
            raw = self._x(_text(tab, "file"), macros)
            if not raw:
                continue
            entry: dict[str, Any] = {
                "title": (self._x(_text(tab, "name"), macros) or raw)[:200],
                "screen": screen_name(raw),
            }
            if own := self._link_macros(tab, macros):
                entry["macros"] = own
            tabs.append(entry)
        if not tabs:
            return self.report.placeholder_for(kind, "no tabs", w, h, name)
        return self.report.mapped_as(
            kind, {"type": "tabs", "options": {"tabs": tabs[:100]}}
        )


def import_display(data: bytes, file: str, kind: str, macros: dict[str, str],
                   resolve: Resolver | None = None,
                   siblings: frozenset[str] = frozenset()) -> tuple[dict[str, Any], Report]:  # fmt: skip
    """A ``.bob``/``.opi`` display's bytes → (screen, report); ``resolve`` reads
    embedded displays (without it they stay placeholders); an embedded display
    among ``siblings`` (names of screens imported together) becomes an ``embed``."""
    importer = DisplayImporter(file, kind, macros, resolve, siblings=siblings)
    return importer.convert(parse_xml(data, file)), importer.report
