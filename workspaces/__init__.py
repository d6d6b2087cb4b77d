"""workspaces: the agents' execution environments (tools, MCP servers, skills, offloading).

The layer between the runtime (`actors`) and the building blocks (`agent_core`); it imports
no ray, fastapi, starlette or redis.

The errors load eagerly, the rest on first use: a session host reads a few result models and
the Docker policy from here and runs no workspace itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from workspaces.errors import (
    CorruptWorkspace,
    E2BUnavailable,
    InvalidSkill,
    MCPExists,
    MCPNotFound,
    MCPUnavailable,
    PathForbidden,
    PathNotFound,
    SkillNotFound,
    TooLarge,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
    WrongFileType,
)

if TYPE_CHECKING:
    from workspaces.base import InstalledSkill, MCPStatus, MCPToolInfo, WorkspaceBase
    from workspaces.browse import DirectoryEntry, DirectoryListing, FileInfo
    from workspaces.git import GitStatus, read_git_status
    from workspaces.local import LocalWorkspace
    from workspaces.manager import (
        CachingWorkspaceManager,
        LocalWorkspaceManager,
        WorkspaceKey,
        WorkspaceManagerBase,
    )

_LAZY = {
    "CachingWorkspaceManager": "workspaces.manager",
    "DirectoryEntry": "workspaces.browse",
    "DirectoryListing": "workspaces.browse",
    "FileInfo": "workspaces.browse",
    "GitStatus": "workspaces.git",
    "InstalledSkill": "workspaces.base",
    "LocalWorkspace": "workspaces.local",
    "LocalWorkspaceManager": "workspaces.manager",
    "MCPStatus": "workspaces.base",
    "MCPToolInfo": "workspaces.base",
    "WorkspaceBase": "workspaces.base",
    "WorkspaceKey": "workspaces.manager",
    "WorkspaceManagerBase": "workspaces.manager",
    "read_git_status": "workspaces.git",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "CachingWorkspaceManager",
    "CorruptWorkspace",
    "DirectoryEntry",
    "DirectoryListing",
    "E2BUnavailable",
    "FileInfo",
    "GitStatus",
    "InstalledSkill",
    "InvalidSkill",
    "LocalWorkspace",
    "LocalWorkspaceManager",
    "MCPExists",
    "MCPNotFound",
    "MCPStatus",
    "MCPToolInfo",
    "MCPUnavailable",
    "PathForbidden",
    "PathNotFound",
    "SkillNotFound",
    "TooLarge",
    "WorkspaceBase",
    "WorkspaceClosed",
    "WorkspaceError",
    "WorkspaceItemNotFound",
    "WorkspaceKey",
    "WorkspaceManagerBase",
    "WrongFileType",
    "read_git_status",
]
