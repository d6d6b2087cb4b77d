"""MCP integration, part of agent_core's tool layer: clients of MCP servers and their tools.

The configs load eagerly; the client and its tools load the `mcp` SDK (slow to import) on
first use, so programs that never talk to an MCP server do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from agent_core.mcp.config import HttpMCPConfig, MCPClientConfig, MCPConfig, StdioMCPConfig

if TYPE_CHECKING:
    from agent_core.mcp.client import MCPClient
    from agent_core.mcp.tool import MCPTool, mcp_tool_name

_LAZY = {
    "MCPClient": "agent_core.mcp.client",
    "MCPTool": "agent_core.mcp.tool",
    "mcp_tool_name": "agent_core.mcp.tool",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "HttpMCPConfig",
    "MCPClient",
    "MCPClientConfig",
    "MCPConfig",
    "MCPTool",
    "StdioMCPConfig",
    "mcp_tool_name",
]
