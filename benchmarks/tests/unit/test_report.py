"""A benchmark's report: printed as JSON, and with ``--save`` the same JSON kept as
``results/NAME.json`` (what docs/benchmarks.md's tables are made from)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from synoptic_benchmarks import report


def test_save_writes_exactly_what_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path / "results")
    result = {"benchmark": "x", "machine": report.machine(), "figures": [1.5, None]}
    report.emit("bench-x", result, save=True)
    printed = capsys.readouterr().out
    saved = (tmp_path / "results" / "bench-x.json").read_text()
    assert saved == printed and json.loads(saved) == result
    report.emit("bench-x", {"benchmark": "x", "figures": []}, save=False)
    assert json.loads((tmp_path / "results" / "bench-x.json").read_text()) == result


def test_the_save_option() -> None:
    parser = argparse.ArgumentParser()
    report.add_save_option(parser)
    assert parser.parse_args(["--save"]).save and not parser.parse_args([]).save
