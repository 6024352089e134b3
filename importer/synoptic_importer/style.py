"""Looks of ``.bob``/``.opi`` widgets: colours, fonts and alignment as a screen
``style``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from xml.etree.ElementTree import Element

#: The Phoebus named colours the screen schema knows (name → RGB).
NAMED_COLOURS = {
    "OK": (0, 255, 0), "MINOR": (255, 128, 0), "MAJOR": (255, 0, 0),
    "INVALID": (255, 0, 255), "DISCONNECTED": (200, 0, 200),
    "Attention": (255, 160, 0), "Background": (255, 255, 255),
    "Read_Background": (240, 240, 240), "Write_Background": (128, 255, 255),
    "Text": (0, 0, 0), "On": (0, 255, 0), "Off": (60, 100, 60),
    "Header_Background": (77, 77, 77), "Header_Foreground": (255, 255, 255),
    "Grid": (128, 128, 128), "Button_Background": (210, 210, 210),
    "Active_Text": (255, 255, 0), "STOP": (255, 0, 0),
}  # fmt: skip
NAMED_FONTS = {"Default", "Default Bold", "Header 1", "Header 2", "Header 3",
               "Comment", "Fine", "Oddball"}  # fmt: skip
_FONT_STYLES = {"REGULAR": "regular", "BOLD": "bold", "ITALIC": "italic",
                "BOLD_ITALIC": "bold-italic", "0": "regular", "1": "bold",
                "2": "italic", "3": "bold-italic"}  # fmt: skip
_ALIGN = {"0": "left", "1": "center", "2": "right"}
_VALIGN = {"0": "top", "1": "middle", "2": "bottom"}


def _int(text: str | None, default: int = 0) -> int:
    try:
        value = float(text or default)
    except ValueError:
        return default
    return int(value) if math.isfinite(value) else default


def colour(el: Element | None) -> str | None:
    """A ``<color name red green blue alpha>`` as a named colour when the name is
    one the schema knows, else ``#rrggbb`` (``#rrggbbaa`` when translucent)."""
    if el is None:
        return None
    name = el.get("name", "")
    if name in NAMED_COLOURS:
        return name
    red = el.get("red")
    if red is None:
        return None
    return _hex(red, el.get("green"), el.get("blue"), el.get("alpha"))


@lru_cache(maxsize=4096)
def _hex(red: str, green: str | None, blue: str | None, alpha: str | None) -> str:
    rgb = [max(0, min(255, _int(c))) for c in (red, green, blue)]
    a = max(0, min(255, _int(alpha, 255)))
    text = "#" + "".join(f"{c:02x}" for c in rgb)
    return text + (f"{a:02x}" if a < 255 else "")


def hex_colour(el: Element | None) -> str | None:
    """A ``<color red green blue>`` as ``#rrggbb`` whatever its name (for
    options drawn as CSS colours, such as an LED's)."""
    if el is None or el.get("red") is None:
        return None
    rgb = [max(0, min(255, _int(el.get(c)))) for c in ("red", "green", "blue")]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def children_of(el: Element) -> dict[str, Element]:
    """An element's children by tag (the first of each), for repeated reads."""
    out: dict[str, Element] = {}
    for child in el:
        out.setdefault(child.tag, child)
    return out


def _colour_of(kids: Mapping[str, Element], tag: str) -> str | None:
    holder = kids.get(tag)
    return colour(holder.find("color")) if holder is not None else None


def font(el: Element, kids: Mapping[str, Element] | None = None
         ) -> str | dict[str, Any] | None:  # fmt: skip
    """A ``.bob`` ``<font><font name family style size>`` or ``.opi``
    ``<font><opifont.name|fontdata fontName height style>`` as a named font or
    family/size/style."""
    holder = (kids if kids is not None else children_of(el)).get("font")
    if holder is None or len(holder) == 0:
        return None
    inner = holder[0]
    name = inner.get("name") or (inner.text or "").strip()
    if name in NAMED_FONTS:
        return name
    found = _font(inner.get("family") or inner.get("fontName"),
                  inner.get("size") or inner.get("height"), inner.get("style"))  # fmt: skip
    return dict(found)


@lru_cache(maxsize=1024)
def _font(family: str | None, size: str | None, style: str | None
          ) -> tuple[tuple[str, Any], ...]:  # fmt: skip
    out: dict[str, Any] = {"size": max(4.0, min(200.0, float(_int(size, 14))))}
    if family := (family or "").strip()[:100]:
        out["family"] = family
    out["style"] = _FONT_STYLES.get((style or "").upper(), "regular")
    return tuple(out.items())


def _child_text(kids: Mapping[str, Element], tag: str) -> str:
    child = kids.get(tag)
    return (child.text or "").strip() if child is not None else ""


def style_of(el: Element, kids: Mapping[str, Element] | None = None) -> dict[str, Any]:
    """The widget's colours, font, alignment, transparency and line width
    (``kids``: its children by tag, when the caller has them)."""
    kids = kids if kids is not None else children_of(el)
    style: dict[str, Any] = {}
    if fg := _colour_of(kids, "foreground_color"):
        style["fg"] = fg
    if bg := _colour_of(kids, "background_color"):
        style["bg"] = bg
    if (f := font(el, kids)) is not None:
        style["font"] = f
    if align := _ALIGN.get(_child_text(kids, "horizontal_alignment")):
        style["align"] = align
    if valign := _VALIGN.get(_child_text(kids, "vertical_alignment")):
        style["valign"] = valign
    transparent = _child_text(kids, "transparent").lower()
    if transparent in ("true", "false"):
        style["transparent"] = transparent == "true"
    if line := _child_text(kids, "line_width"):
        style["line_width"] = max(0, min(50, _int(line)))
    border = _child_text(kids, "border_width")
    if border and _int(border) > 0:
        style["border"] = {"width": max(0, min(50, _int(border)))}
        if c := _colour_of(kids, "border_color"):
            style["border"]["color"] = c
    return style
