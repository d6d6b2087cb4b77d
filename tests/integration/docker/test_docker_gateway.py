"""MCP servers of a DockerWorkspace run inside its container, behind its MCP gateway."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from agent_core.errors import MCPError
from agent_core.message import ToolCallBlock, ToolResultState
from agent_core.state import AgentState
from agent_core.tool import Toolkit
from tests.support.tool_calls import Agent, text
from tests.unit.workspaces._helpers import broken_mcp, demo_mcp, time_mcp
from workspaces.docker import DockerWorkspace
from workspaces.errors import MCPUnavailable
from workspaces.gateway import GatewayConnection, GatewayMCPClient, GatewayMCPTool

pytestmark = [pytest.mark.docker, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docker-mcp") / "ws"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def workspace(
    workdir: Path, docker_options: dict[str, Any]
) -> AsyncIterator[DockerWorkspace]:
    seeds = [demo_mcp(), time_mcp()]
    async with DockerWorkspace(workdir, "mcp", default_mcps=seeds, **docker_options) as opened:
        yield opened


async def call(toolkit: Toolkit, name: str, **arguments: Any) -> tuple[bool, str, list[Any]]:
    block = ToolCallBlock(id="c1", name=name, input=json.dumps(arguments))
    chunks = [chunk async for chunk in toolkit.call(block, AgentState())]
    return chunks[-1].state is ToolResultState.SUCCESS, text(chunks), chunks


async def test_servers_are_gateway_clients(workspace: DockerWorkspace) -> None:
    clients = await workspace.list_mcps()
    assert [c.name for c in clients] == ["demo", "time"]
    assert all(isinstance(c, GatewayMCPClient) and c.is_connected for c in clients)
    statuses = {s.config.name: s for s in await workspace.mcp_statuses()}
    assert statuses["demo"].is_healthy
    assert "echo" in {t.name for t in statuses["demo"].tools}
    assert "get_current_time" in {t.name for t in statuses["time"].tools}
    assert workspace.mcp_errors == {}


async def test_demo_server_end_to_end_inside_the_container(workspace: DockerWorkspace) -> None:
    tools, _ = await workspace.toolset()
    mcp_tools = [t for t in tools if isinstance(t, GatewayMCPTool)]
    assert {"mcp__demo__echo", "mcp__demo__slow", "mcp__time__get_current_time"} <= {
        t.name for t in mcp_tools
    }
    async with Toolkit(tools) as toolkit:
        ok, out, _ = await call(toolkit, "mcp__demo__echo", text="through the gateway")
        assert (ok, out) == (True, "through the gateway")
        ok, out, chunks = await call(toolkit, "mcp__demo__slow", steps=3, delay=0.05)
        assert ok, out
        assert [c.metadata["progress"]["progress"] for c in chunks[:-1]] == [1, 2, 3]
        ok, out, _ = await call(toolkit, "mcp__demo__fail", message="nope")
        assert not ok
        assert "nope" in out
        ok, pid, _ = await call(toolkit, "mcp__demo__pid")
        assert ok, pid
    agent = Agent(workspace.builtin_tools())
    ok, cmdline = await agent("Bash", command=f"tr '\\0' ' ' < /proc/{pid}/cmdline")
    assert ok, cmdline
    assert "demo.py" in cmdline


async def test_third_party_time_server(workspace: DockerWorkspace) -> None:
    async with Toolkit(await workspace.all_tools()) as toolkit:
        ok, out, _ = await call(toolkit, "mcp__time__get_current_time", timezone="UTC")
    assert ok, out
    assert json.loads(out)["timezone"] == "UTC"


async def test_add_and_remove_through_the_gateway(workspace: DockerWorkspace) -> None:
    client = await workspace.add_mcp(demo_mcp("extra"))
    assert isinstance(client, GatewayMCPClient)
    assert "extra" in (workspace.host_workdir / ".mcp").read_text()
    response = await client.gateway.request("GET", "/mcps")
    assert "extra" in {entry["config"]["name"] for entry in response.json()}
    await workspace.remove_mcp("extra")
    response = await client.gateway.request("GET", "/mcps")
    assert "extra" not in {entry["config"]["name"] for entry in response.json()}
    with pytest.raises(MCPUnavailable):
        await workspace.add_mcp(broken_mcp())
    assert "broken" not in (workspace.host_workdir / ".mcp").read_text()


async def test_a_wrong_or_missing_token_is_rejected(workspace: DockerWorkspace) -> None:
    (client, *_) = await workspace.list_mcps()
    assert isinstance(client, GatewayMCPClient)
    socket = client.gateway.socket_path
    intruder = GatewayConnection(socket, "wrong")
    try:
        assert await intruder.health()  # liveness is public
        with pytest.raises(MCPError, match="HTTP 401"):
            await intruder.request("GET", "/mcps")
        with pytest.raises(MCPError, match="HTTP 401"):
            await intruder.request("POST", "/mcps/demo/tools/echo", body={"arguments": {}})
    finally:
        await intruder.aclose()
    transport = httpx.AsyncHTTPTransport(uds=str(socket))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as anonymous:
        response = await anonymous.delete("/mcps/demo")
    assert response.status_code == 401
    assert [c.name for c in await workspace.list_mcps()] == ["demo", "time"]


async def test_mcps_come_back_after_a_restart(
    workspace: DockerWorkspace, workdir: Path, docker_options: dict[str, Any]
) -> None:
    old = (await workspace.list_mcps())[0]
    assert isinstance(old, GatewayMCPClient)
    async with DockerWorkspace(workdir, "mcp-again", **docker_options) as again:
        clients = await again.list_mcps()
        assert [c.name for c in clients] == ["demo", "time"]
        fresh = clients[0]
        assert isinstance(fresh, GatewayMCPClient)
        assert fresh.gateway.socket_path != old.gateway.socket_path
        tools = {t.mcp_tool.name: t for t in await fresh.list_tools()}
        chunks = [c async for c in tools["add"](a=2, b=3)]
        assert text(chunks) == "5"
