"""Widget types of Phoebus and BOY: each BOY ``typeId`` read as the Phoebus
type it becomes (as Phoebus's own ``.opi`` reader does), and the few types a
browser page cannot show, with why."""

from __future__ import annotations

from xml.etree.ElementTree import Element

from synoptic_importer.xmlutil import flag, num

OPI_PREFIX = "org.csstudio.opibuilder.widgets."

#: BOY type (``typeId`` without the prefix) → Phoebus type.
OPI_TYPES = {
    "ActionButton": "action_button", "NativeButton": "action_button",
    "arc": "arc", "array": "array",
    "BoolButton": "bool_button", "ImageBoolButton": "bool_button",
    "BoolSwitch": "slide_button", "bytemonitor": "byte_monitor",
    "checkbox": "checkbox", "choiceButton": "choice", "combo": "combo",
    "Ellipse": "ellipse", "linkingContainer": "embedded",
    "groupingContainer": "group", "sashContainer": "group",
    "LED": "led", "ImageBoolIndicator": "led",
    "symbol.bool.BoolMonitorWidget": "led",
    "symbol.bool.BoolControlWidget": "bool_button",
    "symbol.multistate.MultistateMonitorWidget": "textupdate",
    "symbol.multistate.MultistateControlWidget": "choice",
    "MultistateLED": "multi_state_led",
    "Label": "label", "meter": "meter", "gauge": "meter", "MeterWidget": "meter",
    "knob": "knob", "Image": "picture", "polygon": "polygon",
    "polyline": "polyline", "progressbar": "progressbar", "radioBox": "radio",
    "Rectangle": "rectangle", "RoundedRectangle": "rectangle",
    "scaledslider": "scaledslider", "scrollbar": "scrollbar", "spinner": "spinner",
    "table": "table", "tab": "tabs", "tank": "tank",
    "TextInput": "textentry", "NativeText": "textentry",
    "TextUpdate": "textupdate", "thermometer": "thermometer",
    "ThumbWheel": "thumbwheel", "webbrowser": "webbrowser",
    "intensityGraph": "image", "xyGraph": "xyplot", "gridLayout": "grid_layout",
    "org.csstudio.trends.databrowser.opiwidget": "databrowser",
}  # fmt: skip

#: Types that cannot be shown in a browser page, with why (they stay placeholders).
NOT_IN_A_BROWSER = {
    "3dviewer": "a 3-D viewer of shape files rendered by Java's 3-D toolkit: not "
    "available in a browser page",
    "webbrowser": "an embedded web browser: a browser page does not embed other "
    "sites (they refuse to be framed); open the address with a link instead",
    "alarm": "a view of the BEAST alarm server (its own protocol): Synoptic's "
    "alarm page shows alarms",
}


def phoebus_type(el: Element, source: str) -> tuple[str, str]:
    """(the source type as the file names it, the Phoebus type it is read as)."""
    if source == "bob":
        kind = el.get("type", "") or "widget"
        return kind, {"MultistateLED": "multi_state_led"}.get(kind, kind)
    kind = (el.get("typeId", "") or "widget").removeprefix(OPI_PREFIX)
    if kind == "MenuButton":
        # Phoebus's reader: a combo unless it has actions and does not take its
        # items from the PV
        has_actions = el.find("actions/action") is not None
        as_combo = flag(el, "actions_from_pv", True) or not has_actions
        return kind, "combo" if as_combo else "action_button"
    if kind == "LED" and num(el, "state_count", 2) > 2:
        return kind, "multi_state_led"
    if kind.startswith("org.csstudio.alarm."):
        return kind, "alarm"
    return kind, OPI_TYPES.get(kind, kind)
