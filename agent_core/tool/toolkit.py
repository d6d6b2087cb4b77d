"""Toolkit: the registry of an agent's tools, MCP servers and skills; it dispatches tool calls."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.model.base import ToolSchema
from agent_core.skill.skill import Skill, skills_prompt_fragment
from agent_core.state import AgentState
from agent_core.tool._arguments import argument_errors, drop_null_optionals
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import CALL_ID_ARG, STATE_ARG, FunctionTool
from agent_core.tool.group import (
    BASIC_GROUP,
    RESET_TOOLS,
    ResetTools,
    ServerEntry,
    SkillEntry,
    SkillSource,
    ToolGroup,
    failure,
    skill_loader,
)

if TYPE_CHECKING:
    # Type-only: agent_core.mcp imports the tool package, which imports this module.
    from agent_core.mcp.client import MCPClient

logger = logging.getLogger(__name__)

# What every provider accepts in a function name.
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _error(text: str) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.ERROR, is_last=True)


def _final(chunk: ToolChunk) -> ToolChunk:
    if chunk.is_last and chunk.state is not ToolResultState.RUNNING:
        return chunk
    state = ToolResultState.SUCCESS if chunk.state is ToolResultState.RUNNING else chunk.state
    return chunk.model_copy(update={"is_last": True, "state": state})


class Toolkit:
    """The tools an agent can call: their schemas for the model, and dispatch of its calls.

    Top-level tools, MCP servers and skills form the always-active "basic" group. Extra
    `ToolGroup`s start inactive; as soon as one exists the `reset_tools` meta tool is
    registered, through which the model picks the active groups. Tools of inactive groups are
    hidden from `schemas` and refused by `call`, and their skills are left out of
    `skills_prompt`. Which groups are active lives in the agent state
    (`tool_context.activated_groups`); without a state the toolkit uses a private one.

    MCP tools and skills arrive with `prepare()`: it connects the stateful MCP clients not
    connected yet, registers their tools as `mcp__{server}__{tool}`, loads the skills and
    registers the `Skill` viewer. A server or skill source that fails is recorded in
    `mcp_errors` / `skill_errors` and left out. `aclose()` (or leaving `async with`) closes
    the clients `prepare()` connected.

    Tools keep their registration order. Every stream returned by `call` ends with exactly one
    chunk that has `is_last=True` and a final state, whatever the tool did: errors the model
    should see (unknown tool, bad arguments, a failing tool) arrive as that final ERROR chunk.
    Arguments are checked against the tool's `input_schema` before the tool runs, so a
    missing or mistyped argument is reported by field name with its expected shape.

    Attributes:
        mcp_errors: Why an MCP server's tools are missing, by server name.
        skill_errors: Why skills are missing, by source (directory, skill path or loader).
    """

    def __init__(
        self,
        tools: Sequence[ToolBase | Callable[..., Any]] | None = None,
        *,
        tool_groups: Sequence[ToolGroup] | None = None,
        mcps: Sequence[MCPClient] | None = None,
        skills_or_loaders: Sequence[SkillSource] | None = None,
    ) -> None:
        """Create a toolkit; the MCP tools and skills are added by `prepare()`.

        Args:
            tools: Always-active tools; plain callables are wrapped in `FunctionTool`.
            tool_groups: Groups the model can activate with `reset_tools`.
            mcps: MCP servers whose tools are always active.
            skills_or_loaders: Always-listed skills: `Skill`s, skill directories (read with
                `LocalSkillLoader`) or `SkillLoaderBase`s.

        Raises:
            ToolError: When two tools, groups or MCP servers share a name, a tool is invalid,
                or a skill source is of the wrong type.
        """
        self._tools: dict[str, ToolBase] = {}
        self._group_of: dict[str, str] = {}
        self._groups: dict[str, ToolGroup] = {}
        self._reset: ResetTools | None = None
        self._own_state = AgentState()
        self._servers: dict[str, ServerEntry] = {}
        self._sources: list[SkillEntry] = []
        self._skills: dict[str, tuple[Skill, str]] = {}
        self._viewer: ToolBase | None = None
        self._lock = asyncio.Lock()
        self.mcp_errors: dict[str, str] = {}
        self.skill_errors: dict[str, str] = {}
        for tool in tools or ():
            self.register(tool)
        self._add_sources(BASIC_GROUP, mcps or (), skills_or_loaders or ())
        for group in tool_groups or ():
            self.add_group(group)

    def register(self, tool: ToolBase | Callable[..., Any]) -> ToolBase:
        """Add an always-active tool (to the basic group).

        Args:
            tool: A `ToolBase`, or a plain callable to wrap in `FunctionTool`.

        Returns:
            The registered tool (the wrapper, for a callable).

        Raises:
            ToolError: When the name is taken, is not a valid tool name, or `tool` is neither a
                tool nor callable.
        """
        tool = self._check(tool, set())
        self._add(tool, BASIC_GROUP)
        return tool

    def add_group(self, group: ToolGroup) -> None:
        """Add a tool group, inactive until the model activates it with `reset_tools`.

        Args:
            group: The group; its tools are registered with it.

        Raises:
            ToolError: When the group name is taken or one of its tools cannot be registered
                (then nothing is added).
        """
        if group.name in self._groups:
            raise ToolError(f"a tool group named {group.name!r} already exists")
        taken: set[str] = set()
        tools = [self._check(tool, taken) for tool in group.tools]
        self._add_sources(group.name, group.mcps, group.skills_or_loaders)
        self._groups[group.name] = group
        for tool in tools:
            self._add(tool, group.name)
        if self._reset is None:
            self._reset = ResetTools(self._groups)
            self._add(self._reset, BASIC_GROUP)
        else:
            self._reset.refresh()

    def _add_sources(
        self, group: str, mcps: Sequence[MCPClient], sources: Sequence[SkillSource]
    ) -> None:
        """Record a group's MCP servers and skill sources for `prepare` (all or nothing).

        Raises:
            ToolError: When a server name is taken or a skill source is of the wrong type.
        """
        loaders = [skill_loader(source) for source in sources]
        names = [client.name for client in mcps]
        for name in names:
            if name in self._servers or names.count(name) > 1:
                raise ToolError(f"an MCP server named {name!r} is already registered")
        self._servers.update({c.name: ServerEntry(c, group) for c in mcps})
        self._sources += [SkillEntry(loader, group) for loader in loaders]

    async def prepare(self) -> None:
        """Add the MCP tools and skills not added yet; a no-op once everything is added.

        Stateful clients that are not connected are connected (and closed by `aclose`).
        Servers and skill sources are handled concurrently; one that fails is recorded in
        `mcp_errors` / `skill_errors` and is not retried until `aclose()`.
        """
        if not self._servers and not self._sources:
            return  # no server or skill source: nothing to add
        if all(s.prepared for s in self._servers.values()) and all(s.loaded for s in self._sources):
            return  # the common case, every reply: no lock to take
        async with self._lock:
            servers = [server for server in self._servers.values() if not server.prepared]
            sources = [source for source in self._sources if not source.loaded]
            if not servers and not sources:
                return
            async with asyncio.TaskGroup() as group:
                listings = [group.create_task(server.open()) for server in servers]
                loads = [group.create_task(source.load()) for source in sources]
            for server, listing in zip(servers, listings, strict=True):
                await self._register_server(server, listing.result())
            for source, load in zip(sources, loads, strict=True):
                self._register_skills(source, load.result())

    async def _register_server(self, server: ServerEntry, listing: list[ToolBase] | str) -> None:
        server.prepared = True
        if not isinstance(listing, str):
            try:
                tools = [self._check(tool, set()) for tool in listing]
            except ToolError as exc:
                listing = failure(exc)
            else:
                for tool in tools:
                    self._add(tool, server.group)
                server.tool_names = [tool.name for tool in tools]
                return
        self.mcp_errors[server.client.name] = listing
        logger.warning("MCP server %r left out: %s", server.client.name, listing)
        await server.release()

    def _register_skills(self, source: SkillEntry, loaded: list[Skill] | str) -> None:
        source.loaded = True
        skills, problems = ([], [loaded]) if isinstance(loaded, str) else (loaded, [])
        for skill in skills:
            if skill.name in self._skills:
                other = self._skills[skill.name][0].path
                problems.append(f"skill {skill.name!r} is already provided by {other}")
            else:
                self._skills[skill.name] = (skill, source.group)
        if problems:
            self.skill_errors[source.label] = "; ".join(problems)
            logger.warning("skills of %s left out: %s", source.label, "; ".join(problems))
        self._refresh_viewer()

    def _refresh_viewer(self) -> None:
        # A local import: agent_core.skill.viewer imports the tool package, which imports this.
        from agent_core.skill.viewer import SkillViewer

        if not self._skills:
            return
        if self._tools.get(SkillViewer.name, self._viewer) is not self._viewer:
            self.skill_errors[SkillViewer.name] = "a tool named 'Skill' is already registered"
            return
        self._viewer = SkillViewer(self.skills)
        self._add(self._viewer, BASIC_GROUP)

    async def aclose(self) -> None:
        """Close the MCP clients `prepare()` connected and remove every server's tools.

        A later `prepare()` adds the servers again (skills stay loaded).
        """
        async with self._lock:
            for server in self._servers.values():
                for name in server.tool_names:
                    del self._tools[name], self._group_of[name]
                server.tool_names, server.prepared = [], False
                self.mcp_errors.pop(server.client.name, None)
            async with asyncio.TaskGroup() as group:
                for server in self._servers.values():
                    group.create_task(server.release())

    async def __aenter__(self) -> Toolkit:
        await self.prepare()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def skills(self) -> list[Skill]:
        """Every loaded skill, active group or not, in loading order."""
        return [skill for skill, _ in self._skills.values()]

    def skills_prompt(self, agent_state: AgentState | None = None) -> str:
        """The system-prompt section listing the skills of the basic and active groups.

        Args:
            agent_state: The state holding the activation; None means the toolkit's own.

        Returns:
            The section, or an empty string when no skill is listed.
        """
        if not self._skills:
            return ""
        exposed = {BASIC_GROUP, *self.active_groups(agent_state)}
        return skills_prompt_fragment([s for s, group in self._skills.values() if group in exposed])

    def _check(self, tool: ToolBase | Callable[..., Any], taken: set[str]) -> ToolBase:
        """Wrap `tool` if needed and check its name is valid and free (also of `taken`)."""
        if not isinstance(tool, ToolBase):
            if not callable(tool):
                raise ToolError(f"cannot register {type(tool).__name__!r} as a tool")
            tool = FunctionTool(tool)
        if not _NAME.match(tool.name):
            raise ToolError(
                f"invalid tool name {tool.name!r}: use letters, digits, '_' and '-' only"
            )
        if tool.name == RESET_TOOLS:
            raise ToolError(f"the tool name {RESET_TOOLS!r} is reserved for the meta tool")
        if tool.name in self._tools or tool.name in taken:
            raise ToolError(f"a tool named {tool.name!r} is already registered")
        taken.add(tool.name)
        return tool

    def _add(self, tool: ToolBase, group: str) -> None:
        self._tools[tool.name] = tool
        self._group_of[tool.name] = group

    def get(self, name: str) -> ToolBase | None:
        """Return the tool called `name` (active or not), or None."""
        return self._tools.get(name)

    @property
    def tools(self) -> list[ToolBase]:
        """Every registered tool, active or not, in registration order."""
        return list(self._tools.values())

    @property
    def tool_groups(self) -> list[ToolGroup]:
        """The extra tool groups (not the basic group), in the order they were added."""
        return list(self._groups.values())

    def active_groups(self, agent_state: AgentState | None = None) -> list[str]:
        """Names of the active extra groups, in the order they were added.

        Args:
            agent_state: The state holding the activation; None means the toolkit's own.
        """
        if not self._groups:
            return []
        activated = set(self._state(agent_state).tool_context.activated_groups)
        return [name for name in self._groups if name in activated]

    def schemas(self, agent_state: AgentState | None = None) -> list[ToolSchema]:
        """Return the schemas the model is shown: the basic and active groups' tools.

        Args:
            agent_state: The state holding the activation; None means the toolkit's own.
        """
        if not self._groups:  # every tool is in the basic group
            return [t.schema() for t in self._tools.values()]
        exposed = {BASIC_GROUP, *self.active_groups(agent_state)}
        return [t.schema() for t in self._tools.values() if self._group_of[t.name] in exposed]

    def _state(self, agent_state: AgentState | None) -> AgentState:
        return self._own_state if agent_state is None else agent_state

    async def call(
        self, tool_call: ToolCallBlock, agent_state: AgentState | None = None
    ) -> AsyncGenerator[ToolChunk, None]:
        """Run one tool call, streaming the tool's output.

        Args:
            tool_call: The model's call; `input` is its JSON-object arguments (empty means none).
            agent_state: The agent's state: injected into state-injected tools as
                `_agent_state`, and where group activation is read and written. None means the
                toolkit's own state.

        Yields:
            The tool's chunks. The last one, and only it, has `is_last=True` and state SUCCESS
            or ERROR.

        Raises:
            ToolError: When the tool is an external tool, which the runtime must not execute.
        """
        state = self._state(agent_state)
        tool = self._tools.get(tool_call.name)
        if tool is None:
            available = ", ".join(s.name for s in self.schemas(state)) or "(none)"
            yield _error(f"Tool '{tool_call.name}' not found. Available tools: {available}")
            return
        group = self._group_of[tool.name]
        if group != BASIC_GROUP and group not in self.active_groups(state):
            yield _error(
                f"Tool '{tool.name}' belongs to the inactive tool group '{group}'. Activate "
                f"the group with {RESET_TOOLS} before using it."
            )
            return
        if tool.is_external_tool:
            raise ToolError(f"tool {tool.name!r} is executed externally, not by the toolkit")
        try:
            arguments = json.loads(tool_call.input) if tool_call.input.strip() else {}
        except json.JSONDecodeError as exc:
            yield _error(f"Invalid JSON arguments for tool '{tool.name}': {exc}")
            return
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            yield _error(f"Arguments for tool '{tool.name}' must be a JSON object, got {kind}")
            return
        # The state is the runtime's to give, never the model's.
        arguments.pop(STATE_ARG, None)
        arguments.pop(CALL_ID_ARG, None)
        drop_null_optionals(tool.input_schema, arguments)
        problem = argument_errors(tool.name, tool.input_schema, arguments)
        if problem is not None:
            yield _error(problem)
            return
        if tool.is_state_injected:
            arguments[STATE_ARG] = state
        if tool.is_call_id_injected:
            arguments[CALL_ID_ARG] = tool_call.id
        stream = _run(tool, arguments)
        try:
            async with contextlib.aclosing(stream):
                async for chunk in stream:
                    if not isinstance(chunk, ToolChunk):
                        kind = type(chunk).__name__
                        yield _error(f"Tool '{tool.name}' produced {kind}, not a ToolChunk")
                        return
                    if chunk.is_final:
                        yield _final(chunk)
                        return
                    yield chunk
        except Exception as exc:
            yield _error(f"{type(exc).__name__}: {exc}")
            return
        yield ToolChunk(state=ToolResultState.SUCCESS, is_last=True)

    def __repr__(self) -> str:
        groups = f", tool_groups={list(self._groups)!r}" if self._groups else ""
        return f"Toolkit(tools={list(self._tools)!r}{groups})"


async def _run(tool: ToolBase, arguments: dict[str, Any]) -> AsyncGenerator[object, None]:
    """Iterate a tool's output, closing its stream when the consumer stops early."""
    result: object = tool(**arguments)
    if inspect.isawaitable(result):
        # A tool written as `async def __call__(...) -> ToolChunk` returns its only chunk.
        result = await result
        yield _final(result) if isinstance(result, ToolChunk) else result
    elif isinstance(result, AsyncGenerator):
        async with contextlib.aclosing(result):
            async for chunk in result:
                yield chunk
    elif isinstance(result, AsyncIterator):
        async for chunk in result:
            yield chunk
    else:
        yield result
