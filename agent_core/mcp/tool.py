"""MCPTool: one tool of an MCP server as a `ToolBase`, and the conversion of MCP results."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncGenerator
from typing import Any, Protocol

from mcp import types

from agent_core.message import Base64Source, DataBlock, DataOrText, TextBlock, ToolResultState
from agent_core.tool.base import ToolBase, ToolChunk

# Characters a provider accepts in a function name; MCP also allows '.' (and servers send more).
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """The name an MCP tool is exposed under: `mcp__{server}__{tool}`, made provider-safe."""
    return f"mcp__{server}__{_UNSAFE.sub('_', tool)}"


def _resource_block(
    resource: types.TextResourceContents | types.BlobResourceContents,
) -> DataOrText:
    if isinstance(resource, types.TextResourceContents):
        return TextBlock(text=resource.text)
    media_type = resource.mime_type or "application/octet-stream"
    return DataBlock(
        source=Base64Source(data=resource.blob, media_type=media_type), name=resource.uri
    )


def _content_block(item: types.ContentBlock) -> DataOrText:
    match item:
        case types.TextContent():
            return TextBlock(text=item.text)
        case types.ImageContent() | types.AudioContent():
            return DataBlock(source=Base64Source(data=item.data, media_type=item.mime_type))
        case types.EmbeddedResource():
            return _resource_block(item.resource)
        case types.ResourceLink():
            about = f": {item.description}" if item.description else ""
            return TextBlock(text=f"[resource {item.name} <{item.uri}>{about}]")


def result_chunk(result: types.CallToolResult) -> ToolChunk:
    """Turn a tool result into the final chunk of a call (ERROR when the server says so).

    Text becomes text blocks, images and audio base64 data blocks, embedded text resources text
    and embedded binary resources data blocks. A result with only structured content shows it as
    JSON text; structured content always travels in the chunk's metadata as well.
    """
    content = [_content_block(item) for item in result.content]
    metadata: dict[str, Any] = {}
    if result.structured_content is not None:
        metadata["structured_content"] = result.structured_content
        if not content:
            content = [TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False))]
    state = ToolResultState.ERROR if result.is_error else ToolResultState.SUCCESS
    return ToolChunk(content=content, state=state, metadata=metadata, is_last=True)


def progress_chunk(progress: float, total: float | None, message: str | None) -> ToolChunk:
    """A RUNNING chunk reporting server progress; it adds nothing to the model-visible output."""
    return ToolChunk(
        metadata={"progress": {"progress": progress, "total": total, "message": message}}
    )


def error_chunk(text: str) -> ToolChunk:
    """The final chunk of a call that failed before the server produced a result."""
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.ERROR, is_last=True)


class MCPToolCaller(Protocol):
    """What an `MCPTool` calls through: an `MCPClient`, or a proxy to a remote workspace's."""

    @property
    def name(self) -> str:
        """The MCP server's name."""
        ...

    def call_tool(
        self, tool_name: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        """Call one of the server's tools, streaming progress and then the final result."""
        ...


class MCPTool(ToolBase):
    """A tool of an MCP server, called through the `MCPClient` that listed it.

    It is exposed as `mcp__{server}__{tool}` with the server's description and input schema.
    A `readOnlyHint` annotation makes it read-only and safe to run concurrently. Calls stream
    the server's progress notifications as RUNNING chunks (in `metadata["progress"]`) and end
    with the converted result; an unreachable server, a protocol error or a timeout ends the
    stream with an ERROR chunk instead of raising.
    """

    is_mcp = True

    def __init__(self, client: MCPToolCaller, tool: types.Tool) -> None:
        """Wrap `tool`, as listed by `client`.

        Args:
            client: The client that listed the tool and will run its calls.
            tool: The tool description from the server's `tools/list`.
        """
        self.client = client
        self.mcp_tool = tool
        self.mcp_name = client.name
        self.name = mcp_tool_name(client.name, tool.name)
        self.description = tool.description or tool.title or tool.name
        self.input_schema = tool.input_schema
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        self.is_read_only = read_only
        self.is_concurrency_safe = read_only

    async def __call__(self, **kwargs: Any) -> AsyncGenerator[ToolChunk, None]:
        """Call the server's tool with `kwargs`, streaming progress and then the result."""
        async with contextlib.aclosing(self.client.call_tool(self.mcp_tool.name, kwargs)) as stream:
            async for chunk in stream:
                yield chunk
