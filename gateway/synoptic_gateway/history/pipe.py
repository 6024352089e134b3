"""Messages between the gateway and its history process over a stream socket:
``>II`` (header length, body length), a msgpack header, then a raw body (an
encoded answer, passed through untouched)."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import msgpack

_LENGTHS = struct.Struct(">II")


def send(writer: asyncio.StreamWriter, header: Any, body: bytes = b"") -> None:
    """Queue one message on ``writer`` (the caller drains when it wants)."""
    head = msgpack.packb(header, use_bin_type=True)
    writer.write(_LENGTHS.pack(len(head), len(body)) + head)
    if body:
        writer.write(body)


async def receive(reader: asyncio.StreamReader) -> tuple[Any, bytes]:
    """The next message; raises :class:`asyncio.IncompleteReadError` at the end."""
    n_head, n_body = _LENGTHS.unpack(await reader.readexactly(_LENGTHS.size))
    head = msgpack.unpackb(await reader.readexactly(n_head), raw=False)
    body = await reader.readexactly(n_body) if n_body else b""
    return head, body
