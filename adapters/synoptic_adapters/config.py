"""Adapter configuration: a YAML file validated against ``config.schema.json``.

Every error names the file, the line and the field (``adapter.yaml:7: channels[2]:
'ca://' has an empty channel name``), so a typo is found without reading code.
Protocol sections (``epics:``, ``pva:``, ``tango:``) are kept as dicts for their source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from synoptic_schemas import Channel, ChannelError, parse_channel

SCHEMA_PATH = Path(__file__).with_name("config.schema.json")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names file/line/field."""

    def __init__(self, source: str, line: int | None, where: str, problem: str) -> None:
        location = f"{source}:{line}" if line else source
        super().__init__(
            f"{location}: {where}: {problem}" if where else f"{location}: {problem}"
        )
        self.source = source
        self.line = line
        self.field = where
        self.problem = problem


@dataclass
class AdapterConfig:
    """A validated adapter configuration (defaults filled in)."""

    proto: str
    channels: list[Channel] = field(default_factory=list)
    id: str | None = None
    nats_url: str | None = None
    prefix: str = "cs"
    storage: str = "memory"
    demand_enabled: bool = True
    max_lease: float = 600.0
    sweep_period: float = 1.0
    put_enabled: bool = True
    put_timeout: float = 5.0
    max_put_timeout: float = 60.0
    max_puts_in_flight: int = 1000
    heartbeat_period: float = 1.0
    max_queue: int = 500_000
    metrics_port: int | None = None
    metrics_addr: str = "0.0.0.0"
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<config>"

    def section(self, name: str) -> dict[str, Any]:
        """A protocol section (``epics``, ``pva``, ``tango``), empty if absent."""
        return self.sections.get(name, {})


@cache
def config_schema() -> dict[str, Any]:
    """The JSON Schema of adapter configuration files."""
    return json.loads(SCHEMA_PATH.read_text())


def load_config(path: str | Path, proto: str) -> AdapterConfig:
    """Read, validate and normalise a YAML configuration file for ``proto``."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(str(path), None, "", f"cannot read: {exc.strerror}") from exc
    return parse_config(text, proto, source=str(path))


def parse_config(text: str, proto: str, *, source: str = "<config>") -> AdapterConfig:
    """Validate YAML text; errors name ``source``, the line and the field."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark else None
        raise ConfigError(source, line, "", f"invalid YAML: {exc.problem}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, 1, "", "expected a mapping at the top level")
    validator = jsonschema.Draft202012Validator(config_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(
            error.instance, dict
        ):
            known = error.schema.get("properties", {})
            path += [key for key in error.instance if key not in known][:1]
        raise ConfigError(source, _line_of(node, path), _field(path), error.message)
    return _build(data, node, proto, source)


def _build(data: dict[str, Any], node: Any, proto: str, source: str) -> AdapterConfig:
    channels: list[Channel] = []
    for index, entry in enumerate(data.get("channels", [])):
        uri = entry if "://" in entry else f"{proto}://{entry}"
        where = ["channels", index]
        try:
            channel = parse_channel(uri)
        except ChannelError as exc:
            raise ConfigError(
                source, _line_of(node, where), _field(where), str(exc)
            ) from None
        if channel.proto != proto:
            raise ConfigError(
                source, _line_of(node, where), _field(where),
                f"{channel.uri} is not a {proto}:// channel",
            )  # fmt: skip
        channels.append(channel)
    nats = data.get("nats", {})
    demand = data.get("demand", {})
    put = data.get("put", {})
    defaults = AdapterConfig(proto)
    return AdapterConfig(
        proto=proto,
        channels=list(dict.fromkeys(channels)),
        id=data.get("id"),
        nats_url=nats.get("url"),
        prefix=nats.get("prefix", defaults.prefix),
        storage=nats.get("storage", defaults.storage),
        demand_enabled=demand.get("enabled", defaults.demand_enabled),
        max_lease=demand.get("max_lease", defaults.max_lease),
        sweep_period=demand.get("sweep_period", defaults.sweep_period),
        put_enabled=put.get("enabled", defaults.put_enabled),
        put_timeout=put.get("timeout", defaults.put_timeout),
        max_put_timeout=put.get("max_timeout", defaults.max_put_timeout),
        max_puts_in_flight=put.get("max_in_flight", defaults.max_puts_in_flight),
        heartbeat_period=data.get("heartbeat", {}).get(
            "period", defaults.heartbeat_period
        ),
        max_queue=data.get("publisher", {}).get("max_queue", defaults.max_queue),
        metrics_port=data.get("metrics", {}).get("port"),
        metrics_addr=data.get("metrics", {}).get("addr", defaults.metrics_addr),
        sections={k: data[k] for k in ("epics", "pva", "tango") if k in data},
        source=source,
    )


def _field(path: list[Any]) -> str:
    text = ""
    for part in path:
        text += (
            f"[{part}]"
            if isinstance(part, int)
            else (f".{part}" if text else str(part))
        )
    return text or "(top level)"


def _line_of(node: Any, path: list[Any]) -> int | None:
    """1-based line of the deepest YAML node along ``path``."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in path:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == part:
                    child = value
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(part, int)
            and part < len(node.value)
        ):
            child = node.value[part]
        if child is None:
            break
        node = child
        line = node.start_mark.line + 1
    return line
