"""The history process starts with every gateway (ADR 0039): it loads what it
answers with, not the token checks' JWT and HTTP libraries nor, without an
archive, the PostgreSQL driver."""

from __future__ import annotations

import subprocess
import sys

_LOADED = """
import sys
from synoptic_gateway.history import child
from synoptic_gateway.history.build import history_service
from synoptic_gateway.settings import Settings
history_service(Settings(hist_archive_dsn=""))
print(" ".join(m for m in ("jwt", "httpx", "cryptography", "psycopg")
               if m in sys.modules))
"""


def test_the_history_process_loads_no_token_or_archive_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.strip() == ""
