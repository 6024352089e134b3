"""Screen names, stored values and validation (pure, no servers)."""

from __future__ import annotations

import pytest

from synoptic_schemas.screens import (
    RevInfo,
    ScreenInvalidError,
    ScreenNameError,
    ScreenTooLargeError,
    check_name,
    decode_stored,
    encode_stored,
    first_error,
    parse_json,
    validate_screen,
)

SCREEN = {"title": "ü", "widgets": [{"type": "text", "options": {"text": "a/b~c"}}]}


@pytest.mark.parametrize("name", ["a", "A-1_b", "9" * 128])
def test_valid_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name", ["", ".", "..", "a.b", "a*", "a>", "ä", "a/b", "-a", "a" * 129, 5, None]
)
def test_invalid_names(name: object) -> None:
    with pytest.raises(ScreenNameError, match="invalid screen name"):
        check_name(name)


def test_stored_value_round_trip_and_foreign_values() -> None:
    rev = RevInfo("alice", "2026-01-01T00:00:00.000Z", "why")
    assert decode_stored(encode_stored(SCREEN, rev)) == (SCREEN, rev)
    assert decode_stored(encode_stored(None, rev)) == ({}, rev)
    assert decode_stored(b'{"title":"t","widgets":[]}') == (
        {"title": "t", "widgets": []},
        RevInfo(),
    )
    with pytest.raises(ScreenInvalidError):
        decode_stored(b"[1]")


def test_first_error_has_an_escaped_pointer() -> None:
    screen = {"title": "t", "widgets": [{"type": "text", "options": {"a/b": 1}}]}
    pointer, reason = first_error(screen) or ("", "")
    assert pointer == "/widgets/0/options" and "a/b" in reason
    assert validate_screen(SCREEN) is SCREEN


def test_parse_json_errors() -> None:
    with pytest.raises(ScreenTooLargeError):
        parse_json(b" " * 11, limit=10)
    with pytest.raises(ScreenInvalidError, match="not UTF-8: byte 1"):
        parse_json(b'"\xff"')
    with pytest.raises(ScreenInvalidError, match="not JSON"):
        parse_json(b"{")
    with pytest.raises(ScreenInvalidError, match="nested too deeply"):
        parse_json(b"[" * 100_000 + b"]" * 100_000)
