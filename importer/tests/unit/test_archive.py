"""A set given as a zip (a browser upload, a command-line file) is read safely:
limits on members, sizes and compression ratio, no path leaving the set, no
links, only the files an import reads."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from synoptic_importer.archive import (
    MAX_MEMBERS,
    ArchiveError,
    read_zip,
    safe_path,
)


def zipped(members: dict[str, bytes], *, deflate: bool = True) -> bytes:
    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zip_of_a_folder_is_that_folder_s_set() -> None:
    data = zipped({"ADCore/ADTop.bob": b"<display/>", "ADCore/sub/x.opi": b"<display/>",
                   "ADCore/plot.plt": b"<databrowser/>", "ADCore/README.md": b"#",
                   "ADCore/.hidden.bob": b"", "ADCore/pic/a.png": b"\x89PNG"})  # fmt: skip
    found = read_zip(data, "upload")
    assert found.name == "ADCore"
    assert sorted(found.files) == ["ADTop.bob", "pic/a.png", "plot.plt", "sub/x.opi"]
    assert sorted(found.ignored) == ["ADCore/.hidden.bob", "ADCore/README.md"]
    flat = read_zip(zipped({"a.bob": b"x", "b/c.bob": b"y"}), "mine")
    assert flat.name == "mine" and sorted(flat.files) == ["a.bob", "b/c.bob"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.bob", "leaves the set"),
        ("a/../../evil.bob", "leaves the set"),
        ("/etc/x.bob", "absolute path"),
        ("C:\\x.bob", "absolute path"),
        ("..\\..\\evil.bob", "leaves the set"),
    ],
)
def test_no_member_leaves_the_set(name: str, why: str) -> None:
    with pytest.raises(ArchiveError, match=why):
        read_zip(zipped({"ok.bob": b"x", name: b"x"}))
    assert safe_path("a/./b\\c.bob") == "a/b/c.bob"


def test_a_zip_bomb_is_refused_before_it_is_inflated() -> None:
    bomb = zipped({"a.bob": b"\0" * (50 * 1024 * 1024)})
    assert len(bomb) < 100_000
    with pytest.raises(ArchiveError, match=r"bytes|zip bomb"):
        read_zip(bomb)
    dense = zipped({"big.bob": b"\0" * (2 * 1024 * 1024)})
    with pytest.raises(ArchiveError, match="zip bomb"):
        read_zip(dense)


def test_a_member_lying_about_its_size_and_too_many_members_are_refused() -> None:
    data = bytearray(zipped({"a.bob": b"x" * 1000}, deflate=False))
    # the central directory says 10 bytes: reading stops there, and says so
    lie = bytes(data).replace((1000).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    with pytest.raises(ArchiveError, match=r"larger than it declares|refused"):
        read_zip(lie)
    many = zipped({f"f{i}.bob": b"" for i in range(MAX_MEMBERS + 1)}, deflate=False)
    with pytest.raises(ArchiveError, match="members"):
        read_zip(many)
    with pytest.raises(ArchiveError, match="not a zip"):
        read_zip(b"PK\x03\x04 not really")


def test_links_in_a_zip_are_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo("link.bob")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="is a link"):
        read_zip(buf.getvalue())
