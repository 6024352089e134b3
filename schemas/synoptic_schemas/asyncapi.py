"""The bus contract as an AsyncAPI 3 document, generated from the JSON Schemas.

``python -m synoptic_schemas.asyncapi > docs/asyncapi.yaml`` (``make asyncapi``).
The payload schemas are the files of ``json/``, inlined under
``components.schemas`` (their ``$defs`` hoisted beside them as ``<file>.<def>``);
the channels are the rows of :data:`CHANNELS`. Adding a subject to the contract is
one row there (and its schema file, if it has a new payload). The document is
written from the point of view of a service that uses the bus, as docs/bus.md is:
it receives values, metadata, heartbeats and audit records, and sends demand and
write requests. Adapters do the opposite.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from synoptic_schemas.jsonschemas import load_schema
from synoptic_schemas.messages import SCHEMA_VERSION

MSGPACK = "application/msgpack"
JSON = "application/json"

Action = Literal["send", "receive"]


@dataclass(frozen=True, slots=True)
class BusChannel:
    """One subject pattern of the bus, as a row of :data:`CHANNELS`.

    ``address`` is the subject; it may name parameters of :data:`PARAMETERS` in
    braces (``{prefix}``: the deployment's prefix); ``payload`` is a schema file name
    (``value`` for ``json/value.schema.json``) or ``None`` for an empty message;
    ``reply`` the schema of a request/reply answer; ``action`` is what a service
    using the bus does on it.
    """

    key: str
    address: str
    payload: str | None
    action: Action
    summary: str
    reply: str | None = None
    content_type: str = MSGPACK


#: The subjects of the contract, one row each (docs/bus.md describes them).
# fmt: off
CHANNELS: tuple[BusChannel, ...] = (
    BusChannel("value", "{prefix}.val.{tail}", "value", "receive", "Every change of a channel's value (the last one kept per subject in the CS_LAST stream)."),
    BusChannel("meta", "{prefix}.meta.{tail}", "meta", "receive", "A channel's metadata, published on connect and whenever it changes (the last one kept per subject in the CS_LAST stream)."),
    BusChannel("sev", "{prefix}.sev.{tail}", "sev", "receive", "A channel's severity transitions: published by the owning adapter beside the value that changed its severity, status text or connection (and a channel's first value), with that value's seq and ep; the alarm service's feed, so that it never reads every value."),
    BusChannel("put", "{prefix}.put.{tail}", "put", "send", "Write a channel's value: a NATS request answered by the adapter that owns the channel; no responders means no adapter owns it.", reply="put-reply"),
    BusChannel("cmd", "{prefix}.cmd.{tail}", "cmd", "send", "Run a Tango command, named like an attribute (device + command name): a NATS request answered by the adapter that owns the device, with the command's output; no responders means no adapter owns it.", reply="cmd-reply"),
    BusChannel("want", "{prefix}.want.{proto}", "want", "send", "Demand: the channels a consumer needs for a lease period; adapters monitor them until the lease lapses."),
    BusChannel("heartbeat", "{prefix}.hb.{adapter}", "heartbeat", "receive", "An adapter instance's heartbeat, every `period` seconds; 3 missed periods mean its channels are stale."),
    BusChannel("audit", "{prefix}.audit.{proto}", "audit", "receive", "Every write that passed through a gateway: who, channel, value, result, time."),
    BusChannel("screen-audit", "{prefix}.audit.screens", "screen-audit", "receive", "Every save, revert and delete of a screen (a key of the `screens` KV bucket) through a gateway: who, screen, op, revision, summary, time."),
    BusChannel("auth-audit", "{prefix}.audit.auth", "auth-audit", "receive", "Every token a gateway refused (at connect, in a renewal, on an HTTP request): the name it claimed, why, from where, when. Never the token."),
    BusChannel("history", "{prefix}.hist.val.{tail}", "value", "receive", "Recent history: the CS_LAST stream republishes each stored value here and the CS_HIST stream keeps them for a window (default 1 h); read with a pull consumer or Direct Get batches. Nobody else publishes here."),
    BusChannel("history-large", "{prefix}.hist.arr.{tail}", "value", "receive", "Large values (arrays, images: over the raw history's message limit, which refuses them) kept by `synoptic rollup`, thinned to an equal share per channel of the CS_ARRAYS stream's bytes over its window; each message the value payload as the adapter published it. Nobody else publishes here."),
    BusChannel("history-meta", "{prefix}.hist.meta.{tail}", "meta", "receive", "Metadata history: the CS_LAST stream republishes each stored metadata message here and the CS_META stream keeps them for a long window (default 400 days), so the units, limits and labels in force at any moment can be read back (Direct Get `multi_last` with `up_to_time`). Nobody else publishes here."),
    BusChannel("history-blocks", "{prefix}.roll.0.{tail}", "block", "receive", "History blocks: `synoptic rollup` cuts each channel's values into blocks of a time window (60 s) and publishes each closed block once here as typed arrays; the CS_ROLL stream keeps them for the history window. Readers take what no block covers from the raw history."),
    BusChannel("history-open-block", "{prefix}.roll.open.{tail}", "block", "receive", "A channel's growing block, republished every second while it grows (every 10 s while it does not): stream CS_ROLL_OPEN keeps the latest of each subject only; read it with Direct Get (`multi_last`)."),
    BusChannel("screens", "$KV.{bucket}.{screen}", "screen-entry", "receive", "The screens key-value bucket (stream KV_{bucket}): every saved revision of a screen, one key per screen, 64 revisions kept; watch it for changes. Writes are conditional on the last revision (docs/bus.md).", content_type=JSON),
    BusChannel("alarm", "{prefix}.alarm.st.{tail}", "alarm", "receive", "The state of one alarm (a channel of the alarm tree) after each change: its source's severity, the latched severity, acknowledged by whom, shelved until when; published by the alarm service (`synoptic alarms`), the last 20 of each alarm kept by the CS_ALARM stream. Drop a state whose `n` is not newer than the one held."),
    BusChannel("alarm-request", "{prefix}.alarm.req", "alarm-request", "send", "Acknowledge, unacknowledge, shelve or unshelve alarms on behalf of an end user: a NATS request answered by the alarm service once the new states are stored. Gateways authorise it first (the grant to acknowledge alarms) and audit it; no responders means no alarm service runs.", reply="alarm-reply"),
    BusChannel("alarm-heartbeat", "{prefix}.alarm.hb", "alarm-heartbeat", "receive", "The alarm service is alive, every `period` seconds: channels of the tree it follows, active alarms, the tree revision in use."),
    BusChannel("alarm-audit", "{prefix}.audit.alarms", "alarm-audit", "receive", "Every acknowledge, unacknowledge, shelve and unshelve request a gateway handled, refused ones included: who, which alarms, the result, time."),
    BusChannel("alarm-tree", "$KV.{treebucket}.tree", "alarm-tree", "receive", "The alarm tree: one key of its key-value bucket (stream KV_{treebucket}), every saved revision, 64 kept. The stored value is the tree as UTF-8 JSON plus a `_rev` member (by, at, summary), zlib-compressed (RFC 1950). Writes are conditional on the last revision (docs/bus.md).", content_type="application/zlib"),
    BusChannel("barrier", "{prefix}.sync.barrier", None, "send", "Store barrier: an empty JetStream publish whose acknowledgement proves the CS_LAST stream has ingested everything published before it (ADR 0009). Not a data subject."),
)
# fmt: on

#: Address parameters, by name (every ``{name}`` of a row's address).
PARAMETERS: dict[str, dict[str, Any]] = {
    "prefix": {
        "description": "The deployment's subject prefix: one or more tokens.",
        "default": "cs",
        "examples": ["cs", "site.cs"],
    },
    "tail": {
        "description": (
            "The channel: `<proto>.<name tokens>`. `ca.<pv>` for EPICS Channel "
            "Access, `tango.<host:port>.<domain>.<family>.<member>.<attribute>` "
            "for Tango (lower case), `pva.<pv>` for PV Access. Each token is "
            "percent-escaped (`.`, `*`, `>`, `%`, whitespace and control "
            "characters become `%XX`), so wildcards work on whole names: "
            "`cs.val.tango.*.sr.>`."
        ),
        "examples": ["ca.SR:DCCT%2EHIHI", "tango.tango-cs:10000.sr.d-ct.1.current"],
    },
    "proto": {
        "description": "The channel protocol: `ca`, `tango`, `pva`.",
        "examples": ["ca", "tango"],
    },
    "bucket": {
        "description": "The screens key-value bucket.",
        "default": "screens",
        "examples": ["screens"],
    },
    "screen": {
        "description": "A screen name: 1-128 of A-Z a-z 0-9 _ -, starting with a "
        "letter or digit.",
        "examples": ["epics-demo"],
    },
    "treebucket": {
        "description": "The alarm tree's key-value bucket.",
        "default": "alarmtree",
        "examples": ["alarmtree"],
    },
    "adapter": {
        "description": "An adapter instance's id (percent-escaped as a token).",
        "examples": ["epics-0", "tango-w1"],
    },
}

_TYPED_ARRAYS = (
    "On the bus the payload is a msgpack map with these keys; a typed array (a "
    "waveform, a Tango spectrum or image) is msgpack ext type 1: u8 dtype code, "
    "u8 ndim, ndim x u32 little-endian dims, raw little-endian elements. The JSON "
    "view (the gateway's JSON mode, this schema) shows it as "
    "`{dtype, shape, b64}`."
)


def _ref_target(ref: str, here: str) -> str:
    """A ``$ref`` of schema file ``here`` as a reference into the document."""
    file, _, pointer = ref.partition("#")
    name = file.removesuffix(".schema.json") if file else here
    if not pointer or pointer == "/":
        return f"#/components/schemas/{name}"
    head, _, rest = pointer.removeprefix("/$defs/").partition("/")
    if not pointer.startswith("/$defs/"):
        raise ValueError(f"{here}: cannot place $ref {ref!r} in the document")
    return f"#/components/schemas/{name}.{head}" + (f"/{rest}" if rest else "")


def _rewrite(node: Any, here: str) -> Any:
    if isinstance(node, dict):
        return {
            k: (_ref_target(v, here) if k == "$ref" else _rewrite(v, here))
            for k, v in node.items()
            if k not in ("$schema", "$id", "$defs")
        }
    if isinstance(node, list):
        return [_rewrite(v, here) for v in node]
    return node


def _referenced_files(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = set().union(*(_referenced_files(v) for v in node.values()))
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.split("#")[0]:
            found.add(ref.split("#")[0].removesuffix(".schema.json"))
        return found
    if isinstance(node, list):
        return set().union(*(_referenced_files(v) for v in node))
    return set()


def _schemas(names: list[str]) -> dict[str, Any]:
    """Every schema in ``names`` and the files they reference, ``$defs`` hoisted."""
    todo, done = list(names), []
    while todo:
        name = todo.pop(0)
        if name not in done:
            done.append(name)
            todo.extend(sorted(_referenced_files(load_schema(name)) - set(done)))
    out: dict[str, Any] = {}
    for name in done:
        schema = load_schema(name)
        if set(schema) - {"$schema", "$id", "title", "$defs", "description"}:
            out[name] = _rewrite(schema, name)
        for key, sub in schema.get("$defs", {}).items():
            out[f"{name}.{key}"] = _rewrite(sub, name)
    return out


def _message(name: str | None, content_type: str) -> dict[str, Any]:
    if name is None:
        return {
            "name": "empty",
            "title": "Empty message",
            "summary": "No payload.",
            "contentType": content_type,
        }
    schema = load_schema(name)
    message = {
        "name": name,
        "title": schema.get("title", name),
        "contentType": content_type,
        "payload": {"$ref": f"#/components/schemas/{name}"},
    }
    if content_type == MSGPACK:
        message["description"] = _TYPED_ARRAYS
    return message


def _message_key(name: str | None) -> str:
    return name or "empty"


def document() -> dict[str, Any]:
    """The AsyncAPI 3.0 document of the bus contract."""
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for row in CHANNELS:
        for name in (row.payload, row.reply) if row.reply else (row.payload,):
            messages.setdefault(_message_key(name), _message(name, row.content_type))
        params = [p for p in PARAMETERS if "{" + p + "}" in row.address]
        msg_key = _message_key(row.payload)
        channels[row.key] = {
            "address": row.address,
            "summary": row.summary,
            "parameters": {p: {"$ref": f"#/components/parameters/{p}"} for p in params},
            "messages": {msg_key: {"$ref": f"#/components/messages/{msg_key}"}},
        }
        operation: dict[str, Any] = {
            "action": row.action,
            "channel": {"$ref": f"#/channels/{row.key}"},
            "summary": row.summary,
            "messages": [{"$ref": f"#/channels/{row.key}/messages/{msg_key}"}],
        }
        if row.reply:
            reply_key = f"{row.key}Reply"
            channels[reply_key] = {
                "address": None,
                "summary": f"The reply to a `{row.key}` request (the request's reply subject).",
                "messages": {row.reply: {"$ref": f"#/components/messages/{row.reply}"}},
            }
            operation["reply"] = {
                "channel": {"$ref": f"#/channels/{reply_key}"},
                "messages": [{"$ref": f"#/channels/{reply_key}/messages/{row.reply}"}],
            }
        operations[f"{row.action}{row.key[0].upper()}{row.key[1:]}"] = operation
    payloads = [r for row in CHANNELS for r in (row.payload, row.reply) if r]
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Synoptic bus",
            "version": f"{SCHEMA_VERSION}.0.0",
            "description": (
                "Live control-system data on NATS: values, metadata, writes, demand, "
                "heartbeats and audit records of EPICS, Tango and PV Access "
                "channels. Generated from the JSON Schemas in "
                "`schemas/synoptic_schemas/json/` by `make asyncapi`; the semantics "
                "(last-value store, gaps, epochs, disconnection) are in docs/bus.md. "
                "Every payload carries `ver`, the schema major version; a consumer "
                "rejects a major version it does not know."
            ),
        },
        "defaultContentType": MSGPACK,
        "servers": {
            "nats": {
                "host": "localhost:4222",
                "protocol": "nats",
                "description": "Any node of the deployment's NATS cluster.",
            }
        },
        "channels": channels,
        "operations": operations,
        "components": {
            "schemas": _schemas(list(dict.fromkeys(payloads))),
            "messages": messages,
            "parameters": PARAMETERS,
        },
    }


HEADER = (
    "# Generated by `make asyncapi` (python -m synoptic_schemas.asyncapi) from\n"
    "# schemas/synoptic_schemas/json/ and the channel table in\n"
    "# schemas/synoptic_schemas/asyncapi.py. Do not edit by hand.\n"
)


def render() -> str:
    """The document as YAML text, exactly as committed in docs/asyncapi.yaml."""
    body = yaml.safe_dump(
        document(), sort_keys=False, allow_unicode=True, width=88, indent=2
    )
    return HEADER + body


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
