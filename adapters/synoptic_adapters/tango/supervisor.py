"""The supervising process of a Tango adapter instance with subscription workers.

``synoptic adapter tango --workers N`` (or ``tango.workers: N``) runs this process
and N worker processes (:mod:`synoptic_adapters.tango.worker`), each a whole adapter
for the devices dealt to it (ADR 0015). This process imports no Tango and serves
no channel itself. Guarantees:

- Whole devices are dealt out evenly (:class:`~.assignment.Assignment`): the
  configured ones at start, a demanded or written device of no worker yet when its
  first ``want``/``put`` arrives. The supervisor hands the device to its worker (a
  request on the worker's control subject, with the demand). Every later want of
  the device is served by its worker directly.
- Every put (and command) of the instance is answered exactly once: the supervisor alone
  subscribes the put subjects, waits until the device's worker holds the device
  (its hand-over, started by this put or by a want just before, has been
  answered), relays the request to that worker's private put subject
  (:func:`~.worker.put_subject`) and returns the worker's reply to the caller; if
  the worker is not serving (restarting), the device cannot be handed to it, or
  it does not answer within the put's timeout, the supervisor answers with an
  error itself (``disconnected``/``timeout``, naming the worker).
- A worker that exits is started again (after 0.5 s, doubling to 10 s while it
  keeps dying within 10 s), with every device it had; its configured channels come
  back at once, its demanded channels with the leases the supervisor saw (it
  replays them to the new worker). Meanwhile the channels of the dead worker are
  published disconnected (``adapter worker <i> exited: …``) under this process's
  own id and epoch, and this process beats on ``cs.hb.<id>``.
- SIGTERM/SIGINT: every worker gets SIGTERM (SIGKILL after
  :data:`STOP_TIMEOUT`), then this process exits 0. Workers get SIGTERM from the
  kernel if this process dies (``PR_SET_PDEATHSIG``), and watch their parent pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nats.errors import NoRespondersError

from synoptic_adapters.config import AdapterConfig
from synoptic_adapters.publisher import Publisher
from synoptic_adapters.runner import default_adapter_id, put_reply, until_stopped
from synoptic_adapters.sharding import Shard
from synoptic_adapters.tango.assignment import Assignment
from synoptic_adapters.tango.stages import stage
from synoptic_adapters.tango.worker import SUBJECT_HEADER, control_subject, put_subject
from synoptic_bus.connect import connect
from synoptic_bus.prereq import PrerequisiteError
from synoptic_bus.store import StoreConfig, wait_for_store
from synoptic_schemas import (
    SCHEMA_VERSION,
    Channel,
    ChannelError,
    ContractError,
    DecodeError,
    PutError,
    Subjects,
    encode,
    parse_channel,
)
from synoptic_schemas.codec import decode, decode_want

log = logging.getLogger(__name__)

#: Seconds a stopping worker gets before SIGKILL.
STOP_TIMEOUT = 15.0
#: First and longest pause before a dead worker is started again, seconds.
RESTART_DELAY, RESTART_DELAY_MAX = 0.5, 10.0
#: Seconds after a device was handed to a worker during which wants of that
#: device are still forwarded to it (a want may have reached the worker before
#: the device did; a forwarded duplicate only renews a lease).
HANDOVER_GRACE = 2.0
#: Timeout of one control request, seconds.
CONTROL_TIMEOUT = 2.0
#: Seconds a relayed put may take beyond its own timeout before the supervisor
#: answers ``timeout`` itself (the worker answers within the put's timeout).
PUT_RELAY_MARGIN = 5.0
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def next_epoch(last: int) -> int:
    """The current time in ms, or ``last + 1`` when that is not later."""
    return max(time.time_ns() // 1_000_000, last + 1)


async def _exited(proc: subprocess.Popen[bytes]) -> int:
    """Wait for ``proc`` to exit (a pidfd watched by the loop); its status."""
    fd = os.pidfd_open(proc.pid)
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_reader(fd, lambda: done.done() or done.set_result(None))
    try:
        if proc.poll() is None:
            await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return proc.wait()


@dataclass
class Worker:
    """One worker process and what the supervisor knows of it."""

    index: int
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    delay: float = RESTART_DELAY
    handed: dict[str, float] = field(default_factory=dict)  # device -> monotonic
    #: Whether the running process has taken its devices (it answers control
    #: requests and relayed puts); False from its exit until it serves again.
    serving: bool = False
    #: Devices the running process holds (answered hand-overs).
    held: set[str] = field(default_factory=set)
    #: Hand-overs in flight: device -> their outcome.
    pending: dict[str, asyncio.Future[bool]] = field(default_factory=dict)
    #: Incremented at each start: a hand-over answered by an earlier process
    #: says nothing of the current one.
    generation: int = 0
    #: Set to how the running process exited, when it does.
    gone: asyncio.Future[str] | None = None


class Supervisor:
    """N subscription workers of one Tango adapter instance."""

    def __init__(
        self,
        config: AdapterConfig,
        config_path: str,
        workers: int,
        *,
        shard: Shard | None = None,
        adapter_id: str | None = None,
    ) -> None:
        self.config = config
        self.config_path = config_path
        self.shard = shard or Shard()
        self.id = adapter_id or config.id or default_adapter_id("tango", self.shard)
        self.subjects = Subjects(config.prefix)
        self.epoch_ms = time.time_ns() // 1_000_000
        self._last_epoch = self.epoch_ms  # the latest epoch given to a worker
        self.assignment = Assignment(workers)
        self.configured = [c for c in config.channels if self.shard.owns(c)]
        self.assignment.deal(self.configured)
        self.workers = [Worker(i) for i in range(workers)]
        for device, index in self.assignment.owner.items():
            self.workers[index].handed[device] = float("-inf")  # in its file
        self.leases: dict[Channel, float] = {}  # demanded channel -> monotonic expiry
        self.folder = Path(tempfile.mkdtemp(prefix="synoptic-tango-workers-"))
        self.nc: Any = None
        self.publisher: Publisher | None = None
        self.stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._puts: set[asyncio.Task[None]] = set()

    # -- lifecycle ------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> int:
        """Serve until ``stop`` is set (at any moment: a start under way ends
        too); return 0, or 2 when a prerequisite is missing (said in one line)."""
        try:
            try:
                if not await until_stopped(self._connect(), stop):
                    return 0
            except PrerequisiteError as exc:
                print(f"adapter {self.id} cannot start: {exc}", flush=True)
                return 2
            for worker in self.workers:
                self._spawn(worker)
            self._tasks.append(asyncio.create_task(self._heartbeat(), name="heartbeat"))
            self._tasks += [
                asyncio.create_task(self._supervise(w), name=f"worker {w.index}")
                for w in self.workers
            ]
            await until_stopped(self._ready(), stop)
            await stop.wait()
            log.info("adapter %s stopping its %d workers", self.id, len(self.workers))
        finally:
            await self.stop()
        return 0

    async def _connect(self) -> None:
        """NATS, the last-value stream (the workers' too), the publisher and the
        request subscriptions."""
        self.nc = await connect(self.config.nats_url, name=self.id)
        store = StoreConfig(self.config.prefix, storage=self.config.storage)  # type: ignore[arg-type]
        await wait_for_store(self.nc, store)
        self.publisher = Publisher(self.nc, self.subjects, self.id, self.epoch_ms)
        await self.publisher.start()
        if self.config.demand_enabled:
            await self.nc.subscribe(self.subjects.want("tango"), cb=self._on_want)
        if self.config.put_enabled:  # commands are relayed like puts
            for kind in ("put", "cmd"):
                await self.nc.subscribe(
                    self.subjects.all_of(kind, "tango"), cb=self._on_put
                )
        await self.nc.flush()

    async def _ready(self) -> None:
        """Print the ready line once every worker serves (or say it is late)."""
        try:
            await asyncio.wait_for(
                asyncio.gather(*(self._until_serving(w) for w in self.workers)), 120
            )
            print(
                f"adapter {self.id} ready: {len(self.configured)} configured "
                f"channels over {len(self.workers)} workers, shard {self.shard}, "
                f"epoch {self.epoch_ms}",
                flush=True,
            )
        except TimeoutError:
            log.warning("not every worker serves after 120 s")

    async def stop(self) -> None:
        """Stop every worker (SIGTERM, then SIGKILL), then NATS."""
        self.stopping = True
        for task in [*self._tasks, *self._puts]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._puts, return_exceptions=True)
        procs = [w.proc for w in self.workers if w.proc and w.proc.poll() is None]
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for _ in range(int(STOP_TIMEOUT / 0.05)):
            if all(p.poll() is not None for p in procs):
                break
            await asyncio.sleep(0.05)
        for proc in procs:
            if proc.poll() is None:
                log.warning("worker pid %d did not stop: killed", proc.pid)
                proc.kill()
                proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.publisher is not None:
            await self.publisher.stop()
        with contextlib.suppress(Exception):
            await self.nc.flush(timeout=2)
        with contextlib.suppress(Exception):
            await self.nc.close()

    def _next_epoch(self) -> int:
        """A worker's epoch: now in ms, but later than every epoch given before,
        so workers started in the same millisecond (and a restarted one) never
        share one."""
        self._last_epoch = next_epoch(self._last_epoch)
        return self._last_epoch

    def _spawn(self, worker: Worker) -> None:
        devices = self.folder / f"devices-{worker.index}.json"
        devices.write_text(json.dumps(self.assignment.devices_of(worker.index)))
        argv = [
            sys.executable, "-m", "synoptic_adapters.tango.worker",
            "--config", self.config_path, "--shard", str(self.shard),
            "--instance", self.id, "--worker", str(worker.index),
            "--workers", str(len(self.workers)), "--devices", str(devices),
            "--epoch", str(self._next_epoch()),
        ]  # fmt: skip
        if self.config.nats_url:
            argv += ["--nats", self.config.nats_url]
        worker.serving = False
        worker.held = set()
        worker.generation += 1
        worker.gone = asyncio.get_running_loop().create_future()
        worker.proc = subprocess.Popen(argv, preexec_fn=_die_with_parent)
        worker.started_at = time.monotonic()
        log.info("worker %d started: pid %d", worker.index, worker.proc.pid)

    async def _supervise(self, worker: Worker) -> None:
        """Restart ``worker`` whenever it exits."""
        while True:
            assert worker.proc is not None
            code = await _exited(worker.proc)
            if self.stopping:  # a signal to the whole group: no restart
                return
            how = f"signal {-code}" if code < 0 else f"status {code}"
            log.warning("worker %d (pid %d) exited: %s; restarting",
                        worker.index, worker.proc.pid, how)  # fmt: skip
            worker.serving = False
            worker.held = set()
            if worker.gone is not None and not worker.gone.done():
                worker.gone.set_result(how)
            self._orphaned(worker, f"adapter worker {worker.index} exited: {how}")
            if time.monotonic() - worker.started_at < 10.0:
                worker.delay = min(worker.delay * 2, RESTART_DELAY_MAX)
            else:
                worker.delay = RESTART_DELAY
            await asyncio.sleep(worker.delay)
            if self.stopping:
                return
            worker.restarts += 1
            self._spawn(worker)
            await self._until_serving(worker)

    def _orphaned(self, worker: Worker, reason: str) -> None:
        """Publish the channels of a dead worker as disconnected."""
        assert self.publisher is not None
        mine = set(self.assignment.devices_of(worker.index))
        now = time.monotonic()
        channels = [c for c in self.configured if c.tango_device in mine]
        channels += [
            c for c, until in self.leases.items()
            if until > now and c.tango_device in mine and c not in channels
        ]  # fmt: skip
        for channel in channels:
            self.publisher.disconnected(channel, reason)
            self.publisher.forget(channel)

    async def _until_serving(self, worker: Worker) -> None:
        """Wait until ``worker`` answers on its control subject, handing it every
        device dealt to it (one dealt after its file was written too), then the
        leases seen for its demanded channels (after a restart, or wants that
        came while it started)."""
        while worker.proc is not None and worker.proc.poll() is None:
            mine = self.assignment.devices_of(worker.index)
            now = time.monotonic()
            groups: dict[int, list[str]] = {}  # remaining lease (whole s) -> URIs
            for channel, until in self.leases.items():
                if until > now and channel.tango_device in mine:
                    groups.setdefault(int(until - now) + 1, []).append(channel.uri)
            requests: list[dict[str, Any]] = [{"devices": mine}]
            requests += [
                {"devices": [], "want": {"ch": uris, "lease": lease}}
                for lease, uris in groups.items()
            ]
            if await self._control(worker, requests[0]):
                now = time.monotonic()
                for device in mine:
                    worker.handed.setdefault(device, now)
                worker.held.update(mine)
                worker.serving = True
                for request in requests[1:]:
                    await self._control(worker, request)
                return
            await asyncio.sleep(0.1)

    async def _control(self, worker: Worker, request: dict[str, Any]) -> bool:
        subject = control_subject(self.config.prefix, self.id, worker.index)
        try:
            await self.nc.request(
                subject, json.dumps(request).encode(), timeout=CONTROL_TIMEOUT
            )
        except Exception:  # no responders yet, timeout, NATS away
            return False
        return True

    # -- routing of devices that no worker has yet -------------------------------------

    async def _on_want(self, msg: Any) -> None:
        stage("want", self.id)
        try:
            want = decode_want(msg.data)
        except DecodeError:
            return  # the workers log it
        channels = []
        for uri in want["ch"]:
            with contextlib.suppress(ChannelError):
                channel = parse_channel(uri)
                if channel.proto == "tango" and self.shard.owns(channel):
                    channels.append(channel)
        lease = min(max(float(want["lease"]), 0.0), self.config.max_lease)
        until = time.monotonic() + lease
        configured = set(self.configured)
        for channel in channels:
            if channel not in configured and until > self.leases.get(channel, 0.0):
                self.leases[channel] = until
        self.assignment.deal(channels)
        now = time.monotonic()
        forward: dict[int, list[Channel]] = {}
        for channel in channels:
            index = self.assignment.owner[channel.tango_device]
            handed = self.workers[index].handed.get(channel.tango_device)
            if handed is None or now - handed < HANDOVER_GRACE:
                forward.setdefault(index, []).append(channel)
        stage("dealt", self.id)
        await asyncio.gather(
            *(
                self._hand(
                    self.workers[i],
                    sorted({c.tango_device for c in chs}),
                    {"ch": [c.uri for c in chs], "lease": lease},
                )
                for i, chs in forward.items()
            )
        )

    async def _hand(
        self, worker: Worker, devices: list[str], want: dict[str, Any] | None = None
    ) -> bool:
        """Give ``worker`` ``devices`` (and a demand of their channels); the
        hand-over is visible in ``worker.pending`` until answered."""
        request: dict[str, Any] = {"devices": devices}
        if want is not None:
            request["want"] = want
        outcome: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        for device in devices:
            worker.pending[device] = outcome
        generation = worker.generation
        ok = False
        try:
            ok = await self._control(worker, request)
            if ok and worker.generation == generation:
                now = time.monotonic()
                for device in devices:
                    worker.handed.setdefault(device, now)
                worker.held.update(devices)
        finally:
            for device in devices:
                if worker.pending.get(device) is outcome:
                    del worker.pending[device]
            outcome.set_result(ok)
        return ok

    async def _holding(self, worker: Worker, device: str) -> str | None:
        """Wait until ``worker``'s running process holds ``device`` (awaiting a
        hand-over in flight, or making one); None, or why it cannot."""
        for _ in range(3):
            if not worker.serving:
                return f"adapter worker {worker.index} is not serving (starting or restarting)"
            if device in worker.held:
                return None
            pending = worker.pending.get(device)
            if pending is not None:
                await asyncio.shield(pending)
            else:
                await self._hand(worker, [device])
        if worker.serving and device in worker.held:
            return None
        return f"device {device} could not be handed to adapter worker {worker.index}"

    async def _on_put(self, msg: Any) -> None:
        if not msg.reply:
            return
        try:
            kind, channel = self.subjects.parse(msg.subject)
        except ContractError as exc:
            await self._respond(msg, put_reply(False, PutError.BAD_REQUEST, str(exc)))
            return
        if kind not in ("put", "cmd") or not self.shard.owns(channel):
            return  # another replica answers
        self.assignment.deal([channel])  # before any await: one owner
        task = asyncio.create_task(self._relay(msg, channel))
        self._puts.add(task)
        task.add_done_callback(self._puts.discard)

    async def _relay(self, msg: Any, channel: Channel) -> None:
        """Answer one put or command: the worker's reply, or an error of the
        supervisor."""
        worker = self.workers[self.assignment.owner[channel.tango_device]]
        error = await self._holding(worker, channel.tango_device)
        if error is not None:
            await self._respond(msg, put_reply(False, PutError.DISCONNECTED, error))
            return
        try:
            timeout = float(decode(msg.data).get("timeout", self.config.put_timeout))
        except (DecodeError, TypeError, ValueError):
            timeout = self.config.put_timeout  # the worker answers bad_request
        timeout = min(max(timeout, 0.001), self.config.max_put_timeout)
        subject = put_subject(self.config.prefix, self.id, worker.index)
        gone = worker.gone
        assert gone is not None
        relayed = asyncio.ensure_future(
            self.nc.request(
                subject,
                msg.data,
                timeout=timeout + PUT_RELAY_MARGIN,
                headers={SUBJECT_HEADER: msg.subject},
            )
        )
        try:
            done, _ = await asyncio.wait(
                {relayed, gone}, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not relayed.done():
                relayed.cancel()
        name = f"adapter worker {worker.index}"
        if relayed not in done:  # its worker exited first: it answers nobody now
            why = f"{name} exited ({gone.result()}) before answering"
            await self._respond(msg, put_reply(False, PutError.DISCONNECTED, why))
        elif isinstance(relayed.exception(), NoRespondersError):
            why = f"{name} is not serving"
            await self._respond(msg, put_reply(False, PutError.DISCONNECTED, why))
        elif isinstance(relayed.exception(), TimeoutError):
            why = f"{name} did not answer in {timeout:g} s"
            await self._respond(msg, put_reply(False, PutError.TIMEOUT, why))
        elif relayed.exception() is not None:
            why = f"{name}: relay failed: {relayed.exception()}"
            await self._respond(msg, put_reply(False, PutError.FAILED, why))
        else:
            with contextlib.suppress(Exception):
                await self.nc.publish(msg.reply, relayed.result().data)

    async def _respond(self, msg: Any, reply: dict[str, Any]) -> None:
        log.info("put %s: %s", msg.subject, reply.get("msg", reply.get("err")))
        with contextlib.suppress(Exception):
            await self.nc.publish(msg.reply, encode(reply))

    # -- liveness ---------------------------------------------------------------------

    async def _heartbeat(self) -> None:
        subject = self.subjects.hb(self.id)
        period = self.config.heartbeat_period
        while True:
            beat = {
                "ver": SCHEMA_VERSION, "id": self.id, "proto": "tango",
                "ep": self.epoch_ms, "t": time.time_ns(), "period": period,
                "n": 0, "conn": 0,
            }  # fmt: skip
            if self.nc.is_connected:
                with contextlib.suppress(Exception):
                    await self.nc.publish(subject, encode(beat))
            now = time.monotonic()
            for channel in [c for c, until in self.leases.items() if until <= now]:
                del self.leases[channel]
            await asyncio.sleep(period)


def supervise(
    config: AdapterConfig,
    config_path: str,
    workers: int,
    *,
    shard: Shard | None = None,
    adapter_id: str | None = None,
) -> int:
    """Run the supervisor until SIGTERM/SIGINT; return its exit status."""
    import uvloop

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        supervisor = Supervisor(
            config, config_path, workers, shard=shard, adapter_id=adapter_id
        )

        def on_signal() -> None:
            supervisor.stopping = True  # before any worker's exit is seen
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal)
        return await supervisor.run(stop)

    return uvloop.run(main())
