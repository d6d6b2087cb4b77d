"""The MCP gateway: MCP servers inside a workspace's container, reached from the host.

`workspaces.gateway.app` is the FastAPI process that runs inside the container and owns the
MCP sessions; `GatewayMCPClient` and `GatewayMCPTool` are their host-side stand-ins for
`MCPClient` and `MCPTool`. This package's `__init__` imports the host side only.
"""

from workspaces.gateway.client import GatewayConnection, GatewayMCPClient, GatewayMCPTool
from workspaces.gateway.protocol import RegisteredMCP, ToolCallRequest

__all__ = [
    "GatewayConnection",
    "GatewayMCPClient",
    "GatewayMCPTool",
    "RegisteredMCP",
    "ToolCallRequest",
]
