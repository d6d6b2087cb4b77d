"""`Write`: create a file, or overwrite one the agent has read."""

from __future__ import annotations

from pydantic import Field

from agent_core.state import ReadCacheEntry
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    Seen,
    ToolInput,
    done,
    input_schema,
    lookup,
    observe,
    stale_reason,
)
from agent_core.tool.builtin._files import FileWriter, read_text, unified_diff, write_text


class WriteInput(ToolInput):
    """Arguments of `Write`."""

    file_path: str = Field(
        description="The file to write: an absolute path, or one relative to the workspace."
    )
    content: str = Field(description="The complete new content of the file.")


class Write(FileWriter[WriteInput]):
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

    def change(
        self, params: WriteInput, entries: list[ReadCacheEntry]
    ) -> tuple[ToolChunk, Seen | None]:
        """Write the file whole (read-before-write checked against `entries`)."""
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
