"""A display set as files: a zip's members, or the files a browser's folder
upload names, checked before anything is imported.

A zip comes from a user: it is read from bytes in memory with limits on the
number of members, each member's size, the total size and the compression
ratio (a zip bomb is refused before it is inflated, and reading stops at the
limit whatever the member declares); a member whose name is absolute, climbs
out (``..``), names a drive, is a link or is encrypted is refused. Only the
files an import reads (displays, plot files, pictures) are kept; a zip of one
folder is that folder's set (its name the set's)."""

from __future__ import annotations

import io
import posixpath
import stat
import zipfile
from dataclasses import dataclass, field

from synoptic_importer.common import MAX_SOURCE_BYTES

#: What a set may hold, and the most of it.
KEPT_SUFFIXES = (".bob", ".opi", ".wj", ".plt", ".png", ".jpg", ".jpeg", ".gif",
                 ".svg", ".webp")  # fmt: skip
MAX_MEMBERS = 5000
MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: A member inflating beyond this ratio (and 1 MiB) is a zip bomb.
MAX_RATIO = 100
MAX_PATH_CHARS = 1000


class ArchiveError(ValueError):
    """A set refused as a whole (its reason names the member)."""


@dataclass
class SetFiles:
    """The files of a set by their path in it, its name, what was left out."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)


def safe_path(name: str) -> str:
    """A member's or upload's path as a relative POSIX path inside the set;
    :class:`ArchiveError` for one that is absolute, climbs out or names a drive."""
    path = name.replace("\\", "/")
    if not path or len(path) > MAX_PATH_CHARS or "\x00" in path:
        raise ArchiveError(f"refused: a file name of {len(path)} characters")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise ArchiveError(f"refused: {name[:200]!r} is an absolute path")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"refused: {name[:200]!r} leaves the set (..)")
    return posixpath.join(*parts) if parts else ""


def keeps(path: str) -> bool:
    """Whether an import reads a file of this name."""
    base = posixpath.basename(path)
    return (
        not base.startswith(".")
        and posixpath.splitext(base)[1].lower() in KEPT_SUFFIXES
    )


def read_zip(data: bytes, name: str = "site") -> SetFiles:
    """The set a zip holds (see the module's docstring); :class:`ArchiveError`
    when it is not a zip or breaks a limit."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArchiveError(f"not a zip file: {exc}") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ArchiveError(
                f"refused: {len(members)} members (at most {MAX_MEMBERS})"
            )
        out = SetFiles(name)
        total = 0
        for info in members:
            if info.is_dir():
                continue
            path = safe_path(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"refused: {info.filename[:200]!r} is a link")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"refused: {info.filename[:200]!r} is encrypted")
            if not keeps(path):
                out.ignored.append(path)
                continue
            if info.file_size > MAX_SOURCE_BYTES:
                raise ArchiveError(f"refused: {path} holds {info.file_size} bytes (at "
                                   f"most {MAX_SOURCE_BYTES} a file)")  # fmt: skip
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > 1024 * 1024 and ratio > MAX_RATIO:
                raise ArchiveError(
                    f"refused: {path} inflates {ratio:.0f} times (a zip bomb)"
                )
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise ArchiveError(
                    f"refused: more than {MAX_TOTAL_BYTES} bytes unpacked"
                )
            try:
                with archive.open(info) as member:
                    body = member.read(MAX_SOURCE_BYTES + 1)
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
                raise ArchiveError(f"refused: {path}: {exc}") from None
            if len(body) > info.file_size or len(body) > MAX_SOURCE_BYTES:
                raise ArchiveError(f"refused: {path} is larger than it declares")
            out.files[path] = body
    return strip_common_folder(out)


def strip_common_folder(found: SetFiles) -> SetFiles:
    """A set whose files all sit in one top folder: that folder's contents,
    named after it."""
    tops = {p.split("/", 1)[0] for p in found.files}
    if len(tops) == 1 and all("/" in p for p in found.files):
        (top,) = tops
        return SetFiles(top, {p.split("/", 1)[1]: d for p, d in found.files.items()},
                        found.ignored)  # fmt: skip
    return found
