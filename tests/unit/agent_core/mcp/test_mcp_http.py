"""MCPClient against the demo MCP server over HTTP: stateful, stateless, SSE, restarts."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from agent_core.errors import MCPError
from agent_core.mcp import HttpMCPConfig, MCPClient
from agent_core.message import ToolResultState
from tests.support.mcp_servers import DemoHttpServer, collect, serve_demo_http, text_of

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def http_server() -> Iterator[DemoHttpServer]:
    with serve_demo_http() as server:
        yield server


@pytest.fixture(scope="module")
def stateless_server() -> Iterator[DemoHttpServer]:
    with serve_demo_http(stateless=True) as server:
        yield server


async def test_stateful_session_lists_calls_and_streams_progress(
    http_server: DemoHttpServer,
) -> None:
    config = HttpMCPConfig(url=http_server.url, headers={"X-Trace": "1"})
    async with MCPClient("web", True, config, timeout=10) as client:
        assert client.is_connected
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert "mcp__web__echo" in tools
        assert tools["mcp__web__peek"].is_read_only

        chunks = await collect(tools["mcp__web__slow"](steps=2, delay=0.01))
        assert [c.metadata["progress"]["progress"] for c in chunks[:-1]] == [1.0, 2.0]
        assert text_of(chunks[-1]) == "done after 2 steps"

        (failed,) = await collect(tools["mcp__web__fail"](message="nope"))
        assert failed.state is ToolResultState.ERROR
    assert not client.is_connected


@pytest.mark.parametrize("server_fixture", ["stateless_server", "http_server"])
async def test_stateless_client_opens_a_session_per_call(
    server_fixture: str, request: pytest.FixtureRequest
) -> None:
    server: DemoHttpServer = request.getfixturevalue(server_fixture)
    client = MCPClient("search", False, HttpMCPConfig(url=server.url), timeout=10)
    await client.connect()  # a no-op without a session to keep
    assert not client.is_connected

    tools = {tool.mcp_tool.name: tool for tool in await client.list_tools()}
    (added,) = await collect(tools["add"](a=20, b=22))
    assert text_of(added) == "42"
    chunks = await collect(tools["slow"](steps=2, delay=0.01))
    assert len(chunks) == 3
    assert chunks[-1].state is ToolResultState.SUCCESS


async def test_enable_and_disable_lists_filter_the_tools(stateless_server: DemoHttpServer) -> None:
    config = HttpMCPConfig(url=stateless_server.url)
    only = MCPClient("f", False, config, enable_tools=["echo", "add", "missing"])
    assert [t.name for t in await only.list_tools()] == ["mcp__f__echo", "mcp__f__add"]

    without = MCPClient("f", False, config, disable_tools=["crash", "pid"])
    names = {t.mcp_tool.name for t in await without.list_tools()}
    assert names == {"echo", "add", "slow", "fail", "peek", "image", "note"}

    both = MCPClient("f", False, config, enable_tools=["echo", "add"], disable_tools=["add"])
    assert [t.name for t in await both.list_tools()] == ["mcp__f__echo"]


async def test_sse_transport() -> None:
    with serve_demo_http("sse") as server:
        config = HttpMCPConfig(url=server.url, transport="sse")
        async with MCPClient("legacy", True, config, timeout=10) as client:
            (echoed,) = await collect(client.call_tool("echo", {"text": "over sse"}))
            assert text_of(echoed) == "over sse"


async def test_a_stopped_server_gives_errors_and_a_restarted_one_is_reconnected() -> None:
    with serve_demo_http() as server:
        port = urlsplit(server.url).port
        assert port is not None
        async with MCPClient("flaky", True, HttpMCPConfig(url=server.url), timeout=10) as client:
            (before,) = await collect(client.call_tool("echo", {"text": "up"}))
            assert text_of(before) == "up"
            server.process.kill()
            server.process.wait()

            (down,) = await collect(client.call_tool("echo", {"text": "down"}))
            assert down.state is ToolResultState.ERROR
            assert "flaky" in text_of(down)
            (still_down,) = await collect(client.call_tool("echo", {"text": "down"}))
            assert "cannot connect to MCP server 'flaky'" in text_of(still_down)

            with serve_demo_http(port=port):
                (after,) = await collect(client.call_tool("echo", {"text": "up again"}))
                assert after.state is ToolResultState.SUCCESS
                assert text_of(after) == "up again"


async def test_unreachable_servers_raise_on_connect_and_list() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    stateful = MCPClient("gone", True, HttpMCPConfig(url=url), timeout=5)
    with pytest.raises(MCPError, match="cannot connect to MCP server 'gone'"):
        await stateful.connect()
    stateless = MCPClient("gone", False, HttpMCPConfig(url=url), timeout=5)
    with pytest.raises(MCPError, match="cannot list the tools of MCP server 'gone'"):
        await stateless.list_tools()
    (chunk,) = await collect(stateless.call_tool("echo", {"text": "x"}))
    assert chunk.state is ToolResultState.ERROR
