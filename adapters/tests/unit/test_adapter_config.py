"""Adapter configuration: valid files load with defaults; every error names the
file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from synoptic_adapters.config import ConfigError, load_config, parse_config
from synoptic_schemas import parse_channel


def test_a_valid_file_loads_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "adapter.yaml"
    path.write_text(
        "id: epics-a\n"
        "nats:\n  url: nats://127.0.0.1:4333\n  prefix: lab\n"
        "channels:\n  - ca://SR:DCCT\n  - SR:BPM:X\n  - SR:DCCT\n"
        "put:\n  timeout: 2.5\n"
        "epics:\n  server_port: 5100\n  auto_addr_list: false\n"
        "metrics:\n  port: 9100\n"
    )
    config = load_config(path, "ca")
    assert config.id == "epics-a"
    assert config.nats_url == "nats://127.0.0.1:4333" and config.prefix == "lab"
    assert config.channels == [
        parse_channel("ca://SR:DCCT"),
        parse_channel("ca://SR:BPM:X"),
    ]
    assert config.put_timeout == 2.5 and config.max_put_timeout == 60.0
    assert config.demand_enabled and config.heartbeat_period == 1.0
    assert config.section("epics") == {"server_port": 5100, "auto_addr_list": False}
    assert config.section("tango") == {}
    assert (config.metrics_port, config.metrics_addr) == (9100, "0.0.0.0")


def test_an_empty_file_is_a_valid_configuration() -> None:
    assert parse_config("", "ca").channels == []


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("channels:\n  - A\n  - 3\n", 3, "channels[1]", "not of type 'string'"),
        ("nats:\n  url: x\n  bogus: 1\n", 3, "nats.bogus", "'bogus' was unexpected"),
        ("id: a\ndemand:\n  max_lease: -1\n", 3, "demand.max_lease", "minimum of 0"),
        ("channels:\n  - A\n  - 'ca://'\n", 3, "channels[1]", "empty channel name"),
        ("channels:\n  - tango://h:1/a/b/c/d\n", 2, "channels[0]", "not a ca://"),
        ("epics:\n  server_port: 99999\n", 2, "epics.server_port", "maximum"),
        ("put:\n  timeout: soon\n", 2, "put.timeout", "not of type 'number'"),
    ],
)
def test_errors_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, words: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, "ca")
    error = caught.value
    assert (error.line, error.field) == (line, field)
    assert str(error).startswith(f"{path}:{line}: {field}: ")
    assert words in str(error)


def test_yaml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: a\nchannels: [A,\n  B\nnats: {\n")
    with pytest.raises(ConfigError, match=r"broken\.yaml:\d+: invalid YAML"):
        load_config(path, "ca")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read"):
        load_config(tmp_path / "missing.yaml", "ca")
