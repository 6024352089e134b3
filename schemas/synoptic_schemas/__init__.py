"""Synoptic's wire contract: channel URIs, subjects, bus payloads and their codec.

Pure functions and types, no I/O. Adapters, gateways and bus consumers all agree
through this package and nothing else.
"""

from synoptic_schemas.channels import Channel, parse_channel
from synoptic_schemas.codec import (
    decode,
    decode_audit,
    decode_cmd,
    decode_cmd_reply,
    decode_heartbeat,
    decode_meta,
    decode_put,
    decode_put_reply,
    decode_sev,
    decode_value,
    encode,
)
from synoptic_schemas.errors import (
    ChannelError,
    ContractError,
    DecodeError,
    VersionError,
)
from synoptic_schemas.messages import SCHEMA_VERSION, PutError, Severity
from synoptic_schemas.subjects import Subjects

__all__ = [  # noqa: RUF022 - grouped by concern
    # channels and subjects
    "Channel",
    "ChannelError",
    "Subjects",
    "parse_channel",
    # payloads
    "SCHEMA_VERSION",
    "PutError",
    "Severity",
    "decode",
    "decode_audit",
    "decode_cmd",
    "decode_cmd_reply",
    "decode_heartbeat",
    "decode_meta",
    "decode_put",
    "decode_put_reply",
    "decode_sev",
    "decode_value",
    "encode",
    # errors
    "ContractError",
    "DecodeError",
    "VersionError",
]
