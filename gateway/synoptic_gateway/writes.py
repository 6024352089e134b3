"""Writes and Tango commands of one connection: checked against the principal's
grants, forwarded to the owning adapter over the bus, answered and audited
(ADR 0028 for commands)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from synoptic_gateway.principal import Principal
from synoptic_schemas import (
    SCHEMA_VERSION,
    ChannelError,
    PutError,
    decode_cmd_reply,
    decode_put_reply,
    encode,
    frames,
    parse_channel,
)
from synoptic_schemas.channels import Channel
from synoptic_schemas.frames import ErrorCode, FrameError, Op

if TYPE_CHECKING:
    from synoptic_gateway.hub import Hub

audit_log = logging.getLogger("synoptic_gateway.audit")

#: Writes a connection may have in flight at once.
MAX_PUTS_IN_FLIGHT = 16


def _put_value_ok(value: Any) -> bool:
    if isinstance(value, bool | int | float | str | np.ndarray):
        return True
    if isinstance(value, list) and len(value) <= 1_000_000:
        return all(isinstance(v, bool | int | float | str) for v in value)
    return False


class Writes:
    """The ``put`` and ``cmd`` requests of one connection, at most
    :data:`MAX_PUTS_IN_FLIGHT` at once; each is answered through ``reply``."""

    def __init__(
        self,
        hub: Hub,
        principal: Callable[[], Principal],
        reply: Callable[[dict[str, Any]], None],
    ) -> None:
        self.hub = hub
        self._principal = principal  # who the socket is now (renewals re-grant)
        self._reply = reply
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, frame: dict[str, Any]) -> None:
        """Start a validated ``put`` or ``cmd`` frame; :class:`FrameError` if it
        cannot start (too many in flight, a bad channel)."""
        if len(self._tasks) >= MAX_PUTS_IN_FLIGHT:
            raise FrameError(
                ErrorCode.RATE_LIMITED,
                f"more than {MAX_PUTS_IN_FLIGHT} writes in flight",
                req_id=frame["id"],
            )
        try:
            channel = parse_channel(frame["ch"])
        except ChannelError as exc:
            raise FrameError(
                ErrorCode.BAD_CHANNEL,
                str(exc),
                req_id=frame["id"],
                ch=frame["ch"][:200],
            ) from None
        command = frame["op"] == Op.CMD
        write = self._put(frame["id"], channel, frame.get("v"), command=command)
        task = asyncio.create_task(write)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        """The connection is gone: stop the writes in flight."""
        for task in list(self._tasks):
            task.cancel()

    async def _put(
        self, req_id: Any, channel: Channel, value: Any, *, command: bool = False
    ) -> None:
        self.hub.stats.puts += 1
        uri = channel.uri
        principal = self._principal()
        who = principal.name
        out = None
        if command and channel.proto != "tango":
            ok, err, msg = False, PutError.BAD_REQUEST, "only Tango has commands"
        elif command and not principal.may_command(uri):
            ok, err, msg = (
                False,
                PutError.DENIED,
                f"{who} has no command grant for {uri}",
            )
        elif not command and not principal.may_write(uri):
            ok, err, msg = False, PutError.DENIED, f"{who} has no write grant for {uri}"
        elif not (command and value is None) and not _put_value_ok(value):
            ok, err, msg = False, PutError.BAD_REQUEST, "unsupported value type"
        else:
            ok, err, msg, out = await self._forward(channel, value, command)
        if command:
            self._reply(frames.cmd_reply(req_id, ok, err, msg, out))
        else:
            self._reply(frames.put_reply(req_id, ok, err, msg))
        await self._audit(channel, value, ok, err, msg, command=command)

    async def _forward(
        self, channel: Channel, value: Any, command: bool
    ) -> tuple[bool, Any, Any, Any]:
        """Send a put (or command) request to the owning adapter; its answer:
        ok, error code, message and the command's output."""
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeoutError

        timeout = self.hub.settings.put_timeout
        request: dict[str, Any] = {"ver": SCHEMA_VERSION, "who": self._principal().name,
                                   "timeout": timeout}  # fmt: skip
        if value is not None or not command:
            request["v"] = value
        subject = (self.hub.subjects.cmd if command else self.hub.subjects.put)(channel)
        try:
            reply = await self.hub.bus.request(subject, encode(request), timeout + 1.0)
            answer = (decode_cmd_reply if command else decode_put_reply)(reply.data)
        except NoRespondersError:
            return False, PutError.UNKNOWN, f"no adapter owns {channel.uri}", None
        except NatsTimeoutError:
            return False, PutError.TIMEOUT, "the adapter did not answer in time", None
        except Exception as exc:  # bus down, undecodable reply
            return False, PutError.FAILED, f"{type(exc).__name__}: {exc}", None
        out = answer.get("v")
        return bool(answer["ok"]), answer.get("err"), answer.get("msg"), out

    async def _audit(
        self, channel: Channel, value: Any, ok: bool, err: Any, msg: Any,
        *, command: bool = False,
    ) -> None:  # fmt: skip
        record: dict[str, Any] = {
            "ver": SCHEMA_VERSION, "who": self._principal().name, "ch": channel.uri,
            "v": value, "ok": ok, "t": time.time_ns(), "by": self.hub.gateway_id,
        }  # fmt: skip
        if command:
            record["op"] = "cmd"
        if not ok:
            record["err"] = err or PutError.FAILED
            if msg:
                record["msg"] = msg
        audit_log.info(
            "%s by %s to %s = %r: %s", "command" if command else "write",
            record["who"], record["ch"], value if not isinstance(value, np.ndarray)
            else f"array{value.shape}", "ok" if ok else f"{err} ({msg})",
        )  # fmt: skip
        with contextlib.suppress(Exception):
            await self.hub.bus.publish(
                self.hub.subjects.audit(channel.proto), encode(record)
            )
