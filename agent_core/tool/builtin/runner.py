"""`WorkspaceToolRunner`: the in-process `ToolExecutor`, run where the workspace's files are.

It is what a sandboxed tool process, a container's tool host or a workspace actor runs to serve
`ToolInvocation`s: it binds the named built-in tool to the invocation's directory, runs it on
a state holding only the caller's tool state, and streams the chunks and the new tool state.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

from agent_core.state import AgentState
from agent_core.tool.builtin._base import BuiltinTool, done
from agent_core.tool.builtin.bash import Bash
from agent_core.tool.builtin.edit import Edit
from agent_core.tool.builtin.glob import Glob
from agent_core.tool.builtin.grep import Grep
from agent_core.tool.builtin.read import Read
from agent_core.tool.builtin.write import Write
from agent_core.tool.execution import ToolInvocation, ToolOutput
from agent_core.tool.function import STATE_ARG

WORKSPACE_TOOL_NAMES = ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
"""The built-in tools bound to a workspace directory, in the order they are offered."""


def workspace_tools(
    cwd: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    limits: Mapping[int, int] | None = None,
    tethered: bool = False,
) -> list[BuiltinTool[Any]]:
    """Bash, Read, Write, Edit, Glob and Grep bound to `cwd`.

    Args:
        cwd: The directory the tools start in.
        env: The shell's whole environment; None inherits this process's.
        limits: Resource limits of each shell command (see `Bash`).
        tethered: Shell commands die with this process (see `Bash`).
    """
    tools: list[BuiltinTool[Any]] = [
        Bash(cwd, env=env, limits=limits, tethered=tethered),
        Read(cwd),
        Write(cwd),
        Edit(cwd),
        Glob(cwd),
        Grep(cwd),
    ]
    return tools


class WorkspaceToolRunner:
    """Runs `ToolInvocation`s of the workspace tools in this process.

    Tools are created per directory on first use and reused (they hold no per-call state).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        limits: Mapping[int, int] | None = None,
        tethered: bool = False,
    ) -> None:
        """Create the runner.

        Args:
            env: The whole environment of every command the shell tool starts; None inherits
                this process's (library use only: a service passes a scrubbed one).
            limits: Resource limits of each shell command (see `Bash`).
            tethered: Shell commands die with this process (see `Bash`).
        """
        self.env = None if env is None else dict(env)
        self.limits = dict(limits or {})
        self.tethered = tethered
        self._tools: dict[str, dict[str, BuiltinTool[Any]]] = {}

    def _tool(self, name: str, cwd: str) -> BuiltinTool[Any] | None:
        tools = self._tools.get(cwd)
        if tools is None:
            tools = self._tools[cwd] = {
                t.name: t
                for t in workspace_tools(
                    cwd, env=self.env, limits=self.limits, tethered=self.tethered
                )
            }
        return tools.get(name)

    async def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        """Run the call here; closing the stream early stops it (and kills its processes)."""
        tool = self._tool(invocation.tool, invocation.cwd)
        if tool is None:
            names = ", ".join(WORKSPACE_TOOL_NAMES)
            chunk = done(
                f"Unknown workspace tool {invocation.tool!r} (known: {names}).", error=True
            )
            yield ToolOutput(chunk=chunk)
            return
        arguments = dict(invocation.arguments)
        state: AgentState | None = None
        if invocation.tool_context is not None:
            state = AgentState(tool_context=invocation.tool_context)
            arguments[STATE_ARG] = state
        stream = tool(**arguments)
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                if chunk.is_final:
                    # The new tool state rides on the final frame: a caller stops reading there.
                    context = None if state is None else state.tool_context
                    yield ToolOutput(chunk=chunk, tool_context=context)
                    return
                yield ToolOutput(chunk=chunk)
        if state is not None:
            yield ToolOutput(tool_context=state.tool_context)
