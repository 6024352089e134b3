"""One ``.bob``/``.opi`` widget → one Synoptic widget (or a placeholder saying
why). Types are Phoebus's (a BOY type is read as the Phoebus type it becomes,
:mod:`synoptic_importer.kinds`); each maker reads the properties it needs
through a :class:`View`, which expands macros in screen terms."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from xml.etree.ElementTree import Element

from synoptic_importer.actions import Actions, describe
from synoptic_importer.common import Report
from synoptic_importer.kinds import NOT_IN_A_BROWSER
from synoptic_importer.macros import Env, substitute
from synoptic_importer.paths import Context
from synoptic_importer.plots import plot_channels
from synoptic_importer.pvname import PvName, pv_name
from synoptic_importer.shapes import SHAPES, picture_src, shape_options
from synoptic_importer.style import children_of, hex_colour
from synoptic_importer.xmlutil import flag, num, raw_text, text

T = TypeVar("T")


class Importer(Protocol):
    """What a widget maker uses of the display importer
    (:class:`synoptic_importer.display.DisplayImporter`)."""

    file: str
    report: Report
    context: Context

    def actions(self, view: View) -> Actions: ...

    def memo(self, el: Element, what: str, make: Callable[[Element], T]) -> T: ...


MAX_BITS = 64
MAX_SYMBOLS = 100
MAX_ITEMS = 200


@dataclass
class View:
    """A source widget seen from where it stands: its element, types, macros
    in effect, size, and the importer (its report, context and file)."""

    el: Element
    kind: str  # the type as the file names it
    ptype: str  # the Phoebus type it is read as
    source: str  # "bob" | "opi"
    env: Env
    w: float
    h: float
    importer: Importer

    def __post_init__(self) -> None:
        self.kids = self.importer.memo(self.el, "kids", children_of)
        self.name = self.s(self.raw("name"))

    def prop(self, name: str) -> str | None:
        """A widget property named by a reference no macro defines (Phoebus's
        fallback: ``$(pv_name)``, ``$(name)``, ``$(actions)``)."""
        if name == "actions":
            actions = self.el.findall("actions/action")
            return (
                substitute(describe(actions[0]), self.env)
                if len(actions) == 1
                else None
            )
        child = self.kids.get(name)
        if child is None or len(child):
            return None
        return substitute((child.text or "").strip(), self.env)

    def s(self, raw: str) -> str:
        """``raw`` with the macros in effect (and property references) expanded."""
        return substitute(raw, self.env, self.prop)

    def t(self, tag: str, default: str = "") -> str:
        return self.s(self.raw(tag) or default)

    def raw(self, tag: str) -> str:
        """A property as written (stripped; "" when absent)."""
        child = self.kids.get(tag)
        return (child.text or "").strip() if child is not None and child.text else ""

    def pv_of(self, raw: str) -> PvName:
        return pv_name(self.s(raw))

    def pv(self, tag: str = "pv_name") -> PvName:
        raw = self.raw(tag)
        return self.pv_of(raw) if raw else PvName(None, f"no {tag}")

    # ------------------------------------------------------------ reporting

    def mapped(self, widget: dict[str, Any]) -> dict[str, Any]:
        return self.importer.report.mapped_as(self.kind, widget)

    def placeholder(self, reason: str) -> dict[str, Any]:
        return self.importer.report.placeholder_for(
            self.kind, reason, self.w, self.h, self.name, self.t("text")
        )


Maker = Callable[[View], dict[str, Any]]

# ---------------------------------------------------------------- options


def _format(view: View, long_string: bool) -> dict[str, Any]:
    """Precision (when the display fixes it), notation, and a char array shown
    as text (``longString``, or the string format)."""
    options: dict[str, Any] = {}
    prec = num(view.el, "precision", -1)
    if 0 <= prec <= 17 and not flag(view.el, "precision_from_pv", False):
        options["prec"] = int(prec)
    fmt = view.raw("format") if view.source == "bob" else view.raw("format_type")
    notation = ({"2": "exp", "3": "eng"} if view.source == "bob"
                else {"2": "exp", "7": "eng"}).get(fmt)  # fmt: skip
    if notation:
        options["notation"] = notation
    string = fmt == ("6" if view.source == "bob" else "4")
    if long_string or string:
        options["long_string"] = True
    return options


def _ranged(view: View, vertical: bool | None = None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if (
        not flag(view.el, "limits_from_pv", True)
        and view.el.find("minimum") is not None
    ):
        options["min"] = num(view.el, "minimum")
        options["max"] = num(view.el, "maximum", 100.0)
    if vertical is True or (vertical is None and not flag(view.el, "horizontal", True)):
        options["orientation"] = "vertical"
    return options


#: Labels a control without a PV shows (Phoebus draws it, unconnected).
_LABELS = ("text", "label", "on_label", "off_label")


def _one_channel(view: View, target: str, options: dict[str, Any] | None = None,
                 pv: PvName | None = None) -> dict[str, Any]:  # fmt: skip
    pv = pv or view.pv()
    if pv.uri is None:
        if not view.raw("pv_name") and target in ("toggle", "menu", "input"):
            # no PV at all: drawn as what it says, as Phoebus draws it unconnected
            shown = next((t for tag in _LABELS if (t := view.t(tag))), "")
            return _text_widget(view, shown)
        if pv.uri is None and pv.why.startswith("unknown scheme 'sys'"):
            return _system(view, pv.why)
        return view.placeholder(pv.why)
    widget: dict[str, Any] = {"type": target, "channels": [pv.uri]}
    if options:
        widget["options"] = options
    return view.mapped(widget)


def _system(view: View, why: str) -> dict[str, Any]:
    """Phoebus's ``sys://`` channels: the time is a clock; the others (memory,
    host, user of the operator's computer) a browser page does not know."""
    name = view.t("pv_name")
    if name.startswith("sys://time"):
        return view.mapped({"type": "clock", "options": {"digital": True}})
    return view.placeholder(
        f"{name[:80]!r}: a value of the operator's computer "
        "(memory, host, user), which a browser page does not know"
    )


