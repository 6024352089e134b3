"""An imported set written to the screens bucket: each screen created, updated
(one revision, only where it changed) or left alone; a screen edited in the
browser since its import (its content no longer matches the digest the import
wrote), or one of that name that no import of this set wrote, is kept unless
``overwrite``. Used by ``synoptic screens import FOLDER`` and the gateway's
set upload. Screens are written as the import encoded and validated them
(never validated twice); :func:`unchanged_set` tells a set whose every screen
is stored as converting it again would make it, without converting it."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from synoptic_bus.screens import (
    ConflictError,
    Entry,
    ScreenBucket,
    StoreUnavailableError,
)
from synoptic_importer.site import (
    SetPlan,
    Site,
    edited_since_import,
    stored_source,
    unchanged,
)
from synoptic_schemas.errors import ContractError

Action = Literal["created", "updated", "unchanged", "kept", "forbidden", "failed"]
#: Writes in flight at once (each a JetStream publish and its ack).
CONCURRENCY = 32


@dataclass(frozen=True)
class Outcome:
    """What happened to one screen of the set."""

    name: str
    file: str
    action: Action
    revision: int = 0
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "file": self.file,
            "action": self.action,
        }
        if self.revision:
            out["revision"] = self.revision
        if self.reason:
            out["reason"] = self.reason
        return out


#: What a screen's ``source`` says of its conversion, not of its content.
_INPUTS = ("inputs", "reads")


def _without_inputs(screen: dict[str, Any]) -> dict[str, Any]:
    source = screen.get("source")
    if not isinstance(source, dict):
        return screen
    return {**screen, "source": {k: v for k, v in source.items() if k not in _INPUTS}}


def same_content(stored: dict[str, Any], screen: dict[str, Any]) -> bool:
    """Whether a stored screen is ``screen``, what its conversion read aside
    (a screen whose file is unchanged gets no revision for an input of its
    conversion that changed nothing)."""
    return stored == screen or _without_inputs(stored) == _without_inputs(screen)


def plan(screen: dict[str, Any], current: Entry | None, set_: str,
         overwrite: bool) -> tuple[Action, int, str]:  # fmt: skip
    """What to do with one imported screen given the stored one: the action,
    the revision a write is based on, and why a screen is kept."""
    if current is None or current.deleted or current.screen is None:
        return "created", 0, ""
    if same_content(current.screen, screen):
        return "unchanged", current.revision, ""
    source = current.screen.get("source")
    if not overwrite:
        who = f" by {current.rev.by}" if current.rev.by else ""
        when = f" at {current.rev.at}" if current.rev.at else ""
        if not isinstance(source, dict) or source.get("set") != set_:
            return (
                "kept",
                current.revision,
                f"a screen of that name not from set {set_}",
            )
        if edited_since_import(current.screen):
            return "kept", current.revision, f"edited since its import{who}{when}"
    return "updated", current.revision, ""


async def store_site(
    bucket: ScreenBucket,
    site: Site,
    by: str,
    *,
    overwrite: bool = False,
    dry_run: bool = False,
    summary: str = "",
    may_edit: Callable[[str], bool] | None = None,
    on_saved: Callable[[Entry, str], Awaitable[None]] | None = None,
) -> list[Outcome]:
    """Write ``site``'s screens (see the module's docstring); ``dry_run`` says
    what would be done and writes nothing. A screen ``may_edit`` refuses is
    ``forbidden`` (nothing of it read or written); ``on_saved`` is awaited with
    each written entry and its action."""
    gate = asyncio.Semaphore(CONCURRENCY)
    why = summary or f"imported from set {site.set}"

    async def one(name: str, screen: dict[str, Any]) -> Outcome:
        file = site.files[name]
        if may_edit is not None and not may_edit(name):
            return Outcome(name, file, "forbidden", 0, f"{by} may not edit it")
        async with gate:
            try:
                current = await bucket.latest(name)
            except StoreUnavailableError as exc:
                return Outcome(name, file, "failed", 0, str(exc))
            action, base, reason = plan(screen, current, site.set, overwrite)
            if dry_run or action in ("unchanged", "kept"):
                return Outcome(name, file, action, base, reason)
            try:
                entry = await bucket.put(name, screen, base, by, f"{why}: {file}"[:500],
                                         valid_json=site.encoded.get(name))  # fmt: skip
            except ConflictError as exc:  # saved meanwhile: theirs is kept
                return Outcome(
                    name, file, "kept", exc.revision, f"saved meanwhile: {exc}"
                )
            except (ContractError, StoreUnavailableError) as exc:
                return Outcome(name, file, "failed", 0, str(exc))
            if on_saved is not None:
                await on_saved(entry, action)
        return Outcome(name, file, action, entry.revision)

    return list(await asyncio.gather(*(one(s.name, s.screen) for s in site.screens)))


async def unchanged_set(bucket: ScreenBucket, plan_: SetPlan) -> list[Outcome] | None:
    """Each screen of the set ``unchanged`` when every one of them is stored
    as its import wrote it (not edited since) from the same inputs: converting
    the set again would change nothing. None when one is not (or there is no
    display): the set is converted."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(path: str) -> Outcome | None:
        name = plan_.names[path]
        async with gate:
            try:
                stored = await bucket.latest_stored(name)
            except StoreUnavailableError:
                return None
        if stored is None:
            return None
        source = stored_source(stored[1])
        if source is None or not unchanged(plan_, path, source):
            return None
        return Outcome(name, path, "unchanged", stored[0])

    if not plan_.displays:
        return None
    found = await asyncio.gather(*(one(p) for p in plan_.displays))
    done = [o for o in found if o is not None]
    return done if len(done) == len(found) else None


def counts(outcomes: list[Outcome]) -> dict[str, int]:
    """How many screens each action took."""
    return dict(Counter(o.action for o in outcomes))
