"""The MCP gateway app run as its own process on a unix socket, driven by GatewayMCPClient."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from agent_core.errors import MCPError
from agent_core.mcp import MCPClientConfig
from agent_core.message import ToolResultState
from tests.support.mcp_servers import demo_stdio_config
from tests.support.tool_calls import eventually, text
from tests.unit.workspaces._helpers import broken_mcp, demo_mcp
from workspaces.gateway import GatewayConnection, GatewayMCPClient

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

REPO = Path(__file__).resolve().parents[3]
TOKEN = "test-token"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[GatewayConnection]:
    socket = tmp_path_factory.mktemp("gw") / "gateway.sock"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "workspaces.gateway.app",
        "--socket",
        str(socket),
        stdin=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert process.stdin is not None
    process.stdin.write(TOKEN.encode() + b"\n")
    connection = GatewayConnection(socket, TOKEN)
    try:
        assert await eventually(connection.health, within=60)
        yield connection
    finally:
        await connection.aclose()
        process.stdin.close()  # the gateway exits when its stdin ends
        async with asyncio.timeout(30):
            assert await process.wait() == 0


@pytest_asyncio.fixture(loop_scope="module")
async def demo(gateway: GatewayConnection) -> AsyncIterator[GatewayMCPClient]:
    client = GatewayMCPClient(demo_mcp(), gateway)
    await client.connect()
    yield client
    await client.close()


async def test_listing_and_calls_match_a_local_client(demo: GatewayMCPClient) -> None:
    assert demo.is_connected
    tools = {tool.mcp_tool.name: tool for tool in await demo.list_tools()}
    assert tools["echo"].name == "mcp__demo__echo"
    assert tools["peek"].is_read_only
    chunks = [chunk async for chunk in tools["slow"](steps=2, delay=0.01)]
    assert [c.metadata["progress"]["progress"] for c in chunks[:-1]] == [1, 2]
    assert text(chunks[-1:]) == "done after 2 steps"
    chunks = [chunk async for chunk in demo.call_tool("missing", {})]
    assert chunks[-1].state is ToolResultState.ERROR


async def test_an_interrupted_call_is_cancelled_upstream(demo: GatewayMCPClient) -> None:
    stream = demo.call_tool("slow", {"steps": 100, "delay": 0.2})
    async with contextlib.aclosing(stream):
        first = await anext(stream)
    assert first.metadata["progress"]["progress"] == 1
    chunks = [chunk async for chunk in demo.call_tool("echo", {"text": "still fine"})]
    assert text(chunks) == "still fine"


async def test_registration_errors_are_clear(gateway: GatewayConnection) -> None:
    with pytest.raises(MCPError, match=r"cannot connect to MCP server 'broken'.*HTTP 502"):
        await GatewayMCPClient(broken_mcp(), gateway).connect()
    other = GatewayMCPClient(demo_mcp("demo-2"), gateway)
    await other.connect()
    await other.connect()  # already registered: nothing to do
    with pytest.raises(MCPError, match="HTTP 409"):
        await GatewayMCPClient(
            demo_mcp("demo-2").model_copy(update={"timeout": 5}), gateway
        ).connect()
    await other.close()
    with pytest.raises(MCPError, match="HTTP 422"):
        await gateway.request("POST", "/mcps", body={"name": "bad name!", "is_stateful": True})
    with pytest.raises(MCPError, match="HTTP 404: MCP server 'nobody' is not registered"):
        await gateway.request("GET", "/mcps/nobody/tools")


async def test_a_stateful_client_must_connect_first(gateway: GatewayConnection) -> None:
    client = GatewayMCPClient(
        MCPClientConfig(name="idle", is_stateful=True, mcp_config=demo_stdio_config()), gateway
    )
    with pytest.raises(MCPError, match="not connected"):
        await client.list_tools()
    chunks = [chunk async for chunk in client.call_tool("echo", {"text": "x"})]
    assert chunks[-1].state is ToolResultState.ERROR
    assert "not connected" in text(chunks)
