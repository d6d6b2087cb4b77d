"""MCPClient against third-party MCP servers from PyPI (mcp-server-time, mcp-server-git)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_core.mcp import MCPClient, StdioMCPConfig
from agent_core.message import ToolResultState
from tests.support.mcp_servers import collect, text_of, venv_script

pytestmark = pytest.mark.integration


async def test_time_server() -> None:
    config = StdioMCPConfig(
        command=venv_script("mcp-server-time"), args=["--local-timezone", "UTC"]
    )
    async with MCPClient("time", True, config, timeout=10) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
        assert all(tool.is_read_only for tool in tools.values())

        (converted,) = await collect(
            tools["mcp__time__convert_time"](
                source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"
            )
        )
        assert converted.state is ToolResultState.SUCCESS
        assert json.loads(text_of(converted))["target"]["datetime"].endswith("T21:00:00+09:00")

        (bad_zone,) = await collect(tools["mcp__time__get_current_time"](timezone="Not/AZone"))
        assert bad_zone.state is ToolResultState.ERROR
        assert "Not/AZone" in text_of(bad_zone)

        # This server answers an unknown tool with a JSON-RPC error, not an isError result.
        (unknown,) = await collect(client.call_tool("sundial", {}))
        assert unknown.state is ToolResultState.ERROR
        assert "Unknown tool: sundial" in text_of(unknown)
        assert client.is_connected


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


async def test_git_server(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.name", "Troupe Test")
    _git(repo, "config", "user.email", "test@example.invalid")
    (repo / "hello.txt").write_text("hello\n")

    config = StdioMCPConfig(command=venv_script("mcp-server-git"), args=["-r", str(repo)])
    async with MCPClient(
        "git", True, config, disable_tools=["git_reset", "git_checkout"], timeout=10
    ) as client:
        tools = {tool.mcp_tool.name: tool for tool in await client.list_tools()}
        assert {"git_status", "git_add", "git_commit", "git_log"} <= set(tools)
        assert "git_reset" not in tools
        assert tools["git_status"].is_read_only
        assert not tools["git_commit"].is_read_only

        (added,) = await collect(tools["git_add"](repo_path=str(repo), files=["hello.txt"]))
        assert added.state is ToolResultState.SUCCESS
        (committed,) = await collect(tools["git_commit"](repo_path=str(repo), message="greet"))
        assert committed.state is ToolResultState.SUCCESS
        (log,) = await collect(tools["git_log"](repo_path=str(repo)))
        assert "greet" in text_of(log)

        (outside,) = await collect(tools["git_status"](repo_path=str(tmp_path)))
        assert outside.state is ToolResultState.ERROR
        assert "outside the allowed repository" in text_of(outside)
