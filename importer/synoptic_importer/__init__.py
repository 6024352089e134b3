"""Screens of other tools → Synoptic screens: Phoebus ``.bob``, CS-Studio BOY
``.opi`` and Taranta ``.wj``. Pure functions from a file's bytes to a screen and a
coverage report; what has no mapping becomes a ``placeholder`` widget of its type
and size, never dropped. The result is validated against the screen schema."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from synoptic_importer.common import (
    MAX_SOURCE_BYTES,
    Report,
    ScreenImportError,
    parse_macro_args,
    screen_name,
)
from synoptic_importer.display import import_display
from synoptic_importer.paths import Context, Resolver
from synoptic_importer.taranta import import_taranta
from synoptic_schemas.screens import ScreenInvalidError, validate_screen

#: File suffixes this module imports.
SUFFIXES = (".bob", ".opi", ".wj")


@dataclass(frozen=True)
class Imported:
    """A converted screen, its suggested name and what the conversion did."""

    name: str
    screen: dict[str, Any]
    report: Report


def folder_resolver(folder: Path) -> Resolver:
    """Reads embedded displays from ``folder`` and below (a name that is
    absolute or leaves the folder is not found)."""
    root = folder.resolve()

    def resolve(name: str) -> bytes | None:
        target = (root / name).resolve()
        if PurePath(name).is_absolute() or not target.is_relative_to(root):
            return None
        try:
            data = target.read_bytes()
        except OSError:
            return None
        return data if len(data) <= MAX_SOURCE_BYTES else None

    return resolve


def default_tango_host() -> str:
    """``$TANGO_HOST`` (the first of a list), else ``localhost:10000``."""
    return (os.environ.get("TANGO_HOST") or "localhost:10000").split(",")[0].strip()


def import_screen(
    data: bytes,
    file: str,
    *,
    macros: dict[str, str] | None = None,
    tango_host: str | None = None,
    resolve: Resolver | None = None,
    siblings: frozenset[str] = frozenset(),
    context: Context | None = None,
) -> Imported:
    """Convert one file (its format from its suffix); :class:`ScreenImportError`
    naming the file (and line) when it cannot be. ``resolve`` reads the displays
    a ``.bob``/``.opi`` embeds (see :func:`folder_resolver`); an embedded display
    whose screen name is in ``siblings`` (files imported together) becomes an
    ``embed`` of that screen instead of being inlined. ``context`` (a set's
    files, :func:`synoptic_importer.site.import_site`) replaces both."""
    suffix = PurePath(file).suffix.lower()
    if suffix not in SUFFIXES:
        raise ScreenImportError(
            file, f"unknown format {suffix!r} (expected .bob, .opi, .wj)"
        )
    if len(data) > MAX_SOURCE_BYTES:
        raise ScreenImportError(
            file, f"{len(data)} bytes exceed the import limit of {MAX_SOURCE_BYTES}"
        )
    macros = dict(macros or {})
    if suffix == ".wj":
        screen, report = import_taranta(
            data, file, macros, tango_host or default_tango_host()
        )
    else:
        screen, report = import_display(
            data, file, suffix[1:], macros, resolve, siblings, context
        )
    try:
        validate_screen(screen)
    except ScreenInvalidError as exc:  # a mapping bug: never store it
        raise ScreenImportError(file, f"converted screen is invalid: {exc}") from None
    return Imported(screen_name(file), screen, report)


__all__ = [
    "MAX_SOURCE_BYTES",
    "SUFFIXES",
    "Imported",
    "Report",
    "ScreenImportError",
    "default_tango_host",
    "folder_resolver",
    "import_screen",
    "parse_macro_args",
    "screen_name",
]