def _text_widget(view: View, text_: str) -> dict[str, Any]:
    return view.mapped({"type": "text", "options": {"text": text_[:2000]}})


# ---------------------------------------------------------------- makers


def label(view: View) -> dict[str, Any]:
    return _text_widget(view, view.s(raw_text(view.el, "text").strip()))


def text_update(view: View) -> dict[str, Any]:
    """A value; without a PV its text, as BOY and Phoebus show it (a title bar
    made of ``$(TITLE)``)."""
    pv = view.pv()
    if pv.uri is None and not view.raw("pv_name"):
        return _text_widget(view, view.s(raw_text(view.el, "text").strip()))
    options = {"compact": True, **_format(view, pv.long_string)}
    return _one_channel(view, "label", options, pv)


def text_entry(view: View) -> dict[str, Any]:
    """A setpoint typed in: number or text by the channel's type; a char array
    written as text (``longString``); without a PV its text."""
    pv = view.pv()
    if pv.uri is None and not view.raw("pv_name"):
        return _text_widget(view, view.s(raw_text(view.el, "text").strip()))
    fmt = _format(view, pv.long_string)
    options: dict[str, Any] = {"kind": "text" if fmt.get("long_string") else "auto",
                               "confirm": False}  # fmt: skip
    if fmt.get("long_string"):
        options["long_string"] = True
    return _one_channel(view, "input", options, pv)


def numeric_control(view: View) -> dict[str, Any]:
    """Sliders, scroll bars, spinners, thumb wheels and knobs: a number input
    with the display's limits and step."""
    options: dict[str, Any] = {"kind": "number", "confirm": False}
    if not flag(view.el, "limits_from_pv", True):
        low, high = num(view.el, "minimum", math.nan), num(view.el, "maximum", math.nan)
        if math.isfinite(low) and math.isfinite(high) and low < high:
            options["min"], options["max"] = low, high
    for tag in ("increment", "step_increment", "step"):
        step = num(view.el, tag, 0)
        if step > 0:
            options["step"] = step
            break
    return _one_channel(view, "input", options)


def led(view: View) -> dict[str, Any]:
    """Bit, and the lamp's on/off colours (as ``#rrggbb``)."""
    options: dict[str, Any] = {"compact": True}
    bit = int(num(view.el, "bit", -1))
    if 0 <= bit <= 63:
        options["bit"] = bit
    for tag in ("on_color", "off_color"):
        if (c := hex_colour(view.el.find(f"{tag}/color"))) is not None:
            options[tag] = c
    if not view.raw("pv_name"):  # unconnected: the lamp, off
        lamp: dict[str, Any] = {"type": "shape", "options": {"kind": "ellipse"}}
        lamp["style"] = {"bg": options.get("off_color", "#3c643c")}
        return view.mapped(lamp)
    return _one_channel(view, "led", options)


