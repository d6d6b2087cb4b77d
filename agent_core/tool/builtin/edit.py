"""`Edit`: exact string replacement in a file the agent has read."""

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


class EditInput(ToolInput):
    """Arguments of `Edit`."""

    file_path: str = Field(
        description="The file to edit: an absolute path, or one relative to the workspace."
    )
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation."
    )
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(
        default=False,
        description=("Replace every occurrence. When false, old_string must occur exactly once."),
    )


def _locate(content: str, old: str, new: str) -> tuple[str, str]:
    """The strings to search and insert, adapted to CRLF files when `old` is written with LF."""
    if old not in content and "\r\n" in content and "\n" in old and "\r\n" not in old:
        return old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    return old, new


class Edit(FileRules, StatefulTool[EditInput]):
    """Replace exact text in a file.

    The file must have been read with `Read` and not changed since. `old_string` must occur
    exactly once unless `replace_all` is set. The result's metadata holds a unified `diff`,
    the `file_path` and the number of `occurrences` replaced.
    """

    name = "Edit"
    description = (
        "Replace exact text in a file. Relative paths are resolved against the workspace "
        "directory.\n\n"
        "- The file must be read with the Read tool first.\n"
        "- old_string must match the file exactly, including indentation; never include the "
        "line-number prefix that Read adds (number and tab).\n"
        "- The edit fails when old_string is not found, or occurs more than once and "
        "replace_all is false: add surrounding context to make it unique, or set "
        "replace_all to change every occurrence (e.g. to rename a variable)."
    )
    input_model = EditInput
    input_schema = input_schema(EditInput)
    writes = True

    def __init__(self, cwd: str | Path) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
        """
        self.workspace = Workspace(cwd)

    async def run(self, params: EditInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Check read-before-write, replace the text and refresh the read cache."""
        path = self.workspace.path(params.file_path)
        shown = self.workspace.display(params.file_path)
        try:
            yield await asyncio.to_thread(self._edit, path, shown, params, state)
        except OSError as exc:
            yield done(f"Cannot edit {shown}: {exc.strerror or exc}", error=True)

    def _edit(self, path: Path, shown: str, params: EditInput, state: AgentState) -> ToolChunk:
        if not path.is_file():
            hint = " Use Write to create a new file." if not path.exists() else ""
            return done(f"File {shown} does not exist or is not a file.{hint}", error=True)
        if not params.old_string:
            return done(
                "old_string must not be empty; use Write to replace a whole file.", error=True
            )
        if params.old_string == params.new_string:
            return done(
                "old_string and new_string are identical; there is nothing to change.", error=True
            )
        reason = stale_reason(state, path, shown)
        if reason is not None:
            return done(reason, error=True)
        try:
            before = read_text(path)
        except UnicodeDecodeError:
            return done(f"{shown} is not a UTF-8 text file and cannot be edited.", error=True)
        old, new = _locate(before, params.old_string, params.new_string)
        occurrences = before.count(old)
        if occurrences == 0:
            return done(f"old_string was not found in {shown}.", error=True)
        if occurrences > 1 and not params.replace_all:
            return done(
                f"old_string occurs {occurrences} times in {shown}. Add surrounding context to "
                "make it unique, or set replace_all to true to replace every occurrence.",
                error=True,
            )
        after = before.replace(old, new)
        write_text(path, after)
        remember(state, path, after.splitlines(keepends=True))
        what = "1 occurrence" if occurrences == 1 else f"all {occurrences} occurrences"
        return done(
            f"The file {shown} has been edited successfully (replaced {what}).",
            diff=unified_diff(before, after, shown),
            file_path=shown,
            occurrences=occurrences,
        )
