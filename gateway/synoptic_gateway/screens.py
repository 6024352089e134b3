"""Screen files served by ``/api/screens``: JSON files in one folder, validated
against the screen schema of ``synoptic_schemas``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from synoptic_schemas.jsonschemas import validator

#: Screen names are file names without ``.json``; nothing that could leave the folder.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class ScreenError(Exception):
    """A screen that does not exist (``missing``) or is not valid."""

    def __init__(self, name: str, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.name = name
        self.missing = missing


class ScreenStore:
    """Reads screens from a folder on every request (edits show at once)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, name: str) -> Path:
        if not NAME.match(name):
            raise ScreenError(name, f"invalid screen name {name[:80]!r}", missing=True)
        return self.folder / f"{name}.json"

    def get(self, name: str) -> dict[str, Any]:
        """The screen ``name``, validated; :class:`ScreenError` otherwise."""
        path = self._path(name)
        if not path.is_file():
            raise ScreenError(name, f"no screen {name!r}", missing=True)
        try:
            screen = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ScreenError(name, f"screen {name!r} is not JSON: {exc}") from None
        errors = sorted(validator("screen").iter_errors(screen), key=str)
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(root)"
            raise ScreenError(
                name, f"screen {name!r} is invalid at {where}: {first.message}"
            )
        return screen

    def list(self) -> list[dict[str, Any]]:
        """Every ``*.json`` of the folder: name, title, and an error if invalid."""
        if not self.folder.is_dir():
            return []
        out: list[dict[str, Any]] = []
        for path in sorted(self.folder.glob("*.json")):
            name = path.name.removesuffix(".json")
            if not NAME.match(name):
                continue
            try:
                screen = self.get(name)
            except ScreenError as exc:
                out.append({"name": name, "valid": False, "error": str(exc)})
                continue
            entry = {"name": name, "title": screen.get("title", name), "valid": True}
            if "description" in screen:
                entry["description"] = screen["description"]
            out.append(entry)
        return out