def byte_monitor(view: View) -> dict[str, Any]:
    """One LED per bit in the box (highest bit first, left to right or top to
    bottom, unless ``bitReverse``): the first LED carries the others."""
    first = led(view)
    if first["type"] != "led":
        return first
    el = view.el
    start = max(0, min(63, int(num(el, "startBit", 0))))
    count = max(1, min(MAX_BITS - start, int(num(el, "numBits", 8))))
    bits = list(range(start + count - 1, start - 1, -1))
    if flag(el, "bitReverse"):
        bits.reverse()
    across = flag(el, "horizontal", True)
    w, h = num(el, "width", 100), num(el, "height", 20)
    step = (w if across else h) / count
    many = [{"options": {**first.get("options", {}), "bit": bit},
             "x": k * step if across else 0, "y": 0 if across else k * step,
             "w": step if across else w, "h": h if across else step}
            for k, bit in enumerate(bits)]  # fmt: skip
    first["_many"] = many
    return first


def multi_state(view: View) -> dict[str, Any]:
    """A multi-state LED: a lamp (ellipse, or square) filled with the colour of
    the state its value equals (one rule per state), else its fallback colour.
    Phoebus: ``<states><state><value><color>``; BOY: ``state_value_N``,
    ``state_color_N`` for ``state_count`` states."""
    pv = view.pv()
    el = view.el
    if pv.uri is None and not view.raw("pv_name"):  # unconnected: the lamp
        lamp: dict[str, Any] = {"type": "shape", "options": {"kind": "ellipse"}}
        if fill := hex_colour(el.find("state_color_fallback/color")):
            lamp["style"] = {"bg": fill}
        return view.mapped(lamp)
    if pv.uri is None:
        return view.placeholder(pv.why)
    states: list[tuple[float, str | None]] = []
    if view.source == "bob":
        states = [(num(s, "value", math.nan), hex_colour(s.find("color/color")))
                  for s in el.iterfind("states/state")]  # fmt: skip
    else:
        for i in range(min(int(num(el, "state_count", 2)), 64)):
            states.append((num(el, f"state_value_{i}", i),
                           hex_colour(el.find(f"state_color_{i}/color"))))  # fmt: skip
    rules = [{"channel": pv.uri, "op": "==",
              "value": int(v) if v.is_integer() else v, "set": {"bg": fill}}
             for v, fill in states if math.isfinite(v) and fill is not None]  # fmt: skip
    options: dict[str, Any] = {"kind": "ellipse"}
    if flag(el, "square") or flag(el, "square_led"):
        options = {"kind": "polygon",
                   "points": [[0, 0], [view.w, 0], [view.w, view.h], [0, view.h]]}  # fmt: skip
    widget: dict[str, Any] = {"type": "shape", "options": options, "rules": rules[:50]}
    fallback = el.find("fallback_color/color")
    if fallback is None:
        fallback = el.find("state_color_fallback/color")
    if fill := hex_colour(fallback):
        widget["style"] = {"bg": fill}
    return view.mapped(widget)


def toggle(view: View) -> dict[str, Any]:
    confirm = flag(view.el, "confirm_dialog") or flag(view.el, "show_confirm_dialog")
    return _one_channel(view, "toggle", {"confirm": confirm})


def menu(view: View) -> dict[str, Any]:
    """Combo, choice, radio (and BOY's menu button writing an enum): the PV's
    states, or the display's own items when it does not take them from the PV."""
    options: dict[str, Any] = {}
    if not flag(view.el, "items_from_pv", True):
        items = [view.s((i.text or "").strip()) for i in view.el.iterfind("items/item")]
        if items:
            options["items"] = [i[:200] for i in items[:MAX_ITEMS]]
    return _one_channel(view, "menu", options or None)


def plain(target: str) -> Maker:
    def make(view: View) -> dict[str, Any]:
        return _one_channel(view, target)

    return make


