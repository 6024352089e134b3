"""Phoebus Display Builder (``.bob``) and CS-Studio BOY (``.opi``) displays: XML
of nested ``<widget>`` elements with pixel positions (a group's children relative
to it), PV names, macros, actions, rules and scripts; they become canvas screens
(pixel boxes, group children in absolute coordinates). Parsed with defusedxml: a
DTD, entity declarations and external references are refused.

This module walks the display (groups, embedded displays, templates, tabs, grid
layouts) and keeps the macro scopes (:mod:`synoptic_importer.macros`); the
widgets themselves are made by :mod:`synoptic_importer.widgets`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from xml.etree.ElementTree import Element

from synoptic_importer.actions import Actions, actions_of, link_macros, specs_of
from synoptic_importer.common import (
    Link,
    Report,
    ScreenImportError,
    box,
    canvas_layout,
    screen_name,
)
from synoptic_importer.kinds import phoebus_type
from synoptic_importer.macros import SCREEN_NAME, Env, apply_specs, substitute
from synoptic_importer.paths import Context, FolderContext, Resolver
from synoptic_importer.rules import rules_of
from synoptic_importer.shapes import line_colour
from synoptic_importer.style import style_of
from synoptic_importer.widgets import View, make_widget
from synoptic_importer.xmlutil import flag, num, parse_xml, text

__all__ = ["DisplayImporter", "Resolver", "import_display", "parse_xml"]

T = TypeVar("T")

#: Containers: their children are placed relative to them.
GROUPS = {"group"}
EMBEDDED = {"embedded"}
MAX_EMBED_DEPTH = 8
#: Rules a widget may hold (the screen schema's limit).
MAX_RULES = 50
#: Tabbed containers: each tab holds its own widgets.
TABBED = {"tabs"}
#: Height of a tabbed container's tab bar, when the display does not say.
TAB_BAR_PX = 30
MAX_TEMPLATE_INSTANCES = 200
#: Types whose own click is not theirs to give to an action (they take input).
INTERACTIVE = {"input", "menu", "toggle", "button", "link", "actions", "command",
               "tabs", "embed"}  # fmt: skip


@dataclass(frozen=True)
class Scope:
    """Where widgets are placed (the container's offset, its scale) and the
    macros in effect there."""

    env: Env
    ox: float = 0.0
    oy: float = 0.0
    sx: float = 1.0
    sy: float = 1.0

    def at(self, x: float, y: float) -> tuple[float, float]:
        return self.ox + x * self.sx, self.oy + y * self.sy


class DisplayImporter:
    """One ``.bob`` or ``.opi`` display → widgets of a Synoptic screen."""

    def __init__(
        self,
        file: str,
        kind: str,
        fixed: dict[str, str],
        context: Context,
        report: Report | None = None,
        stack: tuple[str, ...] = (),
        top: DisplayImporter | None = None,
    ) -> None:
        self.file = file
        self.kind = kind  # "bob" | "opi"
        self.fixed = fixed  # command-line macros: they win everywhere
        self.context = context
        self.stack = (*stack, file)  # the displays embedding this one, and it
        self.report = report or Report(file, kind)
        self._top = top  # None: this is the top display (no cycle to itself)
        #: Referenced displays parsed in this run (shared by a set's imports).
        shared = getattr(context, "parsed", None)
        self.parsed: dict[str, Element] = (
            top.parsed if top else shared if shared is not None else {}
        )
        #: What is read from an element once, whatever the macros (an embedded
        #: display's elements are met once per place it is embedded): the top
        #: display's own elements in a memo of its own (gone with it, its tree
        #: with it), the referenced displays' in the run's (a set's: shared).
        memo = getattr(context, "memo", None)
        self._memo: dict[tuple[int, str], tuple[Element, Any]] = (
            {} if top is None else memo if memo is not None else top._memo
        )

    @property
    def top(self) -> DisplayImporter:
        """The display being imported (this one, or the one embedding it)."""
        return self._top or self

    def memo(self, el: Element, what: str, make: Callable[[Element], T]) -> T:
        """``make(el)``, once per element of this run (``el`` kept alive with it,
        so that its id is not reused)."""
        key = (id(el), what)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is el:
            return hit[1]  # type: ignore[no-any-return]
        value = make(el)
        self._memo[key] = (el, value)
        return value

    # ---------------------------------------------------------------- display

    def display_env(self, root: Element, base: Env) -> Env:
        """The macros of a display: ``base`` (the embedding widget's), the
        display's own over them (Phoebus: a display adds or replaces macros), the
        command line's over all; ``DNAME``/``DID`` name the top display."""
        env = apply_specs(specs_of(root.find("macros")), {**base, **self.fixed},
                          frozenset(self.fixed))  # fmt: skip
        top = self.top
        env["DNAME"] = top.dname
        env["DID"] = top.did
        return env

    def convert(self, root: Element) -> dict[str, Any]:
        if root.tag != "display":
            raise ScreenImportError(self.file, f"not a display: root <{root.tag}>")
        version = root.get("version", "")
        if version and not version.startswith(("1.", "2.")):
            raise ScreenImportError(self.file, f"unknown {self.kind} version {version}")
        self.dname = text(root, "name") or screen_name(self.file)
        self.did = "DP" + hashlib.blake2b(self.file.encode(), digest_size=4).hexdigest()
        env = self.display_env(root, {})
        width = num(root, "width", 800) or 800
        height = num(root, "height", 600) or 600
        widgets = list(self.widgets(root, Scope(env)))
        title = substitute(text(root, "name") or self.file, env)
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
        if self.fixed:  # the values given on the command line, and those they made
            macros = {k: v[:1000] for k, v in env.items()
                      if SCREEN_NAME.match(k) and k not in ("DID", "DNAME")}  # fmt: skip
            screen["macros"] = dict(list(macros.items())[:200])
        return screen

    # ---------------------------------------------------------------- widgets

    def widgets(self, parent: Element, scope: Scope) -> Iterator[dict[str, Any]]:
        """The widgets under ``parent``, containers' children after them."""
        children = parent.findall("widget")
        grid = next((c for c in children
                     if phoebus_type(c, self.kind)[1] == "grid_layout"), None)  # fmt: skip
        places = _grid_places(grid, children, self.kind) if grid is not None else {}
        for el in children:
            kind, ptype = phoebus_type(el, self.kind)
            if ptype == "grid_layout":
                self.report.absorb(kind, "its container's widgets laid out in a grid")
                continue
            yield from self.widget(el, kind, ptype, scope, places.get(id(el)))

    def widget(self, el: Element, kind: str, ptype: str, scope: Scope,
               place: tuple[float, float] | None = None) -> Iterator[dict[str, Any]]:  # fmt: skip
        """One source widget: its Synoptic widget(s), then its children's."""
        x, y = place or (num(el, "x"), num(el, "y"))
        ax, ay = scope.at(x, y)
        w, h = num(el, "width", 100) * scope.sx, num(el, "height", 20) * scope.sy
        own = el.find("macros")
        env = scope.env
        if own is not None and ptype in GROUPS | {"array"}:
            env = apply_specs(specs_of(own), env, frozenset(self.fixed),
                              flag(own, "include_parent_macros", True))  # fmt: skip
        view = View(el, kind, ptype, self.kind, env, w, h, self)
        self._scripts(el, kind, view.name)
        inner: tuple[DisplayImporter, Element, Scope] | None = None
        extra: list[dict[str, Any]] = []
        if ptype in EMBEDDED:
            widget, inner = self._embedded(view, ax, ay)
        elif ptype == "template":
            widget, extra = self._template(view, ax, ay)
        elif ptype in TABBED:
            widget = self._tabbed(view)
        elif ptype == "navtabs":
            widget = self._navtabs(view)
        else:
            widget = make_widget(view)
        if not widget.pop("_actions_used", False):  # a button's are its own
            self._attach(widget, self.actions(view))
        if "box" not in widget:
            widget["box"] = box(ax, ay, w, h)
        self._look(view, widget)
        if many := widget.pop("_many", None):  # a byte monitor: one LED per bit
            for k, one in enumerate(many):
                led = widget if k == 0 else {**widget}
                led["options"] = one["options"]
                led["box"] = box(ax + one["x"] * scope.sx, ay + one["y"] * scope.sy,
                                 one["w"] * scope.sx, one["h"] * scope.sy)  # fmt: skip
                if k:  # counted with the source widget, drawn as its own
                    self.report.items.append((kind, led))
                yield led
            return
        yield widget
        yield from extra
        if ptype in GROUPS:
            yield from self.widgets(el, Scope(env, ax, ay, scope.sx, scope.sy))
        elif inner is not None:
            child, root, child_scope = inner
            yield from child.widgets(root, child_scope)

    def actions(self, view: View) -> Actions:
        """The widget's actions (open display, write, web page), links counted."""
        found: list[tuple[str, str, bool | None]] = []

        def linker(path: str) -> tuple[str, bool | None]:
            return self.context.target(self.file, path)

        actions = actions_of(view.el, view.env, linker, found)
        self.report.links += [Link(self.file, p, s, i) for p, s, i in found]
        for note in actions.not_run:
            self.report.skipped.append(f"action {note} of {view.kind} {view.name!r}")
        return actions

    def _attach(self, widget: dict[str, Any], actions: Actions) -> None:
        """Actions of a widget that is not a button (a group, an embedded display,
        a label): kept on it; a click runs them unless it takes input itself."""
        if not actions.actions:
            return
        widget["actions"] = actions.actions
        if widget["type"] not in INTERACTIVE:
            widget["click"] = True

    def _look(self, view: View, widget: dict[str, Any]) -> None:
        """Style, simple rules (the others reported) and the base visibility."""
        el = view.el
        own = self.memo(el, "style", lambda e: style_of(e, view.kids))
        style = {**own, **widget.get("style", {})}
        if widget["type"] == "shape" and (stroke := line_colour(el)):
            style["fg"] = stroke
        if style:
            widget["style"] = style
        if text(el, "visible").lower() == "false":
            widget["visible"] = False

        def channel_of(raw: str) -> str | None:
            return view.pv_of(raw).uri

        def expand_text(raw: str) -> str:
            return substitute(raw, view.env)

        rules, skipped = rules_of(el, channel_of, self.kind, expand_text)
        if rules := rules + widget.get("rules", []):  # the display's rules first
            widget["rules"] = rules[:MAX_RULES]
        self.report.skipped += [f"{s} of {view.kind} {view.name!r}" for s in skipped]

    def _scripts(self, el: Element, kind: str, name: str) -> None:
        holder = el.find("scripts")
        for script in holder if holder is not None else ():
            what = script.get("file") or script.get("pathString") or script.tag
            self.report.skipped.append(f"script {what!r} of {kind} {name!r} (not run)")

    # ---------------------------------------------------------------- embedding

    def _embedded(self, view: View, x: float, y: float
                  ) -> tuple[dict[str, Any], tuple[DisplayImporter, Element, Scope] | None]:  # fmt: skip
        """An embedded display: an ``embed`` of its screen (imported alongside),
        its widgets inlined at its place (in a section), or a placeholder."""
        raw = view.t("file") or view.t("opi_file")
        macros_el = view.el.find("macros")
        env = view.env
        if macros_el is not None:
            env = apply_specs(specs_of(macros_el), env, frozenset(self.fixed),
                              flag(macros_el, "include_parent_macros", True))  # fmt: skip
        if not raw:  # Phoebus shows an empty frame
            return self.report.mapped_as(view.kind, {"type": "section"}), None
        if (screen := self.context.embed_screen(self.file, raw)) is not None:
            options: dict[str, Any] = {"screen": screen}
            if macros := link_macros(env, []):
                options["macros"] = macros
            options["resize"] = "fit" if view.raw("resize") in ("1", "2") else "none"
            return self.report.mapped_as(
                view.kind, {"type": "embed", "options": options}
            ), None
        found = self.context.read(self.file, raw)
        if found is None:
            self.report.warnings.append(f"embedded display {raw!r} not found")
            why = "embedded display neither found nor imported with it"
            return self.report.placeholder_for(view.kind, why, view.w, view.h,
                                               view.name), None  # fmt: skip
        path, data = found
        if path in self.stack or len(self.stack) > MAX_EMBED_DEPTH:
            chain = " → ".join((*self.stack, path))
            raise ScreenImportError(self.file, f"embedded display loop: {chain}")
        sub_kind = "opi" if path.lower().endswith(".opi") else "bob"
        child = DisplayImporter(path, sub_kind, self.fixed, self.context, self.report,
                                self.stack, self.top)  # fmt: skip
        root = parse_cached(self.parsed, data, path)
        if root.tag != "display":
            raise ScreenImportError(path, f"not a display: root <{root.tag}>")
        child_env = child.display_env(root, env)
        holder: Element = root
        if group := view.t("group_name"):  # only one group of the display
            found_group = _find_group(root, group, sub_kind)
            if found_group is None:  # Phoebus shows the frame, empty
                self.report.warnings.append(f"group {group!r} not in {path!r}")
                return self.report.mapped_as(view.kind, {"type": "section"}), None
            holder = found_group
        sx = sy = 1.0
        inner_w = num(root, "width", 0) if holder is root else num(holder, "width", 0)
        inner_h = num(root, "height", 0) if holder is root else num(holder, "height", 0)
        if _scales(view, sub_kind) and inner_w > 0 and inner_h > 0:
            sx, sy = view.w / inner_w, view.h / inner_h
            if view.raw("resize") == "1" or (self.kind == "opi" and not
                                              flag(view.el, "stretch", False)):  # fmt: skip
                sx = sy = min(sx, sy)
        scope = Scope(child_env, x, y, sx, sy)
        section = self.report.mapped_as(view.kind, {"type": "section"})
        return section, (child, holder, scope)

    def _template(self, view: View, x: float, y: float
                  ) -> tuple[dict[str, Any], list[dict[str, Any]]]:  # fmt: skip
        """A template instance widget: its display once per instance (each with
        its own macros), side by side or stacked, wrapped to the widget's box."""
        raw = view.t("file")
        found = self.context.read(self.file, raw) if raw else None
        if found is None:
            why = "template display not found" if raw else "no display file"
            return self.report.placeholder_for(view.kind, why, view.w, view.h,
                                               view.name), []  # fmt: skip
        path, data = found
        if path in self.stack or len(self.stack) > MAX_EMBED_DEPTH:
            chain = " → ".join((*self.stack, path))
            raise ScreenImportError(self.file, f"embedded display loop: {chain}")
        root = parse_cached(self.parsed, data, path)
        sub_kind = "opi" if path.lower().endswith(".opi") else "bob"
        iw, ih = num(root, "width", 100) or 100, num(root, "height", 50) or 50
        gap = num(view.el, "gap", 10)
        horizontal = flag(view.el, "horizontal", False)
        wrap = max(0, int(num(view.el, "wrap_count", 0)))
        out: list[dict[str, Any]] = []
        for k, instance in enumerate(
            view.el.findall("instances/instance")[:MAX_TEMPLATE_INSTANCES]
        ):
            env = apply_specs(specs_of(instance.find("macros")), view.env,
                              frozenset(self.fixed))  # fmt: skip
            along, across = (k % wrap, k // wrap) if wrap else (k, 0)
            dx = along * (iw + gap) if horizontal else across * (iw + gap)
            dy = across * (ih + gap) if horizontal else along * (ih + gap)
            child = DisplayImporter(path, sub_kind, self.fixed, self.context,
                                    self.report, self.stack, self.top)  # fmt: skip
            child_env = child.display_env(root, env)
            out += child.widgets(root, Scope(child_env, x + dx, y + dy))
        section = self.report.mapped_as(view.kind, {"type": "section"})
        return section, out

    # ---------------------------------------------------------------- tabs

    def _tabbed(self, view: View) -> dict[str, Any]:
        """A tabbed container: each tab with its own widgets, placed in the tab
        body (Phoebus: ``<tabs><tab><children>``; BOY: a grouping container per
        tab, titled by ``tab_N_title``)."""
        el = view.el
        bar = num(el, "tab_height", TAB_BAR_PX) or TAB_BAR_PX
        body = {"width": max(1, min(20000, round(view.w))),
                "height": max(1, min(20000, round(view.h - bar)))}  # fmt: skip
        if self.kind == "bob":
            holders = [(view.s(text(t, "name")), t.find("children"))
                       for t in el.iterfind("tabs/tab")]  # fmt: skip
        else:
            holders = [(view.t(f"tab_{i}_title"), child)
                       for i, child in enumerate(el.findall("widget"))]  # fmt: skip
        tabs: list[dict[str, Any]] = []
        for k, (title, holder) in enumerate(holders[:100]):
            inner: list[dict[str, Any]] = []
            if holder is not None:
                if self.kind == "opi":  # the tab's group: its children, its macros
                    own = holder.find("macros")
                    env = (apply_specs(specs_of(own), view.env, frozenset(self.fixed))
                           if own is not None else view.env)  # fmt: skip
                    inner = list(self.widgets(holder, Scope(env)))
                else:
                    inner = list(self.widgets(holder, Scope(view.env)))
            tabs.append({"title": (title or f"Tab {k + 1}")[:200],
                         "widgets": inner[:2000], **body})  # fmt: skip
        if not tabs:
            return self.report.placeholder_for(view.kind, "no tabs", view.w, view.h,
                                               view.name)  # fmt: skip
        return self.report.mapped_as(
            view.kind, {"type": "tabs", "options": {"tabs": tabs}}
        )

    def _navtabs(self, view: View) -> dict[str, Any]:
        """Navigation tabs: a tab per display, each a link-like reference."""
        tabs: list[dict[str, Any]] = []
        for tab in view.el.iterfind("tabs/tab"):
            raw = view.s(text(tab, "file"))
            if not raw:
                continue
            screen, inside = self.context.target(self.file, raw)
            self.report.links.append(Link(self.file, raw, screen, inside))
            env = apply_specs(specs_of(tab.find("macros")), view.env,
                              frozenset(self.fixed))  # fmt: skip
            entry: dict[str, Any] = {
                "title": (view.s(text(tab, "name")) or raw)[:200],
                "screen": screen,
            }
            if macros := link_macros(env, []):
                entry["macros"] = macros
            tabs.append(entry)
        if not tabs:
            return self.report.placeholder_for(view.kind, "no tabs", view.w, view.h,
                                               view.name)  # fmt: skip
        return self.report.mapped_as(
            view.kind, {"type": "tabs", "options": {"tabs": tabs[:100]}}
        )


def _scales(view: View, sub_kind: str) -> bool:
    """Whether an embedding widget scales the embedded display to its box:
    Phoebus ``resize`` 1 (fit, keeping proportions) or 3 (stretch); BOY
    ``resize_behaviour`` 0 (size the OPI to fit the container)."""
    if view.source == "bob":
        return view.raw("resize") in ("1", "3")
    return view.raw("resize_behaviour") == "0"


def _find_group(root: Element, name: str, kind: str) -> Element | None:
    """The first group of a display named ``name`` (depth first)."""
    for el in root.iter("widget"):
        if text(el, "name") == name and phoebus_type(el, kind)[1] == "group":
            return el
    return None


def _grid_places(grid: Element, children: list[Element], kind: str
                 ) -> dict[int, tuple[float, float]]:  # fmt: skip
    """BOY's grid layout: the container's other widgets placed in
    ``number_of_columns`` columns, ``grid_gap`` apart, in their order."""
    columns = max(1, int(num(grid, "number_of_columns", 3)))
    gap = num(grid, "grid_gap", 2)
    others = [c for c in children if phoebus_type(c, kind)[1] != "grid_layout"]
    out: dict[int, tuple[float, float]] = {}
    widths = [0.0] * columns
    rows: list[float] = []
    for k, el in enumerate(others):
        col, row = k % columns, k // columns
        widths[col] = max(widths[col], num(el, "width", 100))
        if row >= len(rows):
            rows.append(0.0)
        rows[row] = max(rows[row], num(el, "height", 20))
    for k, el in enumerate(others):
        col, row = k % columns, k // columns
        out[id(el)] = (gap + sum(widths[:col]) + col * gap,
                       gap + sum(rows[:row]) + row * gap)  # fmt: skip
    return out


def _key(data: bytes, file: str) -> str:
    return f"{file}\0{len(data)}\0" + hashlib.blake2b(data, digest_size=16).hexdigest()


def parse_cached(cache: dict[str, Element], data: bytes, file: str) -> Element:
    """:func:`parse_xml`, each referenced file parsed once per import run
    (elements are only read, never changed)."""
    key = _key(data, file)
    root = cache.get(key)
    if root is None:
        root = cache[key] = parse_xml(data, file)
    return root


def import_display(data: bytes, file: str, kind: str, macros: dict[str, str],
                   resolve: Resolver | None = None,
                   siblings: frozenset[str] = frozenset(),
                   context: Context | None = None) -> tuple[dict[str, Any], Report]:  # fmt: skip
    """A ``.bob``/``.opi`` display's bytes → (screen, report). ``context`` looks
    up what the display references (default: ``resolve`` reads embedded
    displays by name, ``siblings`` names the screens imported with it)."""
    importer = DisplayImporter(file, kind, dict(macros),
                               context or FolderContext(resolve, siblings))  # fmt: skip
    # a display another one of the run embedded is parsed already
    root = importer.parsed.get(_key(data, file)) if importer.parsed else None
    if root is None:
        root = parse_xml(data, file)
    return importer.convert(root), importer.report
