"""The history service in a child process of its own (ADR 0027).

With blocks a history request costs a few milliseconds of Python (parsing block
messages, decoding, reducing, encoding); on a thread that still shares the
interpreter with the live loop, so a storm of requests shows in the live p99. In
a child process (``python -m synoptic_gateway.history.child``, its own NATS and
archive connections from the same settings) the gateway only forwards requests
and passes the encoded answers through. Requests and answers travel over a
socketpair (:mod:`.pipe`); a cancelled caller cancels the work there.

Bounded: at most ``hist_queue`` requests waiting or running (more are answered
"busy"). A child that dies fails its requests in flight with a clear error and
is started again; the child ends when its socket does, so it never outlives the
gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import socket
import sys
from typing import Any

from synoptic_gateway.history.pipe import receive, send
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_schemas.frames import ErrorCode, FrameError

log = logging.getLogger(__name__)

_RESTART_S = (0.2, 10.0)  # backoff between restarts of a child that keeps dying


class HistoryProcess:
    """Runs a :class:`HistoryService` in a child process; same interface as
    :class:`~synoptic_gateway.history.worker.HistoryWorker`."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pending: dict[int, asyncio.Future[tuple[Any, bytes]]] = {}
        self._next = 0
        self._writer: asyncio.StreamWriter | None = None
        #: the socket to a child that is starting (closed by :meth:`close`)
        self._starting: asyncio.StreamWriter | None = None
        self._ready = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        #: the running child's process id (None while none runs)
        self.pid: int | None = None
        #: children started, in all (1 + restarts)
        self.starts = 0

    @property
    def in_flight(self) -> int:
        """Requests sent to the child and not answered yet."""
        return len(self._pending)

    async def start(self) -> None:
        """Start the child; return once it is connected and answers."""
        if self._supervisor is None:
            self._supervisor = asyncio.create_task(self._supervise())
        await self._ready.wait()

    async def _supervise(self) -> None:
        delay = _RESTART_S[0]
        while not self._closing:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                await self._run_child()
            self._fail_pending("the history process ended: try again")
            if self._closing:
                return
            delay = _RESTART_S[0] if loop.time() - started > 30 else delay
            log.warning("history process ended: restarting in %.1f s", delay)
            await asyncio.sleep(delay)  # backoff, not a synchronisation
            delay = min(delay * 2, _RESTART_S[1])

    async def _run_child(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "synoptic_gateway.history.child",
                str(theirs.fileno()), str(os.getpid()), pass_fds=(theirs.fileno(),),
            )  # fmt: skip
        finally:
            theirs.close()
        self.pid, self.starts = proc.pid, self.starts + 1
        ready = False
        try:
            reader, writer = await asyncio.open_unix_connection(sock=ours)
            self._starting = writer
            if self._closing:  # closed while the child was being spawned
                return
            level = logging.getLogger().getEffectiveLevel()
            send(writer, ["settings", level], pickle.dumps(self._settings))
            head, _ = await receive(reader)
            if head != ["ready"]:
                raise OSError(f"history process said {head!r}")
            ready = True
            self._writer = writer
            self._ready.set()
            log.info("history process %d ready", proc.pid)
            while True:
                head, body = await receive(reader)
                future = self._pending.pop(head[1], None)
                if future is not None and not future.done():
                    future.set_result((head, body))
        finally:
            self._ready.clear()
            self._writer = self._starting = None
            ours.close()
            self.pid = None
            if self._closing and ready:  # its socket closed: it ends by itself
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 3)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            code = await proc.wait()
            if not self._closing:
                log.warning("history process %d exited with %s", proc.pid, code)

    def _fail_pending(self, why: str) -> None:
        for n, future in list(self._pending.items()):
            if not future.done():
                future.set_exception(FrameError(ErrorCode.UNAVAILABLE, why))
            self._pending.pop(n, None)

    async def answer(
        self, frame: dict[str, Any], principal: Principal, *, json_mode: bool
    ) -> bytes | str:
        """The encoded answer to ``frame`` (``str`` in JSON mode); raises
        :class:`FrameError` like the service does."""
        s = self._settings
        if len(self._pending) >= s.hist_queue:
            raise FrameError(
                ErrorCode.UNAVAILABLE,
                f"history is busy ({s.hist_queue} requests queued): try again",
                req_id=frame["id"],
            )
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), s.hist_timeout)
            except TimeoutError:
                raise FrameError(
                    ErrorCode.UNAVAILABLE,
                    "the history process is not running: try again",
                    req_id=frame["id"],
                ) from None
        writer = self._writer
        if writer is None:  # it ended between its readiness and now
            raise FrameError(
                ErrorCode.UNAVAILABLE,
                "the history process ended: try again",
                req_id=frame["id"],
            )
        self._next += 1
        n = self._next
        future: asyncio.Future[tuple[Any, bytes]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[n] = future
        who = [principal.name, principal.read, principal.write, principal.expires,
               principal.screens]  # fmt: skip
        send(writer, ["req", n, frame, who, json_mode])
        try:
            head, body = await future
        except asyncio.CancelledError:
            if self._pending.pop(n, None) is not None and self._writer is writer:
                with contextlib.suppress(Exception):
                    send(writer, ["cancel", n])
            raise
        except FrameError as exc:
            exc.req_id = frame["id"]
            raise
        if head[0] == "ok":
            return body.decode() if head[2] else body
        if head[0] == "err":
            raise FrameError(head[2], head[3], req_id=frame["id"], ch=head[4])
        raise FrameError(ErrorCode.INTERNAL, "the request failed", req_id=frame["id"])

    def kill(self) -> None:
        """Kill the running child (it is started again); for tests and operators."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, 9)

    async def close(self) -> None:
        """Stop the child (closing its socket ends it) and wait for it."""
        self._closing = True
        # a child still starting has nothing in flight: it is killed, not awaited
        if self._starting is not None:
            self._starting.close()
        if self._supervisor is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._supervisor), 5)
            except TimeoutError:
                self.kill()
                self._supervisor.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._supervisor
