"""`Write`: create a file, or overwrite one the agent has read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import Field

from agent_core.state import AgentState
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    StatefulTool,
    ToolInput,
    Workspace,
    done,
    input_schema,
    remember,
    stale_reason,
)
from agent_core.tool.builtin._files import FileRules, read_text, unified_diff, write_text


class WriteInput(ToolInput):
    """Arguments of `Write`."""

    file_path: str = Field(
        description="The file to write: an absolute path, or one relative to the workspace."
    )
    content: str = Field(description="The complete new content of the file.")


class Write(FileRules, StatefulTool[WriteInput]):
    """Create or overwrite a file.

    An existing file must have been read with `Read` and not changed since (its mtime is
    compared with the read cache). The result's metadata holds a unified `diff`, the
    `file_path` and `occurrences` (always 1).
    """

    name = "Write"
    description = (
        "Write a file to the filesystem, replacing it if it exists. Relative paths are "
        "resolved against the workspace directory; missing parent directories are created.\n\n"
        "- An existing file must be read with the Read tool first; writing fails otherwise, "
        "or when the file changed after it was read.\n"
        "- Prefer Edit for changing part of an existing file."
    )
    input_model = WriteInput
    input_schema = input_schema(WriteInput)
    writes = True

    def __init__(self, cwd: str | Path) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
        """
        self.workspace = Workspace(cwd)

    async def run(self, params: WriteInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Check read-before-write, write the file and refresh the read cache."""
        path = self.workspace.path(params.file_path)
        shown = self.workspace.display(params.file_path)
        try:
            yield await asyncio.to_thread(self._write, path, shown, params.content, state)
        except OSError as exc:
            yield done(f"Cannot write {shown}: {exc.strerror or exc}", error=True)

    def _write(self, path: Path, shown: str, content: str, state: AgentState) -> ToolChunk:
        if path.is_dir():
            return done(f"{shown} is a directory, not a file.", error=True)
        before: str | None = None
        if path.exists():
            reason = stale_reason(state, path, shown)
            if reason is not None:
                return done(reason, error=True)
            try:
                before = read_text(path)
            except UnicodeDecodeError:
                before = ""  # a binary file being replaced: diff against nothing
        write_text(path, content)
        lines = content.splitlines(keepends=True)
        remember(state, path, lines)
        return done(
            f"The file {shown} has been written successfully ({len(lines)} lines).",
            diff=unified_diff(before, content, shown),
            file_path=shown,
            occurrences=1,
        )
