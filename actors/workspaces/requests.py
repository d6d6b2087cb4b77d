"""What crosses the boundary to a workspace host: requests, the views it answers with, bundles.

Sessions and API replicas import these without the host itself (`actors.workspaces.host`),
which brings the workspace backends and the built-in tools' implementations.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from agent_core.skill import Skill
from workspaces.browse import FileInfo
from workspaces.errors import InvalidSkill
from workspaces.git import GitStatus

if TYPE_CHECKING:
    from mcp import types

MAX_SKILL_BUNDLE_BYTES = 16 * 1024 * 1024


class WorkspaceRequest(DeferredModel):
    """Which workspace a request is about: the isolation policy keys it from these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str
    agent_id: str
    session_id: str
    workspace_id: str | None = None


class MCPToolView(DeferredModel):
    """One tool of a workspace's MCP server, as listed by the server."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="The MCP server's name in the workspace.")
    tool: dict[str, Any] = Field(description="The server's `tools/list` entry.")


class WorkspaceView(DeferredModel):
    """What a session takes from its workspace for one reply."""

    model_config = ConfigDict(extra="forbid")

    workspace_id: str
    workdir: str = Field(description="The workspace root, as the tools see it.")
    cwd: str = Field(description="Where the session's file and shell tools start.")
    prompt_fragment: str = Field(description="The workspace's section of the system prompt.")
    mcp_tools: list[MCPToolView] = Field(default_factory=list)
    skills: list[Skill] = Field(default_factory=list)


class WorkspaceStatusView(DeferredModel):
    """Where a session works in its workspace, and the git state there."""

    model_config = ConfigDict(extra="forbid")

    workdir: str = Field(description="The workspace root, as the tools see it.")
    cwd: str = Field(description="The session's working directory.")
    git: GitStatus | None = Field(default=None, description="Git state of `cwd`, if any.")


class SkillBundle(DeferredModel):
    """A skill directory in transit: relative path -> base64 content."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(description="Each file of the skill, base64-encoded.")

    @classmethod
    def pack(cls, files: dict[str, bytes]) -> SkillBundle:
        """The bundle of these files (relative path -> content)."""
        return cls(files={name: base64.b64encode(data).decode() for name, data in files.items()})

    @classmethod
    def read(cls, directory: Path) -> SkillBundle:
        """Pack a skill directory (blocking: run it in a thread).

        Raises:
            InvalidSkill: It is not a directory, or it is too large to send.
        """
        directory = directory.expanduser()
        if not directory.is_dir():
            raise InvalidSkill(f"{directory} is not a directory")
        files: dict[str, str] = {}
        total = 0
        for path in sorted(directory.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            total += len(data)
            if total > MAX_SKILL_BUNDLE_BYTES:
                raise InvalidSkill(f"{directory} holds more than {MAX_SKILL_BUNDLE_BYTES} bytes")
            files[path.relative_to(directory).as_posix()] = base64.b64encode(data).decode()
        return cls(files=files)

    def write(self, directory: Path) -> None:
        """Unpack into `directory` (blocking).

        Raises:
            InvalidSkill: A path would land outside `directory`.
        """
        root = directory.resolve()
        for name, data in self.files.items():
            target = (root / name).resolve()
            if not target.is_relative_to(root) or target == root:
                raise InvalidSkill(f"skill file {name!r} points outside the skill")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(data))


@dataclass(frozen=True)
class FileStream:
    """A workspace file being read: what it is, and its bytes (read as `chunks` is consumed).

    Nothing is held open until `chunks` is iterated; the file is then opened again (confined
    as before) and exactly `info.size_bytes` bytes are read.
    """

    info: FileInfo
    chunks: AsyncGenerator[bytes, None]


def mcp_tool_from_view(view: MCPToolView) -> types.Tool:
    """The MCP tool description a view carries."""
    from mcp import types  # the SDK is slow to import; sessions without MCP tools never need it

    return types.Tool.model_validate(view.tool)