def ranged(target: str, vertical: bool | None = None) -> Maker:
    def make(view: View) -> dict[str, Any]:
        return _one_channel(view, target, _ranged(view, vertical) or None)

    return make


def section(view: View) -> dict[str, Any]:
    widget: dict[str, Any] = {"type": "section"}
    if view.name and view.ptype == "group":
        widget["title"] = view.name[:200]
    return view.mapped(widget)


def shape(view: View) -> dict[str, Any]:
    file = view.t("file") or view.t("image_file")
    options = shape_options(view.el, view.kind, view.source, file)
    if options["kind"] == "picture" and file:
        found = view.importer.context.read(view.importer.file, file)
        if found and (src := picture_src(file, found[1])):
            options["src"] = src  # the image beside the display, carried along
    return view.mapped({"type": "shape", "options": options})


def symbol(view: View) -> dict[str, Any]:
    """A symbol: the picture of index = the PV's value (pictures found with the
    display carried along, others drawn as a frame naming the file)."""
    images = []
    for entry in view.el.findall("symbols/symbol")[:MAX_SYMBOLS]:
        file = view.s((entry.text or "").strip())
        image: dict[str, Any] = {"file": file[:1000]}
        found = view.importer.context.read(view.importer.file, file) if file else None
        if found and (src := picture_src(file, found[1])):
            image["src"] = src
        images.append(image)
    if not images:
        return view.placeholder("no symbols")
    options: dict[str, Any] = {"images": images}
    if (index := int(num(view.el, "array_index", 0))) > 0:
        options["index"] = index
    return _one_channel(view, "symbol", options)


def text_symbol(view: View) -> dict[str, Any]:
    """A text symbol: the text of index = the PV's value."""
    texts = [view.s(e.text or "")[:200] for e in view.el.iterfind("symbols/symbol")]
    if not texts:
        return view.placeholder("no symbols")
    return _one_channel(
        view, "label", {"compact": True, "symbols": texts[:MAX_SYMBOLS]}
    )


def file_selector(view: View) -> dict[str, Any]:
    """A file selector writes a path to its PV: here the path is typed (a page
    cannot browse the operator's computer's files)."""
    return _one_channel(view, "input", {"kind": "text", "confirm": False})


def clock(view: View) -> dict[str, Any]:
    return view.mapped({"type": "clock",
                        "options": {"digital": view.ptype == "digital_clock"}})  # fmt: skip


def table(view: View) -> dict[str, Any]:
    pv = view.pv()
    if pv.uri is None:
        if view.el.find("scripts/*") is not None:
            return view.placeholder("no PV: its rows are set by a script (never run)")
        return view.placeholder(pv.why)
    return _one_channel(view, "table", None, pv)


def array(view: View) -> dict[str, Any]:
    """An array widget repeats its child for each element of an array PV:
    here the elements are the rows of a table."""
    return _one_channel(view, "table", {"prec": int(num(view.el, "precision", 3))}
                        if view.el.find("precision") is not None else None)  # fmt: skip


def not_in_a_browser(view: View) -> dict[str, Any]:
    return view.placeholder(NOT_IN_A_BROWSER[view.ptype])


def databrowser(view: View) -> dict[str, Any]:
    """A data browser widget: a trend of the PVs of its plot file."""
    file = view.t("file") or view.t("filename")
    found = view.importer.context.read(view.importer.file, file) if file else None
    if found is None:
        return view.placeholder(
            f"plot file {file!r} not found" if file else "no plot file"
        )
    channels, why = plot_channels(found[1], found[0], view.s)
    if not channels:
        return view.placeholder(why)
    widget: dict[str, Any] = {"type": "trend", "channels": channels}
    if view.name:
        widget["title"] = view.name[:200]
    return view.mapped(widget)


