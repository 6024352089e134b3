"""``synoptic``: every bus command is registered by the module :data:`OWN`
names, and a bus command run imports that module alone."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import import_module

import pytest

from synoptic_bus import buscmd, cli
from synoptic_bus.cli import OWN, build_parser, command_of


def _registered(module: str) -> set[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    import_module(f"synoptic_bus.{module}").register(sub)
    return set(sub.choices)


def test_each_bus_command_is_registered_by_the_module_named() -> None:
    for module in set(OWN.values()):
        assert _registered(module) == {c for c, m in OWN.items() if m == module}


def test_the_command_is_the_first_word_not_an_option() -> None:
    assert command_of(["-v", "screens", "import", "x"]) == "screens"
    assert command_of(["--help"]) is None
    assert command_of([]) is None


def test_a_bus_command_parses_alone_and_every_command_with_none() -> None:
    args = build_parser("screens").parse_args(["screens", "import", "set", "--dry-run"])
    assert args.screens_command == "import" and args.dry_run
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(OWN) <= set(choices) and "gateway" in choices


def test_screens_start_without_the_other_commands_modules() -> None:
    probe = ("import sys; from synoptic_bus.cli import build_parser; "
             "build_parser('screens'); "
             "print(sorted(m for m in ('psycopg', 'synoptic_bus.archiver', "
             "'synoptic_bus.demo', 'synoptic_gateway', 'jsonschema') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                         text=True, check=True, timeout=60)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_a_bus_that_does_not_answer_in_time_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def no_answer(_args: object) -> int:
        raise TimeoutError

    monkeypatch.setattr(buscmd, "cmd_get", no_answer)
    assert cli.main(["get", "ca://X"]) == 3
    err = capsys.readouterr().err
    assert err.strip() == (
        "synoptic get: no answer from NATS in time (the bus is busy or "
        "unreachable): try again"
    )
