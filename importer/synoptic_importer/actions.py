"""Widget actions of ``.bob``/``.opi`` displays: open a display, write a PV, open
a web page; and those a browser page never runs (an external command, a
script, a local file, a sound), which are reported.

Phoebus writes ``<action type="open_display"><file>…<target>tab``; BOY writes
``<action type="OPEN_DISPLAY"><path>…<replace>0`` (or ``<mode>``). Both become
the screen schema's actions: ``open`` (a screen, the macros it gets, where it
opens), ``write`` (a channel and a value) and ``url``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element

from synoptic_importer.macros import SCREEN_NAME, Env, apply_specs, substitute
from synoptic_importer.pvname import pv_name
from synoptic_importer.xmlutil import text

#: Where an opened display goes: Phoebus's targets, BOY's ``replace``/``mode``.
_REPLACE = {"0": "tab", "2": "window"}
_MODE = {"0": "replace", "7": "window", "8": "window"}
_TARGETS = {"replace": "replace", "tab": "tab", "window": "window",
            "standalone": "window"}  # fmt: skip
#: Action types a browser page does not run, and why.
NOT_RUN = {
    "execute": "runs a script (scripts are never run)",
    "execute_javascript": "runs a script (scripts are never run)",
    "execute_pythonscript": "runs a script (scripts are never run)",
    "command": "runs a program on the operator's computer (a browser page cannot)",
    "execute_cmd": "runs a program on the operator's computer (a browser page cannot)",
    "open_file": "opens a file on the operator's computer (a browser page cannot)",
    "play_sound": "plays a sound file of the operator's computer",
}
OPEN = {"open_display", "open_opi_in_view", "open_phoebus"}
MAX_ACTIONS = 50
MAX_MACROS = 200


@dataclass
class Actions:
    """A widget's actions in screen form, and the ones left out (with why)."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    #: BOY's ``hook``: a click on the widget runs its first action.
    hook: bool = False

    @property
    def only(self) -> dict[str, Any] | None:
        return self.actions[0] if len(self.actions) == 1 else None


#: The screen a display path opens, from the file that names it: (name, in the set).
Linker = Callable[[str], tuple[str, bool | None]]


def link_macros(env: Env, specs: list[tuple[str, str]]) -> dict[str, str]:
    """The macros an opened display receives (Phoebus: the source widget's
    macros with the action's own over them), in screen terms."""
    merged = apply_specs(
        specs, {k: v for k, v in env.items() if k not in ("DID", "DNAME")}
    )
    out = {k: v[:1000] for k, v in merged.items() if SCREEN_NAME.match(k)}
    return dict(list(out.items())[:MAX_MACROS])


def specs_of(holder: Element | None) -> list[tuple[str, str]]:
    """The ``<macros>`` of an element as ordered (name, spec) pairs."""
    if holder is None:
        return []
    return [(c.tag, c.text or "") for c in holder if c.tag != "include_parent_macros"]


def _value(raw: str) -> Any:
    try:
        value = float(raw) if raw.strip() else 0
    except ValueError:
        return raw
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def describe(action: Element) -> str:
    """What Phoebus shows for an action: its description, else ``Open <file>``
    or ``Write <pv>``."""
    if description := text(action, "description"):
        return description
    kind = action.get("type", "").lower()
    if kind in OPEN:
        return f"Open {text(action, 'file') or text(action, 'path')}"
    if kind == "write_pv":
        return f"Write {text(action, 'pv_name')}={text(action, 'value')}"
    return kind.replace("_", " ")


def actions_of(el: Element, env: Env, linker: Linker,
               links: list[tuple[str, str, bool | None]]) -> Actions:  # fmt: skip
    """The actions of ``el`` in screen form; ``links`` gets (path, screen, in the
    set) for each open-display action."""
    holder = el.find("actions")
    out = Actions()
    if holder is None:
        return out
    out.hook = holder.get("hook", "false") == "true"
    for action in holder.findall("action") if len(holder) else ():
        kind = action.get("type", "").lower()
        label = substitute(describe(action), env)[:200]
        if kind in OPEN:
            raw = text(action, "file") or text(action, "path")
            if not raw:
                out.not_run.append("open display without a file")
                continue
            path = substitute(raw, env)
            screen, inside = linker(path)
            links.append((path, screen, inside))
            entry: dict[str, Any] = {"type": "open", "screen": screen, "label": label}
            if macros := link_macros(env, specs_of(action.find("macros"))):
                entry["macros"] = macros
            target = _target(action)
            if target != "replace":
                entry["target"] = target
            out.actions.append(entry)
        elif kind == "write_pv":
            pv = pv_name(substitute(text(action, "pv_name"), env))
            if pv.uri is None:
                out.not_run.append(f"write to {text(action, 'pv_name')!r}: {pv.why}")
                continue
            value = _value(substitute(text(action, "value"), env))
            entry = {"type": "write", "channel": pv.uri, "value": value, "label": label}
            if message := text(action, "confirm_message"):
                entry["confirm"] = substitute(message, env)[:500]
            out.actions.append(entry)
        elif kind == "open_webpage":
            url = substitute(text(action, "url") or text(action, "hyperlink"), env)
            if url.startswith(("http://", "https://")) and len(url) <= 2000:
                out.actions.append({"type": "url", "url": url, "label": label})
            else:
                out.not_run.append(f"web page {url[:80]!r} (only http and https open)")
        else:
            out.not_run.append(f"{label!r}: {NOT_RUN.get(kind, f'action {kind!r}')}")
    out.actions = out.actions[:MAX_ACTIONS]
    return out


def _target(action: Element) -> str:
    """Phoebus's ``target``; BOY's ``replace`` (0 tab, 1 replace, 2 window) or
    ``mode`` (0 replace, 7/8 window, others a tab); default replace."""
    if target := text(action, "target").lower():
        return _TARGETS.get(target, "replace")
    if replace := text(action, "replace"):
        return _REPLACE.get(replace, "replace")
    if mode := text(action, "mode"):
        return _MODE.get(mode, "tab")
    return "replace"
