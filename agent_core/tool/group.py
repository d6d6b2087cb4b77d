"""Tool groups and what they bundle (tools, MCP servers, skills), and the `reset_tools` meta tool.

`ServerEntry` and `SkillEntry` are how a toolkit tracks the MCP servers and skill sources it
brings in asynchronously (`Toolkit.prepare`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission.types import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.skill.loader import LocalSkillLoader, SkillLoaderBase
from agent_core.skill.skill import Skill
from agent_core.state import AgentState
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import STATE_ARG

if TYPE_CHECKING:
    # Type-only: agent_core.mcp imports the tool package, which imports this module.
    from agent_core.mcp.client import MCPClient

BASIC_GROUP = "basic"
RESET_TOOLS = "reset_tools"
_GROUP_NAME = re.compile(r"^[A-Za-z0-9_-]+$")

SkillSource = Skill | str | os.PathLike[str] | SkillLoaderBase
"""Where skills come from: a skill, a skill directory (read by `LocalSkillLoader`), or a loader."""


def skill_loader(source: SkillSource) -> Skill | SkillLoaderBase:
    """Return `source` ready to load: a directory path becomes a `LocalSkillLoader`.

    Raises:
        ToolError: When `source` is none of a `Skill`, a path or a `SkillLoaderBase`.
    """
    if isinstance(source, Skill | SkillLoaderBase):
        return source
    if isinstance(source, str | os.PathLike):
        return LocalSkillLoader(os.fspath(source))
    raise ToolError(
        f"cannot use {type(source).__name__!r} as a skill source: pass a Skill, a directory "
        "path or a SkillLoaderBase"
    )


def failure(exc: Exception) -> str:
    """The message recorded for a failed MCP server or skill source."""
    return str(exc) or type(exc).__name__


@dataclass
class ServerEntry:
    """An MCP server of a toolkit: its group, and what preparing it produced.

    Attributes:
        client: The server's client.
        group: The tool group its tools join.
        prepared: Whether its tools were listed (or its failure recorded).
        connected_here: Whether the toolkit connected the client (and so must close it).
        tool_names: The names of the tools registered for it.
    """

    client: MCPClient
    group: str
    prepared: bool = False
    connected_here: bool = False
    tool_names: list[str] = field(default_factory=list)

    async def open(self) -> list[ToolBase] | str:
        """Connect the client if it is stateful and not connected, and list its tools.

        Returns:
            The tools, or why the connection or the listing failed.
        """
        try:
            if self.client.is_stateful and not self.client.is_connected:
                await self.client.connect()
                self.connected_here = True
            return list(await self.client.list_tools())
        # Whatever a server does wrong, the toolkit must stay usable without its tools.
        except Exception as exc:
            return failure(exc)

    async def release(self) -> None:
        """Close the client if the toolkit connected it."""
        if self.connected_here:
            self.connected_here = False
            await self.client.close()


@dataclass
class SkillEntry:
    """A skill source of a toolkit: its group, and whether it was loaded.

    Attributes:
        source: A skill, or the loader reading the skills.
        group: The tool group its skills belong to.
        loaded: Whether its skills were loaded (or its failure recorded).
    """

    source: Skill | SkillLoaderBase
    group: str
    loaded: bool = False

    @property
    def label(self) -> str:
        """How the source is named in `Toolkit.skill_errors`: its directory, path or repr."""
        if isinstance(self.source, Skill):
            return self.source.path
        if isinstance(self.source, LocalSkillLoader):
            return str(self.source.directory)
        return repr(self.source)

    async def load(self) -> list[Skill] | str:
        """Read the source's skills (a loader runs in a thread: it reads files).

        Returns:
            The skills, or why the loader failed.
        """
        if isinstance(self.source, Skill):
            return [self.source]
        try:
            return await asyncio.to_thread(self.source.load)
        # A broken skill source must not break the agent: its skills are left out and recorded.
        except Exception as exc:
            return failure(exc)


@dataclass
class ToolGroup:
    """A named bundle of tools, MCP servers and skills the agent activates as a unit.

    The tools of the group's MCP servers join the group, and its skills are listed in the
    system prompt only while the group is active (both once the toolkit is prepared).

    Attributes:
        name: The group's name; it becomes a boolean argument of `reset_tools`.
        description: What the group is for, shown to the model in `reset_tools`' schema.
        tools: The group's tools (plain callables are wrapped in `FunctionTool`).
        instructions: How to use the group, returned to the model when it is activated.
        mcps: MCP servers whose tools belong to the group.
        skills_or_loaders: The group's skills: `Skill`s, skill directories or loaders.
    """

    name: str
    description: str
    tools: Sequence[ToolBase | Callable[..., Any]] = field(default_factory=list)
    instructions: str | None = None
    mcps: Sequence[MCPClient] = field(default_factory=list)
    skills_or_loaders: Sequence[SkillSource] = field(default_factory=list)

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
