"""MCP client configuration and result conversion (no server needed)."""

from __future__ import annotations

import pickle

import pytest
from mcp import types

from agent_core.errors import MCPError
from agent_core.mcp import (
    HttpMCPConfig,
    MCPClient,
    MCPClientConfig,
    MCPTool,
    StdioMCPConfig,
    mcp_tool_name,
)
from agent_core.mcp.tool import result_chunk
from agent_core.message import Base64Source, DataBlock, TextBlock, ToolResultState


def test_configs_round_trip_through_json_with_their_type() -> None:
    config = MCPClientConfig(
        name="search",
        is_stateful=False,
        mcp_config=HttpMCPConfig(url="http://127.0.0.1:1/mcp", headers={"X": "1"}),
        enable_tools=["web_search"],
    )
    data = config.model_dump(mode="json")
    assert data["mcp_config"]["type"] == "http"
    assert MCPClientConfig.model_validate(data) == config

    stdio = MCPClientConfig.model_validate(
        {"name": "fs", "is_stateful": True, "mcp_config": {"type": "stdio", "command": "x"}}
    )
    assert isinstance(stdio.mcp_config, StdioMCPConfig)


def test_client_rebuilds_from_its_config() -> None:
    client = MCPClient(
        name="weather",
        is_stateful=True,
        mcp_config=HttpMCPConfig(url="http://127.0.0.1:1/mcp"),
        disable_tools=["admin"],
        timeout=5,
    )
    again = MCPClient.from_config(client.config)
    assert again.config == client.config
    assert (again.name, again.is_stateful, again.timeout) == ("weather", True, 5)


def test_stateless_stdio_is_rejected() -> None:
    with pytest.raises(MCPError, match="stdio server needs is_stateful=True"):
        MCPClient(name="fs", is_stateful=False, mcp_config=StdioMCPConfig(command="server"))


@pytest.mark.parametrize("name", ["", "has space", "dots.not.allowed"])
def test_invalid_server_names_are_rejected(name: str) -> None:
    with pytest.raises(MCPError, match="invalid configuration"):
        MCPClient(name=name, is_stateful=True, mcp_config=StdioMCPConfig(command="server"))


def test_mcp_error_pickles() -> None:
    error = pickle.loads(pickle.dumps(MCPError("cannot connect")))
    assert isinstance(error, MCPError)
    assert str(error) == "cannot connect"


def test_tool_names_are_namespaced_and_provider_safe() -> None:
    assert mcp_tool_name("git", "git_status") == "mcp__git__git_status"
    assert mcp_tool_name("gh", "issues.create/v2") == "mcp__gh__issues_create_v2"


def test_tool_adapter_takes_schema_and_read_only_hint_from_the_server() -> None:
    client = MCPClient(name="demo", is_stateful=True, mcp_config=StdioMCPConfig(command="x"))
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    listed = types.Tool(
        name="find",
        description="Find things.",
        input_schema=schema,
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    tool = MCPTool(client, listed)
    assert (tool.name, tool.description, tool.input_schema) == (
        "mcp__demo__find",
        "Find things.",
        schema,
    )
    assert tool.is_mcp
    assert tool.mcp_name == "demo"
    assert tool.is_read_only
    assert tool.is_concurrency_safe

    plain = MCPTool(client, types.Tool(name="write", input_schema={"type": "object"}))
    assert not plain.is_read_only
    assert not plain.is_concurrency_safe
    assert plain.description == "write"


def test_result_content_becomes_text_and_data_blocks() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="aW1n", mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="memo://a", text="embedded"),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///b.pdf", blob="YmxvYg==", mime_type="application/pdf"
                ),
            ),
            types.ResourceLink(type="resource_link", name="readme", uri="file:///README.md"),
        ]
    )
    chunk = result_chunk(result)
    assert chunk.is_last
    assert chunk.state is ToolResultState.SUCCESS
    text, image, embedded, blob, link = chunk.content
    assert isinstance(text, TextBlock)
    assert text.text == "hello"
    assert isinstance(image, DataBlock)
    assert image.source == Base64Source(data="aW1n", media_type="image/png")
    assert isinstance(embedded, TextBlock)
    assert embedded.text == "embedded"
    assert isinstance(blob, DataBlock)
    assert blob.name == "file:///b.pdf"
    assert blob.source.media_type == "application/pdf"
    assert isinstance(link, TextBlock)
    assert "file:///README.md" in link.text


def test_error_results_and_structured_only_results() -> None:
    failed = result_chunk(
        types.CallToolResult(content=[types.TextContent(type="text", text="bad")], is_error=True)
    )
    assert failed.state is ToolResultState.ERROR
    assert failed.is_last

    structured = result_chunk(types.CallToolResult(content=[], structured_content={"n": 3}))
    assert structured.metadata["structured_content"] == {"n": 3}
    assert [b.text for b in structured.content if isinstance(b, TextBlock)] == ['{"n": 3}']


def test_package_exports_resolve() -> None:
    import agent_core.mcp as package

    assert sorted(package.__all__) == package.__all__
    assert all(getattr(package, name) is not None for name in package.__all__)
