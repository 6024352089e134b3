"""URI ⇄ NATS subject mapping: the only place that knows how channels become subjects.

Layout (prefix ``cs`` by default)::

    cs.val.ca.<pv>                                   live values
    cs.val.tango.<host:port>.<dom>.<fam>.<mem>.<attr>
    cs.meta.<same tail>                              metadata
    cs.sev.<same tail>                               severity transitions (alarm feed)
    cs.put.<same tail>                               write requests (request/reply)
    cs.cmd.tango.<host:port>.<dom>.<fam>.<mem>.<command>
                                                     Tango command requests (request/reply)
    cs.want.<proto>                                  demand announcements
    cs.hb.<adapter id>                               adapter heartbeats
    cs.audit.<proto>                                 write audit records
    cs.hist.val.<same tail>                          stored history (republished)
    cs.hist.arr.<same tail>                          large values kept, thinned
    cs.hist.meta.<same tail>                         metadata history (republished)
    cs.roll.0.<same tail>                            history blocks (closed)
    cs.roll.open.<same tail>                         a channel's growing block
    cs.alarm.st.<same tail>                          an alarm's state (alarm service)
    cs.alarm.req                                     acknowledge/shelve requests
    cs.alarm.hb                                      the alarm service's heartbeat

Each name token is escaped reversibly: ``.``, ``*``, ``>``, ``%``, whitespace and
control characters become ``%XX`` (UTF-8 bytes, upper-case hex). Tango names are
split into tokens so consumers can use wildcards (``cs.val.tango.*.sr.>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from synoptic_schemas.channels import (
    FLAT_PROTOCOLS,
    MAX_NAME_CHARS,
    PROTOCOLS,
    Channel,
    parse_channel,
)
from synoptic_schemas.errors import ChannelError

Kind = Literal["val", "meta", "put", "cmd", "sev"]
KINDS: tuple[Kind, ...] = ("val", "meta", "put", "cmd", "sev")
DEFAULT_PREFIX = "cs"

_MUST_ESCAPE = re.compile(r"[.*>%\s\x00-\x1f\x7f]")
_VALID_PREFIX = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def escape_token(text: str) -> str:
    """Escape one subject token (reversible with :func:`unescape_token`)."""
    return _MUST_ESCAPE.sub(_percent, text)


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode())


def unescape_token(token: str) -> str:
    """Undo :func:`escape_token`."""
    return unquote(token, errors="strict") if "%" in token else token


def subject_tail(channel: Channel) -> str:
    """``ca.<pv>`` or ``tango.<host:port>.<d>.<f>.<m>.<a>``, tokens escaped."""
    tokens = channel.name.split("/") if channel.proto == "tango" else [channel.name]
    return channel.proto + "." + ".".join(escape_token(t) for t in tokens)


@dataclass(frozen=True, slots=True)
class Subjects:
    """Subject names under one deployment prefix."""

    prefix: str = DEFAULT_PREFIX

    def __post_init__(self) -> None:
        if not _VALID_PREFIX.match(self.prefix):
            raise ValueError(f"invalid subject prefix {self.prefix!r}")

    def of(self, kind: Kind, channel: Channel) -> str:
        """The ``val``/``meta``/``put``/``cmd``/``sev`` subject of a channel."""
        return f"{self.prefix}.{kind}.{subject_tail(channel)}"

    def val(self, channel: Channel) -> str:
        return self.of("val", channel)

    def meta(self, channel: Channel) -> str:
        return self.of("meta", channel)

    def put(self, channel: Channel) -> str:
        return self.of("put", channel)

    def sev(self, channel: Channel) -> str:
        """Where the owning adapter publishes a channel's severity transitions: a
        change of severity, status text or connection (the alarm service's feed,
        so that it never reads every value)."""
        return self.of("sev", channel)

    def cmd(self, channel: Channel) -> str:
        """The request subject of a Tango command, named like an attribute:
        ``tango://HOST:PORT/domain/family/member/command`` (ADR 0028)."""
        return self.of("cmd", channel)

    def hist(self, channel: Channel) -> str:
        """The subject a channel's values are kept under in the history stream
        (the last-value stream republishes ``val`` there; nobody else publishes)."""
        return f"{self.prefix}.hist.val.{subject_tail(channel)}"

    def hist_large(self, channel: Channel) -> str:
        """The subject a channel's large values (arrays, images: over the raw
        history's message limit) are kept under, thinned, by the rollup."""
        return f"{self.prefix}.hist.arr.{subject_tail(channel)}"

    def hist_meta(self, channel: Channel) -> str:
        """The subject a channel's metadata is kept under in the metadata history
        (the last-value stream republishes ``meta`` there; nobody else publishes)."""
        return f"{self.prefix}.hist.meta.{subject_tail(channel)}"

    def block(self, channel: Channel, level: Literal["0", "open"] = "0") -> str:
        """The subject of a channel's history blocks (``synoptic_schemas.blocks``):
        closed blocks of a level, or the latest growing one (``open``)."""
        return f"{self.prefix}.roll.{level}.{subject_tail(channel)}"

    def block_channel(self, subject: str) -> Channel:
        """The channel of a ``block`` subject (either level)."""
        head = f"{self.prefix}.roll."
        level, _, tail = subject.removeprefix(head).partition(".")
        if not subject.startswith(head) or level not in ("0", "open"):
            raise ChannelError(f"subject {subject[:80]!r} is not a history block")
        return self.parse(f"{self.prefix}.val.{tail}")[1]

    def all_of(self, kind: Kind, proto: str | None = None) -> str:
        """Wildcard over every channel of a kind, optionally of one protocol."""
        return f"{self.prefix}.{kind}.{proto}.>" if proto else f"{self.prefix}.{kind}.>"

    def want(self, proto: str) -> str:
        """Demand announcements for one protocol."""
        return f"{self.prefix}.want.{proto}"

    def hb(self, adapter_id: str) -> str:
        """Heartbeats of one adapter instance (``*`` for all)."""
        return (
            f"{self.prefix}.hb.{escape_token(adapter_id) if adapter_id != '*' else '*'}"
        )

    def audit(self, proto: str) -> str:
        """Audit records of writes for one protocol (``*`` for all)."""
        return f"{self.prefix}.audit.{proto}"

    def alarm(self, channel: Channel) -> str:
        """Where the alarm service publishes the state of a channel's alarm."""
        return f"{self.prefix}.alarm.st.{subject_tail(channel)}"

    def alarms(self) -> str:
        """Wildcard over every alarm's state."""
        return f"{self.prefix}.alarm.st.>"

    def alarm_channel(self, subject: str) -> Channel:
        """The channel of an alarm state subject."""
        head = f"{self.prefix}.alarm.st."
        if not subject.startswith(head):
            raise ChannelError(f"subject {subject[:80]!r} is not an alarm state")
        return self.parse(f"{self.prefix}.val.{subject.removeprefix(head)}")[1]

    def alarm_request(self) -> str:
        """Acknowledge/shelve requests (request/reply) to the alarm service."""
        return f"{self.prefix}.alarm.req"

    def alarm_heartbeat(self) -> str:
        """The alarm service's heartbeat."""
        return f"{self.prefix}.alarm.hb"

    def uris(self, subjects: list[str], kind: Kind = "val") -> list[str]:
        """The channel URIs of many subjects of one kind, in order; subjects of
        another kind or naming no channel are skipped. As :meth:`parse`, but a
        plain flat name (no escape) costs a string check, not a parse: a directory
        of 100,000 channels is read in milliseconds."""
        head = f"{self.prefix}.{kind}."
        cut = len(head)
        out: list[str] = []
        for subject in subjects:
            if not subject.startswith(head):
                continue
            proto, _, name = subject[cut:].partition(".")
            if (
                proto in FLAT_PROTOCOLS
                and name
                and "%" not in name
                and "." not in name
                and len(name) <= MAX_NAME_CHARS
                and not _CONTROL.search(name)
            ):
                out.append(f"{proto}://{name}")
                continue
            try:
                out.append(self.parse(subject)[1].uri)
            except ChannelError:
                continue
        return out

    def parse(self, subject: str) -> tuple[Kind, Channel]:
        """Map a ``val``/``meta``/``put``/``cmd``/``sev`` subject back to its kind
        and channel."""
        head = self.prefix + "."
        if not subject.startswith(head):
            raise ChannelError(f"subject {subject[:80]!r} is not under {self.prefix!r}")
        tokens = subject[len(head) :].split(".")
        if len(tokens) < 3 or tokens[0] not in KINDS or tokens[1] not in PROTOCOLS:
            raise ChannelError(f"subject {subject[:80]!r} names no channel")
        kind: Kind = tokens[0]  # type: ignore[assignment]
        proto, rest = tokens[1], tokens[2:]
        try:
            names = [unescape_token(t) for t in rest]
        except UnicodeDecodeError as exc:
            raise ChannelError(f"subject {subject[:80]!r}: bad escape ({exc})") from exc
        if proto in FLAT_PROTOCOLS:
            if len(names) != 1:
                raise ChannelError(f"subject {subject[:80]!r}: unescaped '.' in name")
            return kind, parse_channel(f"{proto}://{names[0]}")
        return kind, parse_channel(f"{proto}://{'/'.join(names)}")
