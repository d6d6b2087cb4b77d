"""Bodies of the `/workspace/...` routes (AgentScope's shapes).

AgentScope names the transports `stdio_mcp` / `http_mcp` and the call timeout
`execution_timeout`; these bodies translate to and from `MCPClientConfig`, the form a
workspace persists.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_core.mcp import HttpMCPConfig, MCPClientConfig, StdioMCPConfig
from workspaces import GitStatus, InstalledSkill, MCPStatus

_DEFAULT_TIMEOUT = MCPClientConfig.model_fields["timeout"].default


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StdioMCPBody(_Body):
    """Launch the server as a subprocess speaking MCP over stdin/stdout."""

    type: Literal["stdio_mcp"] = "stdio_mcp"
    command: str = Field(min_length=1, description="The command to start the MCP server.")
    args: list[str] | None = Field(default=None, description="Its command-line arguments.")
    env: dict[str, str] | None = Field(
        default=None, description="Environment variables for the server process."
    )
    cwd: str | None = Field(default=None, description="The server process's working directory.")
    encoding_error_handler: Literal["strict"] = Field(
        default="strict",
        description="How undecodable server output is handled; Troupe decodes strictly.",
    )

    def to_config(self) -> StdioMCPConfig:
        """The transport configuration."""
        return StdioMCPConfig(
            command=self.command, args=self.args or [], env=self.env, cwd=self.cwd
        )


class HttpMCPBody(_Body):
    """Reach the server over HTTP."""

    type: Literal["http_mcp"] = "http_mcp"
    url: str = Field(min_length=1, description="The URL of the MCP server.")
    headers: dict[str, str] | None = Field(
        default=None, description="Headers sent with every request (e.g. Authorization)."
    )
    timeout: float | None = Field(
        default=30.0, gt=0, description="The HTTP request timeout in seconds."
    )
    transport: Literal["streamable_http", "sse"] = Field(
        default="streamable_http",
        description="Which HTTP transport the server speaks (Troupe extension).",
    )

    def to_config(self) -> HttpMCPConfig:
        """The transport configuration."""
        timeout = {} if self.timeout is None else {"timeout": self.timeout}
        return HttpMCPConfig(
            url=self.url, headers=self.headers or {}, transport=self.transport, **timeout
        )


MCPConfigBody = Annotated[StdioMCPBody | HttpMCPBody, Field(discriminator="type")]


class MCPClientBody(_Body):
    """`POST /workspace/mcp`: an MCP server to add to the session's workspace."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9_-]+$",
        title="MCP Name",
        description="The MCP name; its tools are exposed as mcp__{name}__{tool}.",
    )
    is_stateful: bool = Field(
        description="Keep one connection open (required for stdio) instead of one per call."
    )
    mcp_config: MCPConfigBody = Field(description="The MCP server configuration.")
    enable_tools: list[str] | None = Field(
        default=None, description="Expose only these tools (null: all)."
    )
    disable_tools: list[str] | None = Field(default=None, description="Never expose these tools.")
    execution_timeout: float | None = Field(
        default=None, gt=0, description="Seconds allowed for connecting and each tool call."
    )
    stream_progress: bool = Field(
        default=True,
        description="Troupe's MCP tools always stream the server's progress; kept for "
        "compatibility.",
    )

    @model_validator(mode="after")
    def _stdio_is_stateful(self) -> MCPClientBody:
        if not self.is_stateful and isinstance(self.mcp_config, StdioMCPBody):
            raise ValueError("a stdio MCP server must be stateful (is_stateful=true)")
        return self

    def to_config(self) -> MCPClientConfig:
        """The configuration a workspace persists."""
        return MCPClientConfig(
            name=self.name,
            is_stateful=self.is_stateful,
            mcp_config=self.mcp_config.to_config(),
            enable_tools=self.enable_tools,
            disable_tools=self.disable_tools,
            timeout=self.execution_timeout or _DEFAULT_TIMEOUT,
        )

    @staticmethod
    def from_config(config: MCPClientConfig) -> MCPClientBody:
        """The body describing a persisted configuration."""
        transport = config.mcp_config
        wire: StdioMCPBody | HttpMCPBody
        if isinstance(transport, StdioMCPConfig):
            wire = StdioMCPBody(
                command=transport.command, args=transport.args, env=transport.env, cwd=transport.cwd
            )
        else:
            wire = HttpMCPBody(
                url=transport.url,
                headers=transport.headers,
                timeout=transport.timeout,
                transport=transport.transport,
            )
        return MCPClientBody(
            name=config.name,
            is_stateful=config.is_stateful,
            mcp_config=wire,
            enable_tools=config.enable_tools,
            disable_tools=config.disable_tools,
            execution_timeout=config.timeout,
        )


class ToolInfo(_Body):
    """One tool of an MCP server."""

    name: str = Field(description="The tool's name on the server.")
    description: str | None = Field(default=None, description="What the tool does.")


class MCPClientStatusBody(MCPClientBody):
    """An MCP server of the workspace with its live tool list and health."""

    is_healthy: bool = Field(default=False, description="Whether the server listed its tools.")
    tools: list[ToolInfo] = Field(default_factory=list, description="The tools it exposes.")
    error: str | None = Field(
        default=None, description="Why listing the server's tools failed, when it did."
    )

    @classmethod
    def of(cls, status: MCPStatus) -> MCPClientStatusBody:
        """The body describing one workspace MCP server."""
        tools = [ToolInfo(name=t.name, description=t.description) for t in status.tools]
        return cls(
            **dict(MCPClientBody.from_config(status.config)),
            is_healthy=status.is_healthy,
            tools=tools,
            error=status.error,
        )


class AddSkillRequest(_Body):
    """`POST /workspace/skill`: a skill directory on the server's filesystem to install."""

    skill_path: str = Field(
        min_length=1, description="The skill directory (holding SKILL.md): an absolute path."
    )

    @field_validator("skill_path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        # A relative path would resolve against the server's working directory, which a
        # client neither knows nor should learn from the error.
        if not PurePosixPath(value).is_absolute():
            raise ValueError("must be an absolute path on the server")
        return value


class SkillBody(_Body):
    """A skill installed in the workspace."""

    name: str = Field(description="The skill's name.")
    description: str = Field(description="When and why to use it.")
    dir: str = Field(description="Its directory in the workspace.")
    markdown: str = Field(description="The full SKILL.md.")
    updated_at: float = Field(description="When it was installed or last replaced (epoch s).")

    @classmethod
    def of(cls, installed: InstalledSkill) -> SkillBody:
        """The body describing one installed skill."""
        skill = installed.skill
        return cls(
            name=skill.name,
            description=skill.description,
            dir=skill.path,
            markdown=skill.content,
            updated_at=installed.updated_at,
        )


class WorkspaceStatus(_Body):
    """Where a session is pointed, and the git state of that place."""

    workdir: str = Field(description="Absolute path of the workspace root.")
    cwd: str = Field(
        description="Absolute directory the session is focused on (`workdir` when unset)."
    )
    git: GitStatus | None = Field(
        default=None,
        description=(
            "Git state of `cwd`; null when there is none to report (not a repository, git "
            "unavailable, timed out)."
        ),
    )
