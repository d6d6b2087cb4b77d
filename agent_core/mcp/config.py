"""How to reach an MCP server (stdio or HTTP), and the whole persisted setup of one MCP client."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel


class StdioMCPConfig(DeferredModel):
    """Launch the server as a subprocess and speak MCP over its stdin/stdout."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1, description="The executable that starts the server.")
    args: list[str] = Field(default_factory=list, description="Command-line arguments.")
    env: dict[str, str] | None = Field(
        default=None,
        description="Extra environment variables, merged over a minimal safe environment "
        "(PATH, HOME, ...); the parent's full environment is not inherited.",
    )
    cwd: str | None = Field(default=None, description="Working directory of the server process.")


class HttpMCPConfig(DeferredModel):
    """Reach a server over HTTP: Streamable HTTP (the default) or the legacy SSE transport."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["http"] = "http"
    url: str = Field(min_length=1, description="The server's MCP endpoint, e.g. http://host/mcp.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Headers sent with every request (e.g. Authorization)."
    )
    timeout: float = Field(
        default=30.0, gt=0, description="Seconds to connect and send one HTTP request."
    )
    sse_read_timeout: float = Field(
        default=300.0, gt=0, description="Seconds to wait for the next event on an open stream."
    )
    transport: Literal["streamable_http", "sse"] = Field(
        default="streamable_http", description="Which HTTP transport the server speaks."
    )


MCPConfig = Annotated[StdioMCPConfig | HttpMCPConfig, Field(discriminator="type")]
"""Either transport configuration, discriminated on `type`."""


class MCPClientConfig(DeferredModel):
    """Everything needed to rebuild an `MCPClient`: what a workspace persists in its `.mcp` file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=r"^[A-Za-z0-9_-]+$",
        description="Server name; tools are exposed as mcp__{name}__{tool}.",
    )
    is_stateful: bool = Field(
        description="Keep one session open (stdio or HTTP) instead of one session per call "
        "(HTTP only)."
    )
    mcp_config: MCPConfig = Field(description="How to reach the server.")
    enable_tools: list[str] | None = Field(
        default=None, description="Expose only these server tools (None: all of them)."
    )
    disable_tools: list[str] | None = Field(
        default=None, description="Never expose these server tools."
    )
    timeout: float = Field(
        default=60.0,
        gt=0,
        description="Seconds allowed to connect, to list tools, and for each tool call.",
    )
