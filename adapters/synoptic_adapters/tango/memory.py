"""What the adapter learns about reading each attribute, kept on the bus.

A device's read lane (:mod:`synoptic_adapters.tango.reads`) learns, for every
attribute it reads, what a read costs the device, whether it is slow or times out
(and how often in a row: its backoff), whether it reads fast enough to join the
device's group read. Kept in
memory only, all of it was lost at every adapter start, and a device whose slow
attributes are configured before its healthy ones had the slow reads in front
again each time.

:class:`BusMemory` keeps it in a JetStream Key-Value bucket (default
``tango_reads``), one key per device (:func:`device_key`), a JSON document of
:class:`Learned` per attribute. Any adapter process (a restart, another replica,
a Tango worker taking the device over) reads the device's key when it connects
the device for the first time and starts from there: known-slow attributes are
read last from the first second, the healthy ones in one group at once. Writes are debounced
per device (:data:`SAVE_AFTER`) and flushed at stop. A bucket that cannot be
reached or created (a NATS user without the permission) leaves the adapter as
before, learning afresh: said once in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from nats.js.errors import KeyNotFoundError

from synoptic_bus.learned import TANGO_READS_BUCKET, ensure_learned_bucket

log = logging.getLogger(__name__)

#: The default bucket (``synoptic bus init`` creates it).
BUCKET = TANGO_READS_BUCKET
#: Seconds a device's changes wait before they are written (more changes of the
#: same device in the meantime are written together).
SAVE_AFTER = 2.0
#: Longest wait for a device's key when it is first connected, seconds: a slow
#: bucket never delays a device by more.
RECALL_TIMEOUT = 1.0
#: Characters a KV key may hold as they are (others are written ``=XX``).
_KEY_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./"
)


@dataclass(frozen=True)
class Learned:
    """What a device's read lane knows about one attribute."""

    cost: float = 0.0  # seconds the device spent on its last read alone
    strikes: int = 0  # slow or timed-out reads in a row (> 0: backing off)
    proven: bool = False  # read fast alone: joins the device's group read
    next_try: float = 0.0  # wall-clock time of its next read while backing off

    @property
    def known(self) -> bool:
        """Whether there is anything to remember."""
        return self.proven or self.strikes > 0


def device_key(device: str) -> str:
    """The KV key of ``device`` (``host:port/domain/family/member``): the name
    with every character a key may not hold written ``=XX`` (``:`` → ``=3A``)."""
    return "".join(
        c if c in _KEY_SAFE else "".join(f"={b:02X}" for b in c.encode())
        for c in device
    )


def encode(learned: dict[str, Learned]) -> bytes:
    """A device's document."""
    attrs = {name: asdict(item) for name, item in sorted(learned.items())}
    return json.dumps({"v": 1, "t": time.time(), "attrs": attrs}).encode()


def decode(data: bytes) -> dict[str, Learned]:
    """A device's document back (unknown fields and versions ignored; an
    unreadable document is nothing learned)."""
    try:
        doc = json.loads(data)
        attrs = doc["attrs"] if doc.get("v") == 1 else {}
        fields = set(Learned.__dataclass_fields__)
        return {
            str(name): Learned(**{k: v for k, v in item.items() if k in fields})
            for name, item in attrs.items()
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


class Memory(Protocol):
    """Where device links find and leave what they learned."""

    async def recall(self, device: str) -> dict[str, Learned]: ...
    def note(self, device: str, learned: dict[str, Learned]) -> None: ...
    async def close(self) -> None: ...


class NoMemory:
    """Nothing kept beyond the process (no bus, or the bucket is unavailable)."""

    async def recall(self, device: str) -> dict[str, Learned]:
        return {}

    def note(self, device: str, learned: dict[str, Learned]) -> None:
        pass

    async def close(self) -> None:
        pass


class BusMemory:
    """A :class:`Memory` in a JetStream KV bucket (see the module's docstring)."""

    def __init__(self, kv: Any, bucket: str, save_after: float = SAVE_AFTER) -> None:
        self._kv = kv
        self.bucket = bucket
        self.save_after = save_after
        self._pending: dict[str, dict[str, Learned]] = {}
        self._writer: asyncio.Task[None] | None = None
        self.saved = 0  # documents written
        self.failed = 0  # writes that failed

    @classmethod
    async def open(
        cls, nc: Any, bucket: str = BUCKET, timeout: float = 5.0
    ) -> BusMemory | NoMemory:
        """The bucket (created when missing and allowed); :class:`NoMemory`, said
        once, when it cannot be had."""
        try:
            kv = await asyncio.wait_for(ensure_learned_bucket(nc, bucket), timeout)
        except Exception as exc:  # permissions, JetStream busy or off
            log.warning(
                "what is learned about Tango attributes stays in this process: "
                "the KV bucket %s is not available (%s)", bucket,
                str(exc) or type(exc).__name__,
            )  # fmt: skip
            return NoMemory()
        return cls(kv, bucket)

    async def recall(self, device: str) -> dict[str, Learned]:
        """The device's document, or nothing (none, unreadable, or not within
        :data:`RECALL_TIMEOUT`)."""
        try:
            entry = await asyncio.wait_for(
                self._kv.get(device_key(device)), RECALL_TIMEOUT
            )
        except KeyNotFoundError:
            return {}
        except Exception as exc:
            log.info(
                "%s: nothing recalled (%s)", device, str(exc) or type(exc).__name__
            )
            return {}
        return decode(entry.value or b"")

    def note(self, device: str, learned: dict[str, Learned]) -> None:
        """Write ``learned`` as the device's document, :data:`SAVE_AFTER` seconds
        from the first change not written yet."""
        self._pending[device] = dict(learned)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_soon(), name="tango-memory")

    async def _write_soon(self) -> None:
        await asyncio.sleep(self.save_after)
        await self._flush()

    async def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for device, learned in pending.items():
            try:
                await self._kv.put(device_key(device), encode(learned))
                self.saved += 1
            except Exception as exc:  # NATS away: the next change writes it again
                self.failed += 1
                log.info(
                    "%s: not remembered (%s)", device, str(exc) or type(exc).__name__
                )

    async def close(self) -> None:
        """Write what is pending now."""
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._flush(), 5.0)
