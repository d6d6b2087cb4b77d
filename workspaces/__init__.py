"""workspaces: the agents' execution environments (tools, MCP servers, skills, offloading).

The layer between the runtime (`actors`) and the building blocks (`agent_core`); it imports
no ray, fastapi, starlette or redis.
"""

from workspaces.base import InstalledSkill, MCPStatus, MCPToolInfo, WorkspaceBase
from workspaces.browse import DirectoryEntry, DirectoryListing, FileInfo
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
from workspaces.git import GitStatus, read_git_status
from workspaces.local import LocalWorkspace
from workspaces.manager import (
    CachingWorkspaceManager,
    LocalWorkspaceManager,
    WorkspaceKey,
    WorkspaceManagerBase,
)

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
