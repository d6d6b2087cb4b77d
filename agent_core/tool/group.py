"""Tool groups, and `reset_tools`: the meta tool the agent uses to switch groups on and off."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission.types import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.state import AgentState
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import STATE_ARG

BASIC_GROUP = "basic"
RESET_TOOLS = "reset_tools"
_GROUP_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass
class ToolGroup:
    """A named bundle of tools the agent activates or deactivates as a unit.

    Attributes:
        name: The group's name; it becomes a boolean argument of `reset_tools`.
        description: What the group is for, shown to the model in `reset_tools`' schema.
        tools: The group's tools (plain callables are wrapped in `FunctionTool`).
        instructions: How to use the group, returned to the model when it is activated.
    """

    name: str
    description: str
    tools: list[ToolBase | Callable[..., Any]] = field(default_factory=list)
    instructions: str | None = None

    def __post_init__(self) -> None:
        """Check the name.

        Raises:
            ToolError: When the name is reserved or not made of letters, digits, '_' and '-'.
        """
        if self.name == BASIC_GROUP:
            raise ToolError(f"the group name {BASIC_GROUP!r} is reserved for the toolkit's tools")
        if not _GROUP_NAME.match(self.name):
            raise ToolError(
                f"invalid tool group name {self.name!r}: use letters, digits, '_' and '-' only"
            )


def _result(text: str, *, error: bool = False) -> ToolChunk:
    state = ToolResultState.ERROR if error else ToolResultState.SUCCESS
    return ToolChunk(content=[TextBlock(text=text)], state=state, is_last=True)


class ResetTools(ToolBase):
    """Set which tool groups are active: the arguments are the final state, not a change.

    Each group is a boolean argument; a group not set to true ends up inactive. The result
    names the active groups and carries the instructions of the groups that just became
    active. The active set is stored in the agent state (`tool_context.activated_groups`).
    """

    name = RESET_TOOLS
    description = (
        "Choose which tool groups are active, to keep only the tools the current task needs. "
        "Each group is a boolean argument.\n\n"
        "The arguments are the FINAL state of all groups, not changes: every group not set "
        "to true is deactivated, whatever its previous state. Deactivate groups you no "
        "longer need to save context.\n\n"
        "The result contains usage instructions for the groups you activate; follow them."
    )
    is_state_injected = True

    def __init__(self, groups: Mapping[str, ToolGroup]) -> None:
        """Create the meta tool over `groups` (a live view: call `refresh` after changes).

        Args:
            groups: The toolkit's groups by name.
        """
        self._groups = groups
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the input schema from the current groups."""
        self.input_schema = {
            "type": "object",
            "properties": {
                name: {"type": "boolean", "default": False, "description": group.description}
                for name, group in self._groups.items()
            },
        }

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allow: switching groups only changes what the agent sees."""
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW, message="reset_tools is always allowed."
        )

    async def __call__(self, *args: Any, **kwargs: Any) -> AsyncGenerator[ToolChunk, None]:
        """Activate exactly the groups set to true and return their instructions.

        Args:
            *args: Unused; tools are always called with keyword arguments.
            **kwargs: One boolean per group, plus the injected `_agent_state`.

        Yields:
            One final chunk: the new active set and the newly active groups' instructions,
            or an ERROR (nothing changed) for unknown groups or non-boolean values.
        """
        state = kwargs.pop(STATE_ARG, None)
        if not isinstance(state, AgentState):
            yield _result("reset_tools needs the agent state to run.", error=True)
            return
        unknown = sorted(set(kwargs) - set(self._groups))
        if unknown:
            known = ", ".join(self._groups) or "(none)"
            yield _result(
                f"Unknown tool group(s): {', '.join(unknown)}. Groups: {known}.", error=True
            )
            return
        wrong = sorted(name for name, value in kwargs.items() if not isinstance(value, bool))
        if wrong:
            yield _result(f"Values must be true or false: {', '.join(wrong)}.", error=True)
            return
        before = set(state.tool_context.activated_groups)
        active = [name for name in self._groups if kwargs.get(name) is True]
        state.tool_context.activated_groups = active
        yield _result(self._describe(active, before))

    def _describe(self, active: list[str], before: set[str]) -> str:
        if active:
            parts = [f"Active tool groups: {', '.join(active)}."]
        else:
            parts = ["No tool groups are active; only the basic tools are available."]
        dropped = [name for name in self._groups if name in before and name not in active]
        if dropped:
            parts.append(f"Deactivated: {', '.join(dropped)}.")
        for name in active:
            instructions = self._groups[name].instructions
            if name not in before and instructions:
                parts.append(f"## Instructions for the '{name}' tools\n{instructions}")
        return "\n\n".join(parts)
