"""Decorations of ``.bob``/``.opi`` displays as ``shape`` widgets: ellipses,
arcs, polylines, polygons and pictures. Points are written relative to the
widget's box (``.bob`` stores them so; BOY stores them in its parent's
coordinates). A picture names an image file the import cannot carry: it is drawn
as a labelled frame with the file's name."""

from __future__ import annotations

import base64
import math
from pathlib import PurePath
from typing import Any
from xml.etree.ElementTree import Element

from synoptic_importer.style import colour

#: Source type → shape kind.
SHAPES = {
    "ellipse": "ellipse", "Ellipse": "ellipse", "arc": "arc",
    "polyline": "polyline", "polygon": "polygon",
    "picture": "picture", "Image": "picture",
}  # fmt: skip
MAX_POINTS = 2000
#: Largest image put into a screen, and the image types a picture may hold.
MAX_PICTURE_BYTES = 512 * 1024
PICTURE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
                 ".gif": "image/gif", ".svg": "image/svg+xml", ".webp": "image/webp"}  # fmt: skip


def _float(text: str | None, default: float = 0.0) -> float:
    try:
        value = float(text or default)
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def shape_options(
    el: Element, kind: str, source: str, file: str = ""
) -> dict[str, Any]:
    """The ``shape`` options of a decoration of source type ``kind`` (``source``
    ``bob`` or ``opi``); ``file`` is a picture's file name, macros expanded."""
    shape = SHAPES[kind]
    options: dict[str, Any] = {"kind": shape}
    if shape in ("polyline", "polygon"):
        # BOY points are in the parent's coordinates, Phoebus's in the widget's.
        ox = _float(el.findtext("x")) if source == "opi" else 0.0
        oy = _float(el.findtext("y")) if source == "opi" else 0.0
        options["points"] = [
            [round(_float(p.get("x")) - ox, 2), round(_float(p.get("y")) - oy, 2)]
            for p in el.iterfind("points/point")
        ][:MAX_POINTS]
    elif shape == "arc":
        options["start_angle"] = _float(el.findtext("start_angle"), 0.0)
        options["total_angle"] = _float(el.findtext("total_angle"), 90.0)
    elif shape == "picture":
        options["file"] = file[:1000]
    return options


def picture_src(file: str, data: bytes | None) -> str | None:
    """A picture's image as a data URL, when its bytes were found, it is an
    image type and not larger than :data:`MAX_PICTURE_BYTES`; else None (the
    picture is drawn as a frame naming its file)."""
    kind = PICTURE_TYPES.get(PurePath(file).suffix.lower())
    if data is None or kind is None or len(data) > MAX_PICTURE_BYTES:
        return None
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def line_colour(el: Element) -> str | None:
    """A decoration's line colour (``line_color``), the stroke of its shape."""
    holder = el.find("line_color")
    return colour(holder.find("color")) if holder is not None else None
