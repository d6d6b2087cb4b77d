"""Fixtures for the built-in tool tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory (inside `tmp_path`, so tests can also use its parent)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace
