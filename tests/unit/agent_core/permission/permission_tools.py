"""Minimal tools for the permission tests: their hooks delegate to the permission helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_core.message import ToolResultState
from agent_core.permission import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
    bash_match_rule,
    bash_permission,
    bash_read_paths,
    bash_rule_subjects,
    bash_suggestions,
    file_match_rule,
    file_read_paths,
    file_rule_subjects,
    file_suggestions,
    file_write_permission,
    is_read_only,
)
from agent_core.tool.base import ToolBase, ToolChunk


class _NoRun(ToolBase):
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    description = "A tool for permission tests."

    async def __call__(self, *args: Any, **kwargs: Any) -> AsyncIterator[ToolChunk]:
        yield ToolChunk(state=ToolResultState.SUCCESS, is_last=True)


class ShellTool(_NoRun):
    """Bash as the built-in tool wires it: every hook calls a `bash_*` helper."""

    name = "Bash"

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return bash_permission(tool_input["command"], context, self.cwd)

    async def check_read_only(self, tool_input: dict[str, Any]) -> bool:
        return is_read_only(tool_input["command"])

    async def check_read_only_in(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> bool:
        return is_read_only(tool_input["command"], context.extra_read_only_commands)

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return bash_match_rule(rule_content, tool_input["command"])

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"command": c} for c in bash_rule_subjects(tool_input["command"])]

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        return bash_suggestions(tool_input["command"])

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        return bash_read_paths(tool_input["command"], self.cwd)


class FileTool(_NoRun):
    """Read (writes=False) or Write/Edit (writes=True) on a `file_path` argument."""

    def __init__(self, name: str, cwd: str, *, writes: bool) -> None:
        self.name = name
        self.cwd = cwd
        self.writes = writes
        self.is_read_only = not writes

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        if not self.writes:
            return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)
        return file_write_permission(tool_input["file_path"], context, self.cwd)

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return file_match_rule(rule_content, tool_input["file_path"], self.cwd)

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"file_path": p} for p in file_rule_subjects(tool_input["file_path"], self.cwd)]

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        return file_suggestions(self.name, tool_input["file_path"], self.cwd)

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        return file_read_paths(tool_input["file_path"], self.cwd)


class ScriptedTool(_NoRun):
    """A custom tool whose `check_permissions` answers with a fixed decision."""

    name = "Deploy"

    def __init__(self, decision: PermissionDecision, *, read_only: bool = False) -> None:
        self.decision = decision
        self.is_read_only = read_only
        self.checked = 0

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        self.checked += 1
        return self.decision


def make_context(
    project: Path, mode: PermissionMode = PermissionMode.DEFAULT, **rules: object
) -> PermissionContext:
    """A context whose only working directory is `project`."""
    return PermissionContext.model_validate(
        {
            "mode": mode,
            "working_directories": {
                str(project): AdditionalWorkingDirectory(path=str(project), source="test")
            },
            **rules,
        }
    )
