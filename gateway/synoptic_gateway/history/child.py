"""The history process (``python -m synoptic_gateway.history.child FD PID``):
the :class:`HistoryService` answering the gateway (process ``PID``) over the
socket ``FD``.

The first message is the gateway's settings (pickled); then ``["req", n, frame,
principal, json_mode]`` and ``["cancel", n]``. Each request is answered by
``["ok", n, is_text]`` with the encoded answer as body, or ``["err", n, code,
msg, ch]`` (a :class:`FrameError`), or ``["fail", n]``. The process ends when the
socket does (the gateway closed it, or died), not on SIGINT or SIGTERM, and with
the gateway's death even while it starts (connecting to a bus that is down)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import socket
import sys
from typing import Any

from synoptic_gateway.history.pipe import receive, send
from synoptic_gateway.history.service import HistoryService
from synoptic_gateway.principal import Principal
from synoptic_gateway.settings import Settings
from synoptic_schemas.frames import FrameError

log = logging.getLogger("synoptic_gateway.history.child")


async def _answer(
    service: HistoryService, writer: asyncio.StreamWriter, msg: list[Any]
) -> None:
    _, n, frame, who, json_mode = msg
    principal = Principal(who[0], tuple(who[1]), tuple(who[2]), who[3], tuple(who[4]))
    try:
        reply = await service.answer_encoded(frame, principal, json_mode)
    except FrameError as exc:
        send(writer, ["err", n, exc.code, exc.msg, exc.ch])
    except Exception:
        log.exception("history request failed")
        send(writer, ["fail", n])
    else:
        text = isinstance(reply, str)
        send(writer, ["ok", n, text], reply.encode() if text else reply)


def lower_priority(settings: Settings) -> None:
    """Give the live path the CPU first: a lower nice level (``hist_nice``) and,
    where the system has it, the idle scheduling class (``hist_idle``: a woken
    process of the live path preempts this one at once, ADR 0040)."""
    if settings.hist_nice > 0:
        os.nice(settings.hist_nice)
    if settings.hist_idle and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError as exc:  # a container's seccomp policy may refuse it
            log.warning("history process: no idle scheduling class (%s)", exc)


async def serve(fd: int) -> None:
    """Answer the gateway on socket ``fd`` until it closes."""
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd))
    header, body = await receive(reader)
    settings = pickle.loads(body)
    logging.basicConfig(level=header[1], format="%(levelname)s %(name)s: %(message)s")
    lower_priority(settings)
    from synoptic_gateway.history.build import history_service

    service = history_service(settings)
    await service.start()
    send(writer, ["ready"])
    tasks: dict[int, asyncio.Task[None]] = {}
    try:
        while True:
            try:
                msg, _ = await receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the gateway is gone
            if msg[0] == "req":
                task = asyncio.create_task(_answer(service, writer, msg))
                tasks[msg[1]] = task
                task.add_done_callback(lambda _t, n=msg[1]: tasks.pop(n, None))
            elif msg[0] == "cancel" and (task := tasks.get(msg[1])) is not None:
                task.cancel()
    finally:
        for task in list(tasks.values()):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(service.close(), 2)


def main() -> None:
    from synoptic_bus.procs import die_with

    die_with(int(sys.argv[2]))  # before its socket is read: while it starts
    import uvloop

    # a terminal's Ctrl-C or a stop of the whole process group reaches the gateway
    # too: the child ends when the gateway closes its socket, not before
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    uvloop.run(serve(int(sys.argv[1])))


if __name__ == "__main__":
    main()
