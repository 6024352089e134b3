"""PV names as ``.bob``/``.opi`` displays write them, with their options.

Phoebus (and BOY's PV layer) let a PV name carry options after a space, as a
JSON object: ``$(P)FilePath {"longString":true}`` reads a char waveform as one
string, ``{"putCallback":true}`` waits for the write to complete. The options
are taken off the name; ``longString`` becomes the widget's ``long_string``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from synoptic_importer.common import convert_channel


@dataclass(frozen=True)
class PvName:
    """A channel URI (None: not convertible, ``why`` says why) and its options."""

    uri: str | None
    why: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def long_string(self) -> bool:
        return bool(self.options.get("longString"))


def split_options(name: str) -> tuple[str, dict[str, Any]]:
    """``'X {"longString":true}'`` → ``('X', {'longString': True})``; a name
    without a trailing JSON object is returned as it is."""
    name = name.strip()
    if not name.endswith("}") or " {" not in name:
        return name, {}
    head, _, tail = name.partition(" {")
    try:
        options = json.loads("{" + tail)
    except ValueError:
        return name, {}
    if not isinstance(options, dict):
        return name, {}
    return head.strip(), options


def pv_name(raw: str, default_scheme: str = "ca") -> PvName:
    """A display's PV name (macros already substituted) as a channel."""
    name, options = split_options(raw)
    uri, why = convert_channel(name, default_scheme)
    return PvName(uri, why, options)
