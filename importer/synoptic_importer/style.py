"""Looks of ``.bob``/``.opi`` widgets: colours, fonts and alignment as a screen
``style``."""

from __future__ import annotations

import math
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
    if el.get("red") is None:
        return None
    rgb = [max(0, min(255, _int(el.get(c)))) for c in ("red", "green", "blue")]
    alpha = max(0, min(255, _int(el.get("alpha"), 255)))
    text = "#" + "".join(f"{c:02x}" for c in rgb)
    return text + (f"{alpha:02x}" if alpha < 255 else "")


def hex_colour(el: Element | None) -> str | None:
    """A ``<color red green blue>`` as ``#rrggbb`` whatever its name (for
    options drawn as CSS colours, such as an LED's)."""
    if el is None or el.get("red") is None:
        return None
    rgb = [max(0, min(255, _int(el.get(c)))) for c in ("red", "green", "blue")]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _colour_of(el: Element, tag: str) -> str | None:
    holder = el.find(tag)
    return colour(holder.find("color")) if holder is not None else None


def font(el: Element) -> str | dict[str, Any] | None:
    """A ``.bob`` ``<font><font name family style size>`` or ``.opi``
    ``<font><opifont.name|fontdata fontName height style>`` as a named font or
    family/size/style."""
    holder = el.find("font")
    if holder is None or len(holder) == 0:
        return None
    inner = holder[0]
    name = inner.get("name") or (inner.text or "").strip()
    if name in NAMED_FONTS:
        return name
    family = (inner.get("family") or inner.get("fontName") or "").strip()[:100]
    size = float(_int(inner.get("size") or inner.get("height"), 14))
    out: dict[str, Any] = {"size": max(4.0, min(200.0, size))}
    if family:
        out["family"] = family
    out["style"] = _FONT_STYLES.get((inner.get("style") or "").upper(), "regular")
    return out


def style_of(el: Element) -> dict[str, Any]:
    """The widget's colours, font, alignment, transparency and line width."""
    style: dict[str, Any] = {}
    if fg := _colour_of(el, "foreground_color"):
        style["fg"] = fg
    if bg := _colour_of(el, "background_color"):
        style["bg"] = bg
    if (f := font(el)) is not None:
        style["font"] = f
    align = _ALIGN.get((el.findtext("horizontal_alignment") or "").strip())
    if align:
        style["align"] = align
    valign = _VALIGN.get((el.findtext("vertical_alignment") or "").strip())
    if valign:
        style["valign"] = valign
    transparent = (el.findtext("transparent") or "").strip().lower()
    if transparent in ("true", "false"):
        style["transparent"] = transparent == "true"
    line = el.findtext("line_width")
    if line and line.strip():
        style["line_width"] = max(0, min(50, _int(line)))
    border = el.findtext("border_width")
    if border and _int(border) > 0:
        style["border"] = {"width": max(0, min(50, _int(border)))}
        if c := _colour_of(el, "border_color"):
            style["border"]["color"] = c
    return style
