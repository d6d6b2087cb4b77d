"""Errors of the workspaces package.

::

    WorkspaceError
    ├── WorkspaceClosed          the workspace is used before initialize() or after close()
    ├── MCPExists                an MCP server of that name is already registered
    ├── MCPUnavailable           an MCP server cannot be added: rejected config or unreachable
    ├── InvalidSkill             a skill directory has no valid SKILL.md
    ├── WorkspaceItemNotFound    a named MCP server, skill or path is not in the workspace
    │   ├── MCPNotFound
    │   ├── SkillNotFound
    │   └── PathNotFound
    ├── PathForbidden            a path leaves the workspace (`..`, a link) or is unreadable
    ├── WrongFileType            a path names a file where a directory is meant, or the reverse
    ├── TooLarge                 a file or directory is too large to serve
    ├── FileChanged              a file shrank while it was being read
    ├── CorruptWorkspace         a file of the workspace layout cannot be read back
    ├── SandboxUnavailable       the sandbox cannot be set up here (no bubblewrap, ...)
    ├── DockerUnavailable        a Docker workspace cannot start (no daemon, no image, ...)
    └── E2BUnavailable           an E2B workspace cannot start (no key, API unreachable, ...)

Every exception pickles (Ray re-raises them across processes).
"""

from __future__ import annotations


class WorkspaceError(Exception):
    """Root of every workspace error."""


class WorkspaceClosed(WorkspaceError):
    """The workspace is not open: `initialize()` was not called, or `close()` was."""


class MCPExists(WorkspaceError):
    """An MCP server with this name is already registered in the workspace."""


class MCPUnavailable(WorkspaceError):
    """An MCP server cannot be added: its configuration is rejected, or it cannot be reached."""


class InvalidSkill(WorkspaceError):
    """A skill directory does not exist, or its SKILL.md is missing or invalid."""


class CorruptWorkspace(WorkspaceError):
    """A file of the workspace layout (`.mcp`, the skill index) holds something unreadable."""


class WorkspaceItemNotFound(WorkspaceError):
    """A named item is not in the workspace."""

    kind = "item"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"{self.kind} {self.name!r} is not in the workspace"


class MCPNotFound(WorkspaceItemNotFound):
    """No MCP server of that name is registered."""

    kind = "MCP server"


class SkillNotFound(WorkspaceItemNotFound):
    """No skill of that name is installed."""

    kind = "skill"


class PathNotFound(WorkspaceItemNotFound):
    """No file or directory at that path."""

    kind = "path"


class PathForbidden(WorkspaceError):
    """A path leads out of the workspace (above it, through a symbolic link) or is unreadable."""


class WrongFileType(WorkspaceError):
    """A path names a file where a directory is meant, a directory where a file is, or neither."""


class TooLarge(WorkspaceError):
    """A file or directory is larger than what the workspace serves in one request."""


class FileChanged(WorkspaceError):
    """A file shrank while it was being read."""


class SandboxUnavailable(WorkspaceError):
    """The sandbox cannot be set up here (bubblewrap missing or refused by the kernel)."""


class DockerUnavailable(WorkspaceError):
    """A Docker workspace cannot start: no daemon, a missing image, a container that fails."""


class E2BUnavailable(WorkspaceError):
    """An E2B workspace cannot start: no API key, API or sandbox unreachable, a failing start."""
