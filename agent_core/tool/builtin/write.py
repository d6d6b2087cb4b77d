"""`Write`: create a file, or overwrite one the agent has read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from pydantic import Field

from agent_core.state import AgentState, ReadCacheEntry
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    Seen,
    StatefulTool,
    ToolInput,
    Workspace,
    done,
    input_schema,
    lookup,
    observe,
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

    def __init__(
        self,
        cwd: str | Path,
        *,
        additional_dangerous_files: Sequence[str] = (),
        additional_dangerous_directories: Sequence[str] = (),
    ) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
            additional_dangerous_files: File names (or path tails) whose changes always need
                confirmation, on top of the permission system's defaults.
            additional_dangerous_directories: Directory names likewise.
        """
        self.workspace = Workspace(cwd)
        self.dangerous_files = list(additional_dangerous_files)
        self.dangerous_directories = list(additional_dangerous_directories)

    async def run(self, params: WriteInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Check read-before-write, write the file (in a worker thread), refresh the cache."""
        entries = list(state.tool_context.read_file_cache)
        chunk, seen = await asyncio.to_thread(self._write, params, entries)
        if seen is not None:
            remember(state, seen)
        yield chunk

    def _write(
        self, params: WriteInput, entries: list[ReadCacheEntry]
    ) -> tuple[ToolChunk, Seen | None]:
        path = self.workspace.path(params.file_path)
        shown = self.workspace.display(params.file_path)
        try:
            if path.is_dir():
                return done(f"{shown} is a directory, not a file.", error=True), None
            before: str | None = None
            if path.exists():
                reason = stale_reason(lookup(entries, path), path, shown)
                if reason is not None:
                    return done(reason, error=True), None
                try:
                    before = read_text(path)
                except UnicodeDecodeError:
                    before = ""  # a binary file being replaced: diff against nothing
            write_text(path, params.content)
            lines = params.content.splitlines(keepends=True)
            seen = observe(path, lines)
        except OSError as exc:
            return done(f"Cannot write {shown}: {exc.strerror or exc}", error=True), None
        chunk = done(
            f"The file {shown} has been written successfully ({len(lines)} lines).",
            diff=unified_diff(before, params.content, shown),
            file_path=shown,
            occurrences=1,
        )
        return chunk, seen
