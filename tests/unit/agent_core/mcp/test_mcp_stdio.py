"""MCPClient against the demo MCP server (built on the `mcp` SDK) over stdio."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from agent_core.errors import MCPError
from agent_core.mcp import MCPClient, MCPTool, StdioMCPConfig
from agent_core.message import DataBlock, ToolCallBlock, ToolResultState
from agent_core.tool import Toolkit
from tests.support.mcp_servers import collect, demo_stdio_config, text_of

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def demo() -> AsyncIterator[MCPClient]:
    async with MCPClient("demo", True, demo_stdio_config(), timeout=10) as client:
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools(demo: MCPClient) -> dict[str, MCPTool]:
    return {tool.mcp_tool.name: tool for tool in await demo.list_tools()}


async def test_tools_are_namespaced_with_the_servers_schemas(tools: dict[str, MCPTool]) -> None:
    assert tools["echo"].name == "mcp__demo__echo"
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["add"].description == "Add two integers."
    assert all(tool.is_mcp and tool.mcp_name == "demo" for tool in tools.values())
    assert tools["peek"].is_read_only
    assert tools["peek"].is_concurrency_safe
    assert not tools["echo"].is_read_only


async def test_calls_return_text_image_and_resource_content(tools: dict[str, MCPTool]) -> None:
    (added,) = await collect(tools["add"](a=2, b=3))
    assert added.is_last
    assert added.state is ToolResultState.SUCCESS
    assert text_of(added) == "5"
    assert added.metadata["structured_content"] == {"result": 5}

    (picture,) = await collect(tools["image"]())
    (block,) = picture.content
    assert isinstance(block, DataBlock)
    assert block.source.media_type == "image/png"

    (note,) = await collect(tools["note"]())
    assert text_of(note) == "remember"


async def test_a_raising_tool_gives_an_error_result(tools: dict[str, MCPTool]) -> None:
    (chunk,) = await collect(tools["fail"](message="boom"))
    assert chunk.is_last
    assert chunk.state is ToolResultState.ERROR
    assert "boom" in text_of(chunk)


async def test_progress_notifications_stream_before_the_result(demo: MCPClient) -> None:
    chunks = await collect(demo.call_tool("slow", {"steps": 3, "delay": 0.01}))
    progress = [c.metadata["progress"] for c in chunks[:-1]]
    assert progress == [
        {"progress": float(i), "total": 3.0, "message": f"step {i}/3"} for i in (1, 2, 3)
    ]
    assert all(c.state is ToolResultState.RUNNING and not c.content for c in chunks[:-1])
    assert text_of(chunks[-1]) == "done after 3 steps"


async def test_a_call_over_its_timeout_errors_and_the_session_survives(demo: MCPClient) -> None:
    started = time.monotonic()
    chunks = await collect(demo.call_tool("slow", {"steps": 50, "delay": 0.1}, timeout=0.3))
    assert time.monotonic() - started < 2
    assert chunks[-1].state is ToolResultState.ERROR
    assert "timed out after 0.3 s" in text_of(chunks[-1])

    (echoed,) = await collect(demo.call_tool("echo", {"text": "still here"}))
    assert text_of(echoed) == "still here"


async def test_unknown_tools_and_bad_arguments_are_error_results(demo: MCPClient) -> None:
    (unknown,) = await collect(demo.call_tool("nope", {}))
    (bad,) = await collect(demo.call_tool("add", {"a": "x"}))
    assert unknown.state is ToolResultState.ERROR
    assert "nope" in text_of(unknown)
    assert bad.state is ToolResultState.ERROR


async def test_toolkit_dispatches_to_mcp_tools(tools: dict[str, MCPTool]) -> None:
    toolkit = Toolkit(list(tools.values()))
    call = ToolCallBlock(id="c1", name="mcp__demo__echo", input='{"text": "via toolkit"}')
    chunks = [chunk async for chunk in toolkit.call(call)]
    assert chunks[-1].state is ToolResultState.SUCCESS
    assert text_of(chunks[-1]) == "via toolkit"


async def test_concurrent_calls_share_the_session(demo: MCPClient) -> None:
    results = await asyncio.gather(
        *(collect(demo.call_tool("add", {"a": i, "b": i})) for i in range(5))
    )
    assert [text_of(r[-1]) for r in results] == [str(2 * i) for i in range(5)]


async def test_a_killed_server_gives_an_error_then_the_client_reconnects() -> None:
    async with MCPClient("victim", True, demo_stdio_config(), timeout=10) as client:
        (first,) = await collect(client.call_tool("pid", {}))
        os.kill(int(text_of(first)), signal.SIGKILL)

        (lost,) = await collect(client.call_tool("echo", {"text": "anyone?"}))
        assert lost.state is ToolResultState.ERROR
        assert "victim" in text_of(lost)
        assert not client.is_connected

        (second,) = await collect(client.call_tool("pid", {}))
        assert second.state is ToolResultState.SUCCESS
        assert text_of(second) != text_of(first)

        (crashed,) = await collect(client.call_tool("crash", {}))
        assert crashed.state is ToolResultState.ERROR
        (back,) = await collect(client.call_tool("echo", {"text": "back"}))
        assert text_of(back) == "back"


async def test_calls_on_an_unconnected_or_closed_client_are_errors() -> None:
    client = MCPClient("idle", True, demo_stdio_config())
    (chunk,) = await collect(client.call_tool("echo", {"text": "x"}))
    assert chunk.state is ToolResultState.ERROR
    assert "not connected" in text_of(chunk)
    with pytest.raises(MCPError, match="not connected"):
        await client.list_tools()


async def test_a_server_that_cannot_start_fails_connect() -> None:
    client = MCPClient("ghost", True, StdioMCPConfig(command="/nonexistent/mcp-server"))
    with pytest.raises(MCPError, match="cannot connect to MCP server 'ghost'"):
        await client.connect()
    assert not client.is_connected


async def test_a_server_that_never_answers_times_out_connect() -> None:
    silent = StdioMCPConfig(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"])
    client = MCPClient("mute", True, silent, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(MCPError, match=r"no handshake within 0\.5 s"):
        await client.connect()
    assert time.monotonic() - started < 5
