"""Taranta dashboards (``.wj`` exports): JSON with a ``widget`` list, each with a
``type`` (``ATTRIBUTE_DISPLAY`` …), a position and size in the editor's tiles
(taken as :data:`TILE_PX` pixels) and ``inputs`` naming Tango devices and
attributes (``{"device": "sys/tg_test/1", "attribute": "double_scalar"}``)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from synoptic_importer.common import (
    Report,
    ScreenImportError,
    box,
    canvas_layout,
    convert_channel,
    expand,
)

#: Pixels per Taranta tile (position and size units).
TILE_PX = 15
#: Widget type → Synoptic type, for widgets bound to one attribute.
ONE_ATTRIBUTE = {
    "ATTRIBUTE_DISPLAY": "label",
    "ATTRIBUTE_WRITER": "input",
    "ATTRIBUTE_WRITER_DROPDOWN": "menu",
    "LED_DISPLAY": "led",
    "BOOLEAN_DISPLAY": "led",
    "ATTRIBUTE_DIAL": "gauge",
    "ATTRIBUTE_BAR": "bar",
    "SPECTRUM": "spectrum",
    "SPECTRUM_2D": "spectrum",
    "ATTRIBUTE_IMAGE": "image",
    "IMAGE_DISPLAY": "image",
    "BOOLEAN_CONTROLLER": "toggle",
    "ATTRIBUTE_SWITCH": "toggle",
}
#: Widget types plotting several attributes in time.
TRENDS = {"ATTRIBUTE_PLOT", "ATTRIBUTE_TRACE", "ATTRIBUTE_SCATTER"}


#: Widgets running one Tango command: Synoptic's command widget (ADR 0028).
COMMANDS = {"COMMAND", "COMMAND_EXECUTOR", "COMMAND_WRITER"}
#: Command widgets without a Synoptic counterpart, and why.
OTHER_COMMANDS = {
    "COMMAND_SWITCH": "a switch between two commands: not mapped",
    "COMMAND_ARRAY": "a command with an array argument: not mapped",
    "COMMAND_FILE": "a command taking a file's content: not mapped",
}
#: Tango argument types the command widget's number input serves.
_NUMBER_ARGS = {"DevShort", "DevUShort", "DevLong", "DevULong", "DevLong64",
                "DevULong64", "DevFloat", "DevDouble", "DevUChar"}  # fmt: skip
#: Box children nest at most this deep.
MAX_DEPTH = 8


def _device(name: str, default_host: str) -> tuple[str, str]:
    """``(host, domain/family/member)`` of a Taranta device name: bare, with
    Taranta's own ``taranta://`` prefix (the default database), or
    ``tango://host:port/…`` naming its database."""
    if name.startswith("taranta://"):
        return default_host, name.removeprefix("taranta://")
    if name.startswith("tango://"):
        host, _, device = name.removeprefix("tango://").partition("/")
        return (host or default_host), device
    return default_host, name


def kind_of(raw: dict[str, Any]) -> str:
    """A widget's type, spelled one way (``ATTRIBUTE WRITER DROPDOWN`` and
    ``ATTRIBUTE_WRITER_DROPDOWN`` are one type)."""
    return str(raw.get("type") or "WIDGET")[:100].upper().replace(" ", "_")


_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_RELATIONS = {"=": "==", "==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<",
              "<=": "<="}  # fmt: skip


