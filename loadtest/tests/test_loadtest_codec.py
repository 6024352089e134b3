"""The k6 side of the wire: frames encoded by the Python codec (the gateway's), read
in k6 by the upd scanner and by the bundled msgpack decoder, must agree."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import numpy as np

from synoptic_schemas.codec import encode

LOADTEST = Path(__file__).resolve().parents[1]
K6 = LOADTEST / "bin" / "k6"
SCRIPT = Path(__file__).resolve().parent / "k6" / "codec_check.js"


def value(seq: int, v: object, **extra: object) -> dict:
    return {"ver": 1, "v": v, "t": time.time_ns(), "sev": 0, "st": "NO_ALARM",
            "seq": seq, "ep": 1763800000123, "c": True, **extra}  # fmt: skip


def frames() -> dict[str, tuple[dict, bool]]:
    many = [value(k, float(k) / 3) for k in range(40)]  # array16 beyond 15 entries
    return {
        "scalars": ({"op": "upd", "sid": 3, "i": [0, 2], "val": [value(1, 1.5),
                                                                   value(2, -7)]}, True),
        "nulls and disconnected": ({"op": "upd", "sid": 300, "i": [0, 1, 2], "val": [
            None, value(70000, None, c=False, sev=3), value(2**33, "text ✓")]}, True),
        "typed arrays and enums": ({"op": "upd", "sid": 65536, "i": [4, 5], "val": [
            value(5, np.arange(300, dtype="f8")), value(6, ["a", "b"], labels=["x"])]}, True),
        "forty values": ({"op": "upd", "sid": 1, "i": list(range(40)), "val": many}, True),
        "key order": ({"val": [value(9, 0)], "i": [0], "sid": 2, "op": "upd"}, True),
        "snapshot": ({"op": "snap", "id": 7, "sid": 3, "ch": ["ca://A"],
                      "val": [value(1, 2.0)], "meta": [None]}, False),
        "hello": ({"op": "hello", "ver": 1, "gw": "gw-1", "user": "anonymous",
                   "write": False, "limits": {"channels": 5000}}, False),
    }  # fmt: skip


def test_scanner_agrees_with_the_decoder_inside_k6(tmp_path: Path) -> None:
    cases = []
    for index, (name, (frame, is_upd)) in enumerate(frames().items()):
        path = tmp_path / f"frame{index}.bin"
        path.write_bytes(encode(frame))
        cases.append({"name": name, "path": str(path), "upd": is_upd})
    cases_path = tmp_path / "cases.json"
    cases_path.write_text(json.dumps(cases))

    done = subprocess.run(
        [str(K6), "run", "--quiet", "--no-usage-report", str(SCRIPT)],
        env={"LT_CASES": str(cases_path), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
