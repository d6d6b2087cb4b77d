"""The `Skill` tool: how the agent reads a skill's full instructions."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Any

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
)
from agent_core.skill.skill import Skill
from agent_core.tool.base import ToolBase, ToolChunk


class SkillViewer(ToolBase):
    """Returns the full SKILL.md of a skill, by name (read-only, safe to run concurrently).

    The output opens with the skill's directory, so that files the instructions mention by
    relative path can be found.
    """

    name = "Skill"
    description = (
        "Read the full instructions of one of the skills listed in the system prompt. Call it "
        "before working on a task that matches a skill's description, then follow the "
        "instructions with your other tools."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 (never mutated)
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill's name, as listed."},
        },
        "required": ["skill"],
        "additionalProperties": False,
    }
    is_read_only = True
    is_concurrency_safe = True

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: it only shows instructions the workspace already lists."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="skill instructions")

    def __init__(self, skills: Sequence[Skill]) -> None:
        """Serve `skills`.

        Raises:
            ToolError: When two skills share a name.
        """
        self._skills: dict[str, Skill] = {}
        for skill in skills:
            if skill.name in self._skills:
                raise ToolError(f"two skills are named {skill.name!r}")
            self._skills[skill.name] = skill

    @property
    def skills(self) -> list[Skill]:
        """The skills served, in order."""
        return list(self._skills.values())

    async def __call__(self, skill: str) -> AsyncGenerator[ToolChunk, None]:
        """Yield the skill's markdown, or an ERROR naming the available skills."""
        found = self._skills.get(skill)
        if found is None:
            available = ", ".join(self._skills) or "(none)"
            yield ToolChunk(
                content=[
                    TextBlock(text=f"Skill '{skill}' not found. Available skills: {available}")
                ],
                state=ToolResultState.ERROR,
                is_last=True,
            )
            return
        text = f"Base directory for this skill: {found.path}\n\n{found.content}"
        yield ToolChunk(
            content=[TextBlock(text=text)],
            state=ToolResultState.SUCCESS,
            metadata={"skill": found.name, "path": found.path},
            is_last=True,
        )
