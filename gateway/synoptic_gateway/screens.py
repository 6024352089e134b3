"""Screen files served by ``/api/screens``: JSON files in one folder, validated
against the screen schema of ``synoptic_schemas``.

Validating a 1000-widget screen takes ~0.3 s of the event loop, so each file's
outcome (the screen and its JSON bytes, or the error) is kept until the file's
modification time or size changes: edits still show at the next request."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class _Loaded:
    """One file's outcome at one (mtime, size)."""

    stamp: tuple[int, int]
    screen: dict[str, Any] | None
    body: bytes
    error: ScreenError | None
    #: HTTP validator of ``body`` (a strong ETag, quoted): a reload revalidates with a 304
    etag: str = '""'


class ScreenStore:
    """Screens of a folder, validated once per version of each file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._loaded: dict[Path, _Loaded] = {}

    def _path(self, name: str) -> Path:
        if not NAME.match(name):
            raise ScreenError(name, f"invalid screen name {name[:80]!r}", missing=True)
        return self.folder / f"{name}.json"

    def get(self, name: str) -> dict[str, Any]:
        """The screen ``name``, validated; :class:`ScreenError` otherwise."""
        loaded = self._load(name)
        assert loaded.screen is not None
        return loaded.screen

    def get_json(self, name: str) -> bytes:
        """The screen ``name`` as JSON bytes, ready to send."""
        return self._load(name).body

    def get_json_tagged(self, name: str) -> tuple[bytes, str]:
        """The screen ``name`` as JSON bytes and their ETag (it changes with them)."""
        loaded = self._load(name)
        return loaded.body, loaded.etag

    def _load(self, name: str) -> _Loaded:
        path = self._path(name)
        try:
            stat = path.stat()
        except OSError:
            self._loaded.pop(path, None)
            raise ScreenError(name, f"no screen {name!r}", missing=True) from None
        if not path.is_file():
            raise ScreenError(name, f"no screen {name!r}", missing=True)
        stamp = (stat.st_mtime_ns, stat.st_size)
        loaded = self._loaded.get(path)
        if loaded is None or loaded.stamp != stamp:
            loaded = self._loaded[path] = _read(name, path, stamp)
        if loaded.error is not None:
            raise loaded.error
        return loaded

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


def _read(name: str, path: Path, stamp: tuple[int, int]) -> _Loaded:
    """Read and validate one screen file."""
    try:
        screen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        error = ScreenError(name, f"screen {name!r} is not JSON: {exc}")
        return _Loaded(stamp, None, b"", error)
    errors = sorted(validator("screen").iter_errors(screen), key=str)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        error = ScreenError(
            name, f"screen {name!r} is invalid at {where}: {first.message}"
        )
        return _Loaded(stamp, None, b"", error)
    body = json.dumps(screen, ensure_ascii=False, separators=(",", ":")).encode()
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return _Loaded(stamp, screen, body, None, etag)
