"""What crosses the MCP gateway's HTTP boundary: request bodies and where the gateway listens."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from agent_core.mcp import MCPClientConfig

SOCKET_NAME = "gateway.sock"
"""The gateway's unix socket, in the runtime directory shared with the host."""


class RegisteredMCP(DeferredModel):
    """An MCP server the gateway holds a client for."""

    model_config = ConfigDict(extra="forbid")

    config: MCPClientConfig = Field(description="The registered configuration.")
    connected: bool = Field(description="Whether its stateful session is open.")


class ToolCallRequest(DeferredModel):
    """`POST /mcps/{name}/tools/{tool}`: call one tool of a registered server."""

    model_config = ConfigDict(extra="forbid")

    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds the call may take (default: the client's)."
    )
