"""MCP integration, part of agent_core's tool layer: clients of MCP servers and their tools."""

from agent_core.mcp.client import MCPClient
from agent_core.mcp.config import HttpMCPConfig, MCPClientConfig, MCPConfig, StdioMCPConfig
from agent_core.mcp.tool import MCPTool, mcp_tool_name

__all__ = [
    "HttpMCPConfig",
    "MCPClient",
    "MCPClientConfig",
    "MCPConfig",
    "MCPTool",
    "StdioMCPConfig",
    "mcp_tool_name",
]
