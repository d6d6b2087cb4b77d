"""An `Offloader` that writes where the spec's LocalWorkspace does, under a temporary directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_core.message import Msg, ToolResultBlock


class FileOffloader:
    """Appends compressed messages to context.jsonl; one file per truncated tool result."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, session_id: str) -> Path:
        path = self.root / "sessions" / session_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        path = self._dir(session_id) / "context.jsonl"
        with path.open("a", encoding="utf-8") as file:
            file.writelines(m.model_dump_json() + "\n" for m in msgs)
        return str(path)

    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        path = self._dir(session_id) / f"tool_result-{tool_result.id}.txt"
        path.write_text(tool_result.output_text(), encoding="utf-8")
        return str(path)


@pytest.fixture
def offloader(tmp_path: Path) -> FileOffloader:
    return FileOffloader(tmp_path)
