"""Building blocks of the workspace tests: MCP server configs and skill directories."""

from __future__ import annotations

from pathlib import Path

from agent_core.mcp import MCPClientConfig, StdioMCPConfig
from tests.support.mcp_servers import demo_stdio_config, venv_script


def demo_mcp(name: str = "demo") -> MCPClientConfig:
    """The demo MCP server (tests/support/mcp_servers/demo.py) over stdio."""
    return MCPClientConfig(name=name, is_stateful=True, mcp_config=demo_stdio_config(), timeout=20)


def time_mcp() -> MCPClientConfig:
    """The third-party `mcp-server-time` over stdio."""
    config = StdioMCPConfig(
        command=venv_script("mcp-server-time"), args=["--local-timezone", "UTC"]
    )
    return MCPClientConfig(name="time", is_stateful=True, mcp_config=config, timeout=20)


def broken_mcp(name: str = "broken") -> MCPClientConfig:
    """A stdio server whose command does not exist."""
    config = StdioMCPConfig(command="/nonexistent/mcp-server")
    return MCPClientConfig(name=name, is_stateful=True, mcp_config=config, timeout=5)


def write_skill(directory: Path, name: str, description: str, body: str = "Do it well.") -> Path:
    """A skill directory holding SKILL.md (and a helper script)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{body}\n"
    (directory / "SKILL.md").write_text(text, encoding="utf-8")
    (directory / "scripts").mkdir(exist_ok=True)
    (directory / "scripts" / "run.sh").write_text("echo run\n", encoding="utf-8")
    return directory
