"""One flush of a group: the update (or metadata) frame of many channels, encoded
once and handed as the same bytes to every socket of the group."""

from __future__ import annotations

from synoptic_schemas import frames
from synoptic_schemas.codec import decode


class Batch:
    """One flush of a group: encoded once (msgpack eagerly, JSON on first use)."""

    __slots__ = ("_json", "indexes", "kind", "packed", "raws", "sid")

    def __init__(self, kind: str, sid: int, indexes: list[int], raws: list[bytes]):
        self.kind = kind
        self.sid = sid
        self.indexes = indexes
        self.raws = raws
        self.packed = frames.pack_batch(kind, sid, indexes, raws)
        self._json: str | None = None

    def json_text(self) -> str:
        if self._json is None:
            payloads = [decode(raw) for raw in self.raws]
            frame = (
                frames.upd(self.sid, self.indexes, payloads)
                if self.kind == frames.Op.UPD
                else frames.meta(self.sid, self.indexes, payloads)
            )
            self._json = frames.to_json(frame)
        return self._json
