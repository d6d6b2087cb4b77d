"""Toolkit: the registry of an agent's tools, and the one place tool calls are dispatched."""

from __future__ import annotations

import contextlib
import inspect
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.model.base import ToolSchema
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import FunctionTool

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

    Tools keep their registration order. Every stream returned by `call` ends with exactly one
    chunk that has `is_last=True` and a final state, whatever the tool did: errors the model
    should see (unknown tool, bad arguments, a failing tool) arrive as that final ERROR chunk.
    """

    def __init__(self, tools: Sequence[ToolBase | Callable[..., Any]] | None = None) -> None:
        """Create a toolkit holding `tools`.

        Args:
            tools: Tools to register; plain callables are wrapped in `FunctionTool`.

        Raises:
            ToolError: When two tools share a name or a tool is invalid.
        """
        # Registered tools by name. Tool groups, when added, decide which of these are exposed;
        # dispatch stays keyed by name.
        self._tools: dict[str, ToolBase] = {}
        for tool in tools or ():
            self.register(tool)

    def register(self, tool: ToolBase | Callable[..., Any]) -> ToolBase:
        """Add a tool.

        Args:
            tool: A `ToolBase`, or a plain callable to wrap in `FunctionTool`.

        Returns:
            The registered tool (the wrapper, for a callable).

        Raises:
            ToolError: When the name is taken, is not a valid tool name, or `tool` is neither a
                tool nor callable.
        """
        if not isinstance(tool, ToolBase):
            if not callable(tool):
                raise ToolError(f"cannot register {type(tool).__name__!r} as a tool")
            tool = FunctionTool(tool)
        if not _NAME.match(tool.name):
            raise ToolError(
                f"invalid tool name {tool.name!r}: use letters, digits, '_' and '-' only"
            )
        if tool.name in self._tools:
            raise ToolError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> ToolBase | None:
        """Return the tool called `name`, or None."""
        return self._tools.get(name)

    @property
    def tools(self) -> list[ToolBase]:
        """The registered tools, in registration order."""
        return list(self._tools.values())

    def schemas(self) -> list[ToolSchema]:
        """Return the schemas the model is shown, in registration order."""
        return [tool.schema() for tool in self._tools.values()]

    async def call(self, tool_call: ToolCallBlock) -> AsyncGenerator[ToolChunk, None]:
        """Run one tool call, streaming the tool's output.

        Args:
            tool_call: The model's call; `input` is its JSON-object arguments (empty means none).

        Yields:
            The tool's chunks. The last one, and only it, has `is_last=True` and state SUCCESS
            or ERROR.

        Raises:
            ToolError: When the tool is an external tool, which the runtime must not execute.
        """
        tool = self._tools.get(tool_call.name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            yield _error(f"Tool '{tool_call.name}' not found. Available tools: {available}")
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
        return f"Toolkit(tools={list(self._tools)!r})"


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
