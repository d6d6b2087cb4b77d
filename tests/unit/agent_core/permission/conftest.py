"""Fixtures of the permission tests: a project directory, a home directory and an outside one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home directory (HOME points at it)."""
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    """The working directory: a project with src/ and build/, next to an outside directory."""
    path = tmp_path / "proj"
    (path / "src").mkdir(parents=True)
    (path / "build").mkdir()
    (tmp_path / "outside").mkdir()
    return path
