"""Data browser plot files (``.plt``): the PVs a data browser widget plots.
XML, parsed with the same hardened parser as displays."""

from __future__ import annotations

from collections.abc import Callable

from synoptic_importer.common import ScreenImportError
from synoptic_importer.pvname import pv_name
from synoptic_importer.xmlutil import parse_xml

MAX_TRACES = 50


def plot_channels(data: bytes, file: str, expand: Callable[[str], str]
                  ) -> tuple[list[str], str]:  # fmt: skip
    """The channels of a ``.plt`` file's PVs (macros expanded with ``expand``)
    and, when there are none, why."""
    try:
        root = parse_xml(data, file)
    except ScreenImportError as exc:
        return [], f"plot file unreadable: {exc.reason}"
    channels: list[str] = []
    for pv in root.iter("pv"):
        name = (pv.findtext("name") or "").strip()
        if not name:
            continue
        channel = pv_name(expand(name))
        if channel.uri is None:
            return [], f"plot PV {name[:80]!r}: {channel.why}"
        channels.append(channel.uri)
    if not channels:
        return [], "no PVs in the plot file"
    return channels[:MAX_TRACES], ""
