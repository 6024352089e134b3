"""Settings of the Tango source: the ``tango:`` section of an adapter configuration.

The section is validated against :data:`SECTION_SCHEMA` (JSON Schema); an error
names the field (``tango.poll_period: -1 is less than or equal to the minimum of
0``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

import jsonschema

_SECONDS = {"type": "number", "exclusiveMinimum": 0}

#: JSON Schema of the ``tango:`` section.
SECTION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Tango adapter settings",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "no_database_hosts": {
            "description": "host:port of device servers run without a Tango "
            "database (-nodb); their devices are reached with #dbase=no.",
            "type": "array",
            "items": {"type": "string", "pattern": "^[^/:\\s]+:[0-9]{1,5}$"},
        },
        "poll_period": {
            "description": "Seconds between reads of attributes without events.",
            **_SECONDS,
        },
        "confirm_period": {
            "description": "Longest idle wait of a device's read lane, s "
            "(attributes whose subscription is not confirmed are no longer read "
            "meanwhile: their first values come with the subscription and one "
            "read of the device's polling buffer).",
            **_SECONDS,
        },
        "read_timeout": {"description": "Timeout of every read, s.", **_SECONDS},
        "slow_after": {
            "description": "An attribute whose read alone takes longer than this "
            "is slow: it is backed off (its value published invalid until it "
            "reads fast again), s.",
            **_SECONDS,
        },
        "backoff_max": {
            "description": "Longest wait between two reads of a slow or "
            "timing-out attribute, s (the wait doubles from twice the spacing "
            "that keeps its share of the device at busy_fraction).",
            **_SECONDS,
        },
        "busy_fraction": {
            "description": "Largest share of a device's time the adapter's reads "
            "may take (a standard device answers nothing else, its events "
            "included, while it reads): polling stretches to stay under it.",
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 1,
        },
        "slow_timeout": {
            "description": "No longer used (every read has read_timeout); "
            "accepted for older configurations.",
            **_SECONDS,
        },
        "first_read_chunk": {
            "description": "Attributes per read_attributes call of reads from "
            "a device's polling buffer.",
            "type": "integer",
            "minimum": 1,
        },
        "ping_period": {"description": "Device liveness check period, s.", **_SECONDS},
        "ping_timeout": {"description": "Timeout of a liveness check, s.", **_SECONDS},
        "retry_period": {
            "description": "Seconds between connection attempts to a device.",
            **_SECONDS,
        },
        "config_events": {
            "description": "Subscribe attribute configuration events (metadata).",
            "type": "boolean",
        },
        "config_events_max": {
            "description": "Devices with more monitored attributes than this get "
            "no configuration events: their metadata is read again every "
            "meta_period instead (thousands of event subscriptions stall every "
            "event of the process while they are made).",
            "type": "integer",
            "minimum": 0,
        },
        "meta_period": {
            "description": "Seconds between metadata reads of attributes without "
            "configuration events.",
            **_SECONDS,
        },
        "workers": {
            "description": "Subscription worker processes of this adapter "
            "instance: whole devices are dealt out evenly to them (cppTango makes "
            "one event subscription at a time per process). 1: no workers, one "
            "process (default).",
            "type": "integer",
            "minimum": 1,
            "maximum": 64,
        },
        "threads": {
            "description": "Threads for blocking Tango calls.",
            "type": "integer",
            "minimum": 4,
        },
        "memory_bucket": {
            "description": "JetStream KV bucket where what is learned about "
            "reading each attribute (cost, timeouts, backoff) is kept across "
            "adapter starts, one key per device; created when missing. Empty: "
            "nothing kept beyond the process.",
            "type": "string",
            "pattern": "^[A-Za-z0-9_-]*$",
        },
    },
}


def skip_pytango_telemetry() -> None:
    """Before ``tango`` is imported in an adapter process: unless Tango telemetry
    is asked for (``TANGO_TELEMETRY_ENABLE``), keep pytango from wrapping every
    client call in its telemetry tracer, which parses the telemetry environment
    variables again at each call (measured: ``read_attribute`` 212 -> 42 us of CPU
    per call, a subscription call 300 -> 20 us). An explicit
    ``PYTANGO_DISABLE_TELEMETRY_PATCHING`` wins."""
    if os.environ.get("TANGO_TELEMETRY_ENABLE", "").lower() not in (
        "1",
        "true",
        "on",
        "yes",
    ):
        os.environ.setdefault("PYTANGO_DISABLE_TELEMETRY_PATCHING", "1")


class TangoSettingsError(ValueError):
    """The ``tango:`` section is invalid; ``field`` names the offending key."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.field = where
        self.problem = problem


@dataclass(frozen=True)
class TangoSettings:
    """How the Tango source reads, polls and watches devices (seconds)."""

    no_database_hosts: frozenset[str] = field(default_factory=frozenset)
    poll_period: float = 1.0
    confirm_period: float = 1.0
    read_timeout: float = 3.0
    slow_after: float = 1.0
    backoff_max: float = 300.0
    busy_fraction: float = 0.1
    first_read_chunk: int = 50
    slow_timeout: float = 5.0
    ping_period: float = 1.0
    ping_timeout: float = 2.0
    retry_period: float = 2.0
    config_events: bool = True
    config_events_max: int = 200
    meta_period: float = 10.0
    threads: int = 64
    workers: int = 1
    memory_bucket: str = "tango_reads"

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> TangoSettings:
        """Validate a ``tango:`` configuration section and build the settings."""
        validator = jsonschema.Draft202012Validator(SECTION_SCHEMA)
        error = jsonschema.exceptions.best_match(validator.iter_errors(section))
        if error is not None:
            path = ".".join(str(part) for part in error.absolute_path)
            raise TangoSettingsError(
                f"tango.{path}" if path else "tango", error.message
            )
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in section.items() if k in known}
        if "no_database_hosts" in values:
            values["no_database_hosts"] = frozenset(
                h.lower() for h in values["no_database_hosts"]
            )
        return cls(**values)

    def device_url(self, hostport: str, device: str) -> str:
        """The pytango name of ``device`` on the Tango host ``hostport``."""
        suffix = "#dbase=no" if hostport in self.no_database_hosts else ""
        return f"tango://{hostport}/{device}{suffix}"
