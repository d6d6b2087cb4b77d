"""Fixtures of the workspace tests.

``workspace`` (function)  an open `LocalWorkspace` in a fresh directory, closed after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from workspaces import LocalWorkspace


@pytest.fixture
async def workspace(tmp_path: Path) -> AsyncIterator[LocalWorkspace]:
    async with LocalWorkspace(tmp_path / "ws", "ws-1") as opened:
        yield opened
