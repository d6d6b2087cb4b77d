"""What the file tools share: permission hooks on `file_path`, diffs and writing text."""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from agent_core.permission.paths import (
    file_match_rule,
    file_read_paths,
    file_rule_subjects,
    file_suggestions,
    file_write_permission,
)
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from agent_core.state import AgentState, ReadCacheEntry
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import P, Seen, StatefulTool, Workspace, remember


class FileRules:
    """Permission hooks of a tool whose subject is its `file_path` argument.

    Rules are globs matched against the path (relative globs anchored at the workspace) and
    against its real path too (`rule_subjects`), so a symlink cannot dodge a rule; suggestions
    cover the file's directory. Read-only tools leave the decision to the engine
    (PASSTHROUGH); writing tools (`writes = True`) ask for sensitive paths and accept edits
    inside the working directories in ACCEPT_EDITS mode.
    """

    name: str
    workspace: Workspace
    writes: bool = False
    dangerous_files: Sequence[str] = ()
    dangerous_directories: Sequence[str] = ()

    def _file(self, tool_input: dict[str, Any]) -> str | None:
        raw = tool_input.get("file_path")
        return raw if isinstance(raw, str) and raw else None

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Safety checks for writes (sensitive files, working directories); PASSTHROUGH else."""
        file_path = self._file(tool_input)
        if not self.writes or file_path is None:
            return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)
        return file_write_permission(
            file_path,
            context,
            str(self.workspace.cwd),
            dangerous_files=self.dangerous_files,
            dangerous_directories=self.dangerous_directories,
        )

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Whether the glob `rule_content` matches the call's `file_path` (None matches all)."""
        file_path = self._file(tool_input)
        if file_path is None:
            return rule_content is None
        return file_match_rule(rule_content, file_path, str(self.workspace.cwd))

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        """The call as rules see it: once with the path as given, once with its real path."""
        file_path = self._file(tool_input)
        if file_path is None:
            return [tool_input]
        paths = file_rule_subjects(file_path, str(self.workspace.cwd))
        return [{**tool_input, "file_path": path} for path in paths]

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        """The file the call reads (for engines that confine reads to working directories)."""
        file_path = self._file(tool_input)
        return None if file_path is None else file_read_paths(file_path, str(self.workspace.cwd))

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Suggest allowing this tool on the file's whole directory (`src/**`)."""
        file_path = self._file(tool_input)
        if file_path is None:
            return []
        return file_suggestions(self.name, file_path, str(self.workspace.cwd))


def unified_diff(before: str | None, after: str, shown: str) -> str:
    """A unified diff from `before` (None: the file did not exist) to `after`.

    Args:
        before: The old content, or None for a new file.
        after: The new content.
        shown: The file's name as shown to the model.

    Returns:
        The diff text, `--- /dev/null` for a new file.
    """
    return "".join(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="/dev/null" if before is None else f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )


def read_text(path: Path) -> str:
    """The file's content as UTF-8 text, line endings untouched.

    Raises:
        UnicodeDecodeError: When the file is not UTF-8 text.
        OSError: When the file cannot be read.
    """
    return path.read_bytes().decode("utf-8")


def write_text(path: Path, content: str) -> None:
    """Write `content` as UTF-8 (line endings untouched), creating parent directories.

    The file is written in place, so a symlink keeps pointing at its (updated) target and the
    file keeps its permissions.

    Raises:
        OSError: When the file cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8"))


class FileWriter(FileRules, StatefulTool[P]):
    """A tool that changes one file: read-before-write checks, then `change` in a thread."""

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

    async def run(self, params: P, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Apply the change (in a worker thread), then refresh the read cache."""
        entries = list(state.tool_context.read_file_cache)
        chunk, seen = await asyncio.to_thread(self.change, params, entries)
        if seen is not None:
            remember(state, seen)
        yield chunk

    def change(self, params: P, entries: list[ReadCacheEntry]) -> tuple[ToolChunk, Seen | None]:
        """Check the cache `entries` and change the file; blocking (runs in a thread)."""
        raise NotImplementedError
