"""Channel URIs: the one parser of `ca://`, `pva://`, `sim://` and `tango://` names.

A channel is identified by its normalised URI. EPICS and simulator names are
case-sensitive and kept verbatim; Tango names are case-insensitive and lower-cased,
and always carry an explicit ``host:port`` (port 10000 when omitted). A trailing
``#dbase=no`` on a Tango URI is accepted and dropped: it says how to reach a
device, not which channel it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from synoptic_schemas.errors import ChannelError

#: Protocols whose channel is one opaque name (a PV name).
FLAT_PROTOCOLS = frozenset({"ca", "pva", "sim"})
#: All protocols the contract knows.
PROTOCOLS = FLAT_PROTOCOLS | {"tango"}
#: Longest accepted channel name, in characters (keeps subjects under NATS limits).
MAX_NAME_CHARS = 1000
TANGO_DEFAULT_PORT = 10000

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TANGO_PART = re.compile(r"^(?!\s*$)[^/]+$")


@dataclass(frozen=True, slots=True)
class Channel:
    """One control-system channel.

    ``name`` is the PV name for flat protocols; for Tango it is
    ``host:port/domain/family/member/attribute`` in lower case.
    """

    proto: str
    name: str

    @property
    def uri(self) -> str:
        """The normalised URI, e.g. ``ca://SR:DCCT`` or ``tango://h:10000/a/b/c/d``."""
        return f"{self.proto}://{self.name}"

    @property
    def tango_parts(self) -> tuple[str, str, str, str, str]:
        """``(host:port, domain, family, member, attribute)`` of a Tango channel."""
        if self.proto != "tango":
            raise ChannelError(f"{self.uri!r} is not a Tango channel")
        hostport, domain, family, member, attribute = self.name.split("/")
        return hostport, domain, family, member, attribute

    @property
    def tango_device(self) -> str:
        """``host:port/domain/family/member`` of a Tango channel."""
        return self.name.rsplit("/", 1)[0]

    def __str__(self) -> str:
        return self.uri


def parse_channel(uri: str) -> Channel:
    """Parse and normalise a channel URI; raise :class:`ChannelError` naming the problem."""
    if not isinstance(uri, str):
        raise ChannelError(f"channel URI must be a string, not {type(uri).__name__}")
    scheme, sep, rest = uri.partition("://")
    if not sep:
        raise ChannelError(f"{uri[:80]!r} has no scheme: expected e.g. 'ca://PV:NAME'")
    scheme = scheme.lower()
    if scheme not in PROTOCOLS:
        known = ", ".join(sorted(PROTOCOLS))
        raise ChannelError(
            f"unknown scheme {scheme!r} in {uri[:80]!r} (known: {known})"
        )
    if scheme == "tango":
        return Channel("tango", _normalise_tango(rest, uri))
    _check_name(rest, uri)
    return Channel(scheme, rest)


def _check_name(name: str, uri: str) -> None:
    if not name:
        raise ChannelError(f"{uri[:80]!r} has an empty channel name")
    if len(name) > MAX_NAME_CHARS:
        raise ChannelError(
            f"channel name of {len(name)} characters exceeds {MAX_NAME_CHARS}"
        )
    if _CONTROL.search(name):
        raise ChannelError(f"{uri[:80]!r} contains a control character")


def _normalise_tango(rest: str, uri: str) -> str:
    rest = rest.removesuffix("#dbase=no")
    _check_name(rest, uri)
    parts = rest.lower().split("/")
    if len(parts) != 5:
        raise ChannelError(
            f"{uri[:80]!r}: a Tango URI is tango://HOST:PORT/domain/family/member/"
            f"attribute ({len(parts) - 1} path parts after the host, expected 4)"
        )
    for part in parts:
        if not _TANGO_PART.match(part):
            raise ChannelError(f"{uri[:80]!r}: empty or blank part {part!r}")
    host, colon, port = parts[0].rpartition(":")
    if not colon:
        host, port = parts[0], str(TANGO_DEFAULT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ChannelError(f"{uri[:80]!r}: host must be HOST:PORT, got {parts[0]!r}")
    parts[0] = f"{host}:{int(port)}"
    return "/".join(parts)
