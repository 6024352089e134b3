"""Screens in the bus's key-value bucket: names, stored values, validation.

Pure functions, no I/O. A screen is stored under its name in the ``screens`` bucket
as UTF-8 JSON: the screen object plus a top-level ``_rev`` member (who saved it,
when, and why) that readers strip before validating and serving. A delete marker
carries ``{"_rev": …}`` alone. See docs/bus.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, Final

import jsonschema_rs

from synoptic_schemas.errors import ContractError
from synoptic_schemas.jsonschemas import load_schema

#: The default bucket name.
DEFAULT_BUCKET: Final = "screens"
#: Revisions kept per screen (the KV maximum).
HISTORY: Final = 64
#: The largest screen JSON accepted (the bus's max_payload may be lower).
MAX_SCREEN_BYTES: Final = 5 * 1024 * 1024
#: The member of a stored value that records its save.
REV_KEY: Final = "_rev"
#: A screen name: a KV key without ``.``, ``*``, ``>``, ``/`` or non-ASCII.
NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
MAX_SUMMARY_CHARS: Final = 500
MAX_BY_CHARS: Final = 200


class ScreenNameError(ContractError):
    """A screen name that is not a valid key."""

    def __init__(self, name: object) -> None:
        shown = repr(name)[:80]
        super().__init__(
            f"invalid screen name {shown}: 1-128 characters of A-Z a-z 0-9 _ -, "
            "starting with a letter or digit"
        )
        self.name = name


class ScreenInvalidError(ContractError):
    """A screen that fails the schema (or is not a JSON object at all);
    ``pointer`` is the JSON pointer of the first error, ``reason`` its text."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__(f"invalid screen at {pointer or '/'}: {reason}")
        self.pointer = pointer
        self.reason = reason


class ScreenTooLargeError(ContractError):
    """A screen larger than the limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"screen of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


def check_name(name: object) -> str:
    """``name`` if it is a valid screen name; :class:`ScreenNameError` otherwise."""
    if not isinstance(name, str) or not NAME.match(name):
        raise ScreenNameError(name)
    return name


def _pointer(path: Any) -> str:
    return "".join(
        "/" + str(p).replace("~", "~0").replace("/", "~1") for p in list(path)
    )


@cache
def _validator() -> Any:
    return jsonschema_rs.validator_for(load_schema("screen"))


def first_error(screen: Any) -> tuple[str, str] | None:
    """The JSON pointer and reason of the first schema error of ``screen``, or None
    when it is valid (~1 ms for 1000 widgets)."""
    for error in _validator().iter_errors(screen):
        return _pointer(error.instance_path), error.message
    return None


def validate_screen(screen: Any) -> dict[str, Any]:
    """``screen`` if it is a valid screen; :class:`ScreenInvalidError` otherwise."""
    if not isinstance(screen, dict):
        raise ScreenInvalidError(
            "", f"a screen is a JSON object, not {_json_type(screen)}"
        )
    if REV_KEY in screen:
        raise ScreenInvalidError(
            f"/{REV_KEY}", f"'{REV_KEY}' is reserved for the store"
        )
    found = first_error(screen)
    if found is not None:
        raise ScreenInvalidError(*found)
    return screen


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a " + type(value).__name__


def parse_json(data: bytes, limit: int = MAX_SCREEN_BYTES) -> Any:
    """Decode UTF-8 JSON of at most ``limit`` bytes; :class:`ScreenTooLargeError` or
    :class:`ScreenInvalidError` (pointer ``""``) with the reason otherwise."""
    if len(data) > limit:
        raise ScreenTooLargeError(len(data), limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScreenInvalidError(
            "", f"not UTF-8: byte {exc.start} is {data[exc.start : exc.start + 1]!r}"
        ) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ScreenInvalidError("", "JSON nested too deeply") from None
    except ValueError as exc:
        raise ScreenInvalidError("", f"not JSON: {exc}") from None


@dataclass(frozen=True, slots=True)
class RevInfo:
    """Who saved a revision, when (ISO-8601 UTC), and the summary they gave."""

    by: str = ""
    at: str = ""
    summary: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"by": self.by, "at": self.at, "summary": self.summary}


def now_iso() -> str:
    """The current time as ISO-8601 UTC with milliseconds (``…Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def make_rev(by: str, summary: str = "", at: str | None = None) -> RevInfo:
    """A save record, with the lengths bounded."""
    return RevInfo(by[:MAX_BY_CHARS], at or now_iso(), summary[:MAX_SUMMARY_CHARS])


def encode_stored(screen: dict[str, Any] | None, rev: RevInfo) -> bytes:
    """The bytes stored in the bucket: the screen plus ``_rev`` (a delete marker:
    ``None`` screen, ``_rev`` alone)."""
    body = {**(screen or {}), REV_KEY: rev.as_dict()}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def encode_valid(text: str, rev: RevInfo) -> bytes:
    """What :func:`encode_stored` makes, from a screen already validated and
    written as compact JSON text (an object) by its maker: ``_rev`` appended,
    the text neither parsed nor encoded again."""
    if not text.startswith("{") or not text.endswith("}"):
        raise ScreenInvalidError("", "a screen is a JSON object")
    record = json.dumps(rev.as_dict(), ensure_ascii=False, separators=(",", ":"))
    sep = "" if text == "{}" else ","
    return f'{text[:-1]}{sep}"{REV_KEY}":{record}}}'.encode()


def decode_stored(data: bytes) -> tuple[Any, RevInfo]:
    """A stored value split into the screen and its save record. Raises
    :class:`ScreenInvalidError` for bytes that are not a UTF-8 JSON object; a value
    written without ``_rev`` (by another tool) has an empty record."""
    value = parse_json(data, limit=max(len(data), 1))
    if not isinstance(value, dict):
        raise ScreenInvalidError(
            "", f"a screen is a JSON object, not {_json_type(value)}"
        )
    raw = value.pop(REV_KEY, None)
    if not isinstance(raw, dict):
        return value, RevInfo()
    return value, RevInfo(
        str(raw.get("by", ""))[:MAX_BY_CHARS],
        str(raw.get("at", ""))[:64],
        str(raw.get("summary", ""))[:MAX_SUMMARY_CHARS],
    )


def dump_screen(screen: dict[str, Any]) -> bytes:
    """A screen as compact UTF-8 JSON (what the gateway serves)."""
    return json.dumps(screen, ensure_ascii=False, separators=(",", ":")).encode()


__all__ = [
    "DEFAULT_BUCKET",
    "HISTORY",
    "MAX_SCREEN_BYTES",
    "NAME",
    "REV_KEY",
    "RevInfo",
    "ScreenInvalidError",
    "ScreenNameError",
    "ScreenTooLargeError",
    "audit_record",
    "check_name",
    "decode_stored",
    "dump_screen",
    "encode_stored",
    "encode_valid",
    "first_error",
    "make_rev",
    "now_iso",
    "parse_json",
    "validate_screen",
]


def audit_record(
    who: str, screen: str, op: str, rev: int, summary: str, t: int, by: str
) -> dict[str, Any]:
    """A ``cs.audit.screens`` record (msgpack on the bus): ``op`` is ``put``,
    ``revert`` or ``delete``; ``t`` ns since the epoch; ``by`` the gateway."""
    return {"ver": 1, "who": who, "screen": screen, "op": op, "rev": rev,
            "summary": summary, "t": t, "by": by}  # fmt: skip