def xy_plot(view: View) -> dict[str, Any]:
    """An XY plot with an X PV → ``xy`` (X, then every trace's Y); without →
    ``spectrum`` (arrays by index) for a ``.bob`` XY plot, ``trend`` for strip
    charts and BOY XY graphs (time plots)."""
    el = view.el
    if view.source == "bob":
        pairs = [(text(t, "x_pv"), text(t, "y_pv"))
                 for t in el.iterfind("traces/trace") if text(t, "y_pv")]  # fmt: skip
    else:
        count = min(int(num(el, "trace_count", 0)), 20)
        pairs = [(text(el, f"trace_{i}_x_pv"), text(el, f"trace_{i}_y_pv"))
                 for i in range(count) if text(el, f"trace_{i}_y_pv")]  # fmt: skip
    if not pairs:
        return view.placeholder("no traces")
    names = [y for _, y in pairs]
    if pairs[0][0] and view.ptype != "stripchart":
        target, names = "xy", [pairs[0][0], *names]
    else:
        target = "spectrum" if view.kind == "xyplot" else "trend"
    uris: list[str] = []
    for raw in names:
        pv = view.pv_of(raw)
        if pv.uri is None:
            return view.placeholder(pv.why)
        uris.append(pv.uri)
    widget: dict[str, Any] = {"type": target, "channels": uris}
    if view.name:
        widget["title"] = view.name[:200]
    return view.mapped(widget)


def action_button(view: View) -> dict[str, Any]:
    """A button: one open-display action → a ``link``; one write → a
    ``button``; several (BOY's menu button) or a web page → ``actions``; none
    it can run but some it cannot → a placeholder saying why."""
    importer = view.importer
    found = importer.actions(view)
    label_ = view.t("text") or view.t("label")
    if view.kind == "MenuButton" and not label_:
        label_ = view.name
    only = found.only
    menu_ = view.kind == "MenuButton"
    if only and only["type"] == "open" and not menu_:
        options = {k: only[k] for k in ("screen", "macros", "target") if k in only}
        return _used(view.mapped({"type": "link", "title": (label_ or only["label"] or "Open")[:200],
                                  "options": options}))  # fmt: skip
    if only and only["type"] == "write" and not menu_:
        options = {"value": only["value"], "confirm": "confirm" in only
                   or flag(view.el, "confirm_dialog")}  # fmt: skip
        if label_:
            options["label"] = label_[:80]
        return _used(view.mapped({"type": "button", "channels": [only["channel"]],
                                  "options": options}))  # fmt: skip
    if not found.actions and found.not_run:
        return view.placeholder("; ".join(found.not_run)[:500])
    options = {"label": label_[:200]} if label_ else {}
    if menu_:
        options["menu"] = True
    widget = {"type": "actions", "actions": found.actions}
    if options:
        widget["options"] = options
    return _used(view.mapped(widget))


def _used(widget: dict[str, Any]) -> dict[str, Any]:
    """Marks a widget whose actions are its own function (not added again)."""
    widget["_actions_used"] = True
    return widget


MAKERS: dict[str, Maker] = {
    "label": label,
    "textupdate": text_update,
    "textentry": text_entry,
    "led": led,
    "byte_monitor": byte_monitor,
    "multi_state_led": multi_state,
    "progressbar": ranged("bar"),
    "tank": ranged("bar", True),
    "thermometer": ranged("bar", True),
    "linearmeter": ranged("bar"),
    "meter": ranged("gauge", False),
    "gauge": ranged("gauge", False),
    "knob": numeric_control,
    "scaledslider": numeric_control,
    "slider": numeric_control,
    "scrollbar": numeric_control,
    "spinner": numeric_control,
    "thumbwheel": numeric_control,
    "bool_button": toggle,
    "checkbox": toggle,
    "slide_button": toggle,
    "combo": menu,
    "choice": menu,
    "radio": menu,
    "image": plain("image"),
    "table": table,
    "array": array,
    "group": section,
    "rectangle": section,
    "symbol": symbol,
    "text-symbol": text_symbol,
    "fileselector": file_selector,
    "clock": clock,
    "digital_clock": clock,
    "databrowser": databrowser,
    "xyplot": xy_plot,
    "stripchart": xy_plot,
    "action_button": action_button,
    "3dviewer": not_in_a_browser,
    "webbrowser": not_in_a_browser,
    "alarm": not_in_a_browser,
}


def make_widget(view: View) -> dict[str, Any]:
    """The Synoptic widget of one source widget (counted in the report)."""
    if view.kind in SHAPES or view.ptype in ("ellipse", "arc", "polyline", "polygon",
                                             "picture"):  # fmt: skip
        return shape(view)
    maker = MAKERS.get(view.ptype)
    if maker is None:
        return view.placeholder(f"unknown widget type {view.kind!r}")
    return maker(view)
