"""What the file tools share: permission hooks on `file_path`, diffs and writing text."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from agent_core.tool.builtin._base import Workspace


class FileRules:
    """Permission hooks of a tool whose subject is its `file_path` argument.

    Rules match the path with glob patterns, and suggestions cover the file's directory.
    Read-only tools leave the decision to the engine (PASSTHROUGH); writing tools
    (`writes = True`) run the file-write safety checks first.
    """

    name: str
    workspace: Workspace
    writes: bool = False

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Safety checks for writes (sensitive files, working directories); PASSTHROUGH else."""
        return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Whether the glob `rule_content` matches the call's `file_path` (None matches all)."""
        if rule_content is None:
            return True
        return False

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Suggest allowing this tool on the file's whole directory (`<dir>/**`)."""
        return []


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