def _led(uri: str, inputs: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """An LED display's channel and options: lit while ``value RELATION compare``
    holds (``= 0`` inverts the lamp, ``= 1`` is the lamp's own rule, any other
    comparison a formula channel), in its true/false colours."""
    options: dict[str, Any] = {"compact": True}
    for key, option in (("trueColor", "on_color"), ("falseColor", "off_color")):
        if isinstance(inputs.get(key), str) and _HEX.match(inputs[key]):
            options[option] = inputs[key].lower()
    relation = _RELATIONS.get(str(inputs.get("relation") or "").strip())
    compare = _number(inputs.get("compare"), math.nan)
    if relation is None or math.isnan(compare):
        return [uri], options
    if relation == "==" and compare == 0:
        return [uri], {**options, "invert": True}
    if relation == "==" and compare == 1:
        return [uri], options
    number = int(compare) if compare.is_integer() else compare
    return [f"=`{uri}` {relation} {number}"], options


def _number(value: Any, default: float = 0.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


class TarantaImporter:
    """One dashboard → widgets of a Synoptic screen."""

    def __init__(self, file: str, macros: dict[str, str], tango_host: str) -> None:
        self.file = file
        self.macros = macros
        self.tango_host = tango_host
        self.report = Report(file, "wj")

    def _uri(self, attribute: Any) -> tuple[str | None, str]:
        if not isinstance(attribute, dict):
            return None, "no attribute"
        device = expand(str(attribute.get("device") or ""), self.macros, self.file)[0]
        name = expand(str(attribute.get("attribute") or ""), self.macros, self.file)[0]
        if not device or not name:
            return None, "no device or attribute"
        host, device = _device(device, self.tango_host)
        if device.count("/") != 2:
            return None, f"device name {device[:80]!r} is not domain/family/member"
        return convert_channel(f"tango://{host}/{device}/{name}")

    def _one(
        self, kind: str, inputs: dict[str, Any], w: float, h: float
    ) -> dict[str, Any]:
        if kind == "LABEL":
            text = str(inputs.get("text", ""))[:2000]
            return self.report.mapped_as(
                kind, {"type": "text", "options": {"text": text}}
            )
        if kind == "BOX":
            widget: dict[str, Any] = {"type": "section"}
            if title := str(inputs.get("title", "") or ""):
                widget["title"] = title[:200]
            return self.report.mapped_as(kind, widget)
        if kind == "DEVICE_STATUS":
            device = inputs.get("device")
            device_name = device.get("name") if isinstance(device, dict) else device
            uri, why = self._uri({"device": device_name, "attribute": "State"})
            if uri is None:
                return self.report.placeholder_for(kind, why, w, h)
            return self.report.mapped_as(kind, {"type": "label", "channels": [uri]})
        if kind in ONE_ATTRIBUTE:
            uri, why = self._uri(inputs.get("attribute"))
            if uri is None:
                return self.report.placeholder_for(kind, why, w, h)
            target = ONE_ATTRIBUTE[kind]
            widget = {"type": target, "channels": [uri]}
            if target == "input":
                widget["options"] = {"confirm": False}
            elif kind == "LED_DISPLAY":
                widget["channels"], widget["options"] = _led(uri, inputs)
            return self.report.mapped_as(kind, widget)
        if kind in TRENDS:
            attributes = inputs.get("attributes")
            entries = attributes if isinstance(attributes, list) else []
            uris: list[str] = []
            for entry in entries[:50]:
                attribute = entry.get("attribute") if isinstance(entry, dict) else None
                uri, why = self._uri(attribute)
                if uri is None:
                    return self.report.placeholder_for(kind, why, w, h)
                uris.append(uri)
            if not uris:
                return self.report.placeholder_for(kind, "no attributes", w, h)
            return self.report.mapped_as(kind, {"type": "trend", "channels": uris})
        if kind in COMMANDS:
            return self._command(kind, inputs, w, h)
        if kind in OTHER_COMMANDS:
            command = inputs.get("command")
            name = command.get("command") if isinstance(command, dict) else command
            return self.report.placeholder_for(
                kind, OTHER_COMMANDS[kind], w, h,
                str(inputs.get("title") or name or "")[:200], str(name or "")[:200],
            )  # fmt: skip
        return self.report.placeholder_for(
            kind, "no Synoptic widget for this type", w, h
        )

    def _command(
        self, kind: str, inputs: dict[str, Any], w: float, h: float
    ) -> dict[str, Any]:
        """A command widget: its device and command, an argument input by the
        command's declared type (when the dashboard says it; a command writer
        always has one), the button's text, and a confirmation unless the
        dashboard turned it off."""
        command = inputs.get("command")
        if not isinstance(command, dict):
            return self.report.placeholder_for(kind, "no command", w, h)
        name = str(command.get("command") or "")
        uri, why = self._uri({"device": command.get("device"), "attribute": name})
        if uri is None:
            return self.report.placeholder_for(kind, why, w, h)
        accepted = str(command.get("acceptedType") or "")
        if accepted.startswith("DevVar") or accepted == "DevEncoded":
            return self.report.placeholder_for(
                kind, f"{accepted} arguments are not supported", w, h, name[:200]
            )
        if accepted in _NUMBER_ARGS:
            field = "number"
        elif accepted in ("DevString", "DevBoolean") or (
            kind == "COMMAND_WRITER" and accepted != "DevVoid"
        ):
            field = "text"
        else:
            field = "none"
        label = str(inputs.get("buttonText") or name)[:80]
        options: dict[str, Any] = {"command": uri, "label": label, "input": field,
                                   "confirm": inputs.get("requireConfirmation") is not False}  # fmt: skip
        widget: dict[str, Any] = {"type": "command", "options": options}
        if title := str(inputs.get("title") or ""):
            widget["title"] = title[:200]
        return self.report.mapped_as(kind, widget)

    def _widgets(
        self, raws: list[dict[str, Any]], depth: int
    ) -> Iterator[dict[str, Any]]:
        """Widgets top to bottom, left to right; a box's inner widgets (placed in
        dashboard coordinates) right after it, drawn over it."""
        for raw in sorted(
            raws, key=lambda w: (_number(w.get("y")), _number(w.get("x")))
        ):
            kind = kind_of(raw)
            x, y = _number(raw.get("x")) * TILE_PX, _number(raw.get("y")) * TILE_PX
            w = _number(raw.get("width"), 1) * TILE_PX
            h = _number(raw.get("height"), 1) * TILE_PX
            inputs = raw.get("inputs") if isinstance(raw.get("inputs"), dict) else {}
            widget = self._one(kind, inputs, w, h)
            widget["box"] = box(x, y, w, h)
            yield widget
            inner = raw.get("innerWidgets")
            if isinstance(inner, list) and depth < MAX_DEPTH:
                yield from self._widgets([i for i in inner if isinstance(i, dict)],
                                         depth + 1)  # fmt: skip

    def convert(self, doc: Any) -> dict[str, Any]:
        if not isinstance(doc, dict) or not isinstance(doc.get("widget"), list):
            raise ScreenImportError(
                self.file, "not a Taranta dashboard: no 'widget' list"
            )
        raw_widgets = [w for w in doc["widget"] if isinstance(w, dict)]
        every = list(_flatten(raw_widgets, 0))
        right = max((_number(w.get("x")) + _number(w.get("width"), 1) for w in every),
                    default=40)  # fmt: skip
        bottom = max((_number(w.get("y")) + _number(w.get("height"), 1)
                      for w in every), default=30)  # fmt: skip
        widgets = list(self._widgets(raw_widgets, 0))
        for variable in doc.get("variables") or []:
            self.report.skipped.append(f"variable {str(variable)[:80]} (not supported)")
        name = str(doc.get("name") or self.file)
        return {
            "version": 1,
            "title": name[:200] or "Imported",
            "description": f"Imported from {self.file} (wj)"[:2000],
            "layout": canvas_layout(right * TILE_PX or 600, bottom * TILE_PX or 450),
            "widgets": widgets,
        }


def _flatten(raws: list[dict[str, Any]], depth: int) -> Iterator[dict[str, Any]]:
    for raw in raws:
        yield raw
        inner = raw.get("innerWidgets")
        if isinstance(inner, list) and depth < MAX_DEPTH:
            yield from _flatten([i for i in inner if isinstance(i, dict)], depth + 1)


def import_taranta(data: bytes, file: str, macros: dict[str, str],
                   tango_host: str) -> tuple[dict[str, Any], Report]:  # fmt: skip
    """A ``.wj`` dashboard's bytes → (screen, report)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ScreenImportError(file, f"not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ScreenImportError(
            file, f"malformed JSON: {exc.msg}", exc.lineno
        ) from None
    except RecursionError:
        raise ScreenImportError(file, "JSON nested too deeply") from None
    importer = TarantaImporter(file, macros, tango_host)
    return importer.convert(doc), importer.report
