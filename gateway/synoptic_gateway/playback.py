"""A socket's playback: a screen's channels played back from a moment at a speed.

The ``play`` request is answered with the channels at the moment (an ``at``
answer with the ``play``'s id), then ``pb`` frames at most ``play_fps`` a second
of wall time, each the moment it shows and the channels that changed since the
previous one. The history service (its thread or child process, off the live
loop) reads one second of wall time ahead (``speed`` seconds of bus time) and
cuts it into frames already encoded; this task only paces them out. A reader
that falls behind (its mailbox over its byte budget) pauses the playback until
its queue drains, so a playback never fills a socket's memory, and the live
viewers' frames are never queued behind it. A stretch read late (a busy
gateway) slows the playback down rather than sending its frames in a burst.

The frame rate is ``play_fps`` where a playback plays alone, and an equal
share of ``play_fps_total`` where many play at once on the gateway
(:class:`PlaybackShare`): each stretch is cut at the rate in force when it is
asked for.

The playback ends with a ``pb`` whose ``end`` says why: ``now`` (it reached the
present: the screen may go live), ``halt`` (a ``halt``, another ``play`` on the
socket, or the socket closing), ``error`` (the history could not be read).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack

from synoptic_schemas import frames
from synoptic_schemas.frames import END_ERROR, END_HALT, END_NOW, FrameError

if TYPE_CHECKING:
    from synoptic_gateway.history.process import HistoryProcess
    from synoptic_gateway.history.worker import HistoryWorker
    from synoptic_gateway.principal import Principal

log = logging.getLogger(__name__)

#: Wall seconds of bus time read per request to the history service.
STRETCH_S = 1.0
#: A frame later than this (its stretch was read late: a busy machine) moves the
#: playback's clock instead of being sent at once with those before it.
LATE_S = 0.1


class PlaybackShare:
    """The gateway's playbacks, and the frame rate each gets: an equal share of
    ``total`` frames per second, at most ``each`` (0: no total). The live loop
    sends every frame beside the live viewers': many playbacks at once get fewer
    frames each, instead of taking the loop's time from the live viewers."""

    def __init__(self, each: float, total: float) -> None:
        self.each = each
        self.total = total
        #: playbacks being served
        self.playing = 0

    def fps(self) -> float:
        """The frames per second a playback gets now."""
        if self.total <= 0:
            return self.each
        return min(self.each, self.total / max(self.playing, 1))


class Playback:
    """One ``play`` request being served on a socket."""

    def __init__(
        self,
        frame: dict[str, Any],
        history: HistoryWorker | HistoryProcess,
        principal: Callable[[], Principal],
        *,
        json_mode: bool,
        share: PlaybackShare,
        push: Callable[[bytes | str], None],
        send: Callable[[dict[str, Any]], None],
        backlog: Callable[[], bool],
        drained: Callable[[], asyncio.Event],
    ) -> None:
        self.id = frame["id"]
        self._frame = frame
        self._history = history
        self._principal = principal
        self._json = json_mode
        self._share = share
        self._push, self._send = push, send
        self._backlog, self._drained = backlog, drained
        self._task: asyncio.Task[None] | None = None
        self._ended = False
        #: frames sent, in all
        self.frames = 0

    def start(self, on_done: Callable[[Playback], None]) -> None:
        self._task = asyncio.create_task(self._run())
        self._task.add_done_callback(lambda _t: on_done(self))

    def halt(self) -> None:
        """Stop it (its last frame says ``halt``)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _end(self, why: str, t: float, msg: str | None = None) -> None:
        if not self._ended:
            self._ended = True
            self._send(frames.pb(self.id, t, [], [], end=why, msg=msg))

    async def _run(self) -> None:
        f = self._frame
        t = float(f["t"])
        self._share.playing += 1
        try:
            at = frames.at(self.id, f["ch"], t, f.get("pts"))
            self._push(
                await self._history.answer(at, self._principal(), json_mode=self._json)
            )
            await self._play(t, float(f["speed"]))
        except asyncio.CancelledError:
            self._end(END_HALT, t)
            raise
        except FrameError as exc:
            self._end(END_ERROR, t, exc.msg)
        except Exception:  # a bug must not end the connection: say so, and log it
            log.exception("playback failed")
            self._end(END_ERROR, t, "the playback failed")
        finally:
            self._share.playing -= 1

    async def _play(self, t: float, speed: float) -> None:
        loop = asyncio.get_running_loop()
        stretch = speed * STRETCH_S * 1e3
        wall0 = loop.time()
        shown = t
        start = t
        ahead = asyncio.create_task(self._read(start, start + stretch, speed))
        try:
            while True:
                batch = await ahead
                end = start + stretch
                reached_now = end >= time.time() * 1e3
                if not reached_now:
                    ahead = asyncio.create_task(self._read(end, end + stretch, speed))
                for t_ms, data in batch:
                    due = wall0 + (t_ms - t) / speed / 1e3
                    late = loop.time() - due
                    if late > LATE_S:  # the history came late: the clock waits
                        wall0 += late
                    elif late < 0:
                        await asyncio.sleep(-late)  # the playback's pace
                    if self._backlog():  # a slow reader: wait, the clock waits too
                        paused = loop.time()
                        await self._drained().wait()
                        wall0 += loop.time() - paused
                    self._push(data)
                    self.frames += 1
                    shown = t_ms
                if reached_now:
                    self._end(END_NOW, shown)
                    return
                start = end
        finally:
            if not ahead.done():
                ahead.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ahead

    async def _read(self, t0: float, t1: float, speed: float) -> list[Any]:
        """The frames of bus time ``t0`` to ``t1``, cut at the rate in force."""
        step = speed * 1e3 / self._share.fps()
        request = {"op": "pbread", "id": self.id, "ch": self._frame["ch"], "t0": t0,
                   "t1": t1, "step": step, "json": self._json,
                   "pts": self._frame.get("pts")}  # fmt: skip
        body = await self._history.answer(
            request, self._principal(), json_mode=self._json
        )
        data = body.encode() if isinstance(body, str) else body
        return msgpack.unpackb(data, raw=False)
