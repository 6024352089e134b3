"""Reading ``.bob``/``.opi`` XML: the hardened parser and typed property reads."""

from __future__ import annotations

import math
from xml.etree.ElementTree import Element, ParseError, XMLParser

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from synoptic_importer.common import ScreenImportError

#: Markers without which a document can declare nothing: no DTD, hence no
#: entity of its own and no external reference.
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY", b"<!doctype")


def parse_xml(data: bytes, file: str) -> Element:
    """The root element; :class:`ScreenImportError` with the line for malformed
    XML, and for any DTD, entity or external reference (refused, not expanded).

    A UTF-8 document holding no ``<!DOCTYPE``/``<!ENTITY`` text has no DTD, so
    nothing to expand or fetch: it is parsed by the C parser (four times
    faster). Any other document goes through defusedxml, which refuses a DTD."""
    if (
        not any(m in data for m in _DECLARATIONS)
        and not data.startswith((b"\xff\xfe", b"\xfe\xff"))
        and b"\x00" not in data[:4]
    ):
        try:
            parser = XMLParser()
            parser.feed(data)
            return parser.close()
        except ParseError as exc:
            line = getattr(exc, "position", (None, None))[0]
            raise ScreenImportError(file, f"malformed XML: {exc}", line) from None
    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True,
                          forbid_external=True)  # fmt: skip
    except DefusedXmlException as exc:
        raise ScreenImportError(file, f"refused: {exc}") from None
    except ParseError as exc:
        line = getattr(exc, "position", (None, None))[0]
        raise ScreenImportError(file, f"malformed XML: {exc}", line) from None


def text(el: Element, tag: str, default: str = "") -> str:
    """A child's text, stripped (``default`` when absent or empty)."""
    child = el.find(tag)
    return (child.text or "").strip() if child is not None and child.text else default


def raw_text(el: Element, tag: str) -> str:
    """A child's text as written (multi-line texts keep their lines)."""
    child = el.find(tag)
    return child.text or "" if child is not None else ""


def num(el: Element, tag: str, default: float = 0.0) -> float:
    """A child's number (``default`` when absent, not a number or not finite)."""
    try:
        value = float(text(el, tag) or default)
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def flag(el: Element, tag: str, default: bool = False) -> bool:
    """A child's ``true``/``false``."""
    value = text(el, tag).lower()
    return default if not value else value == "true"
