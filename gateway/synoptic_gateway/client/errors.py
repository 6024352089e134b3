"""The error a request of the client raises when the gateway refuses it."""

from __future__ import annotations

from typing import Any


class GatewayError(Exception):
    """An ``err`` frame answering a request."""

    def __init__(self, frame: dict[str, Any]) -> None:
        super().__init__(f"{frame.get('code')}: {frame.get('msg')}")
        self.code: str = frame.get("code", "")
        self.frame = frame
