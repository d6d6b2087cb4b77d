"""workspaces: the agents' execution environments (tools, MCP servers, skills, offloading).

The layer between the runtime (`actors`) and the building blocks (`agent_core`); it imports
no ray, fastapi, starlette or redis.
"""

from workspaces.base import InstalledSkill, MCPStatus, MCPToolInfo, WorkspaceBase
from workspaces.errors import (
    CorruptWorkspace,
    E2BUnavailable,
    InvalidSkill,
    MCPExists,
    MCPNotFound,
    MCPUnavailable,
    SkillNotFound,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
)
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
    "E2BUnavailable",
    "InstalledSkill",
    "InvalidSkill",
    "LocalWorkspace",
    "LocalWorkspaceManager",
    "MCPExists",
    "MCPNotFound",
    "MCPStatus",
    "MCPToolInfo",
    "MCPUnavailable",
    "SkillNotFound",
    "WorkspaceBase",
    "WorkspaceClosed",
    "WorkspaceError",
    "WorkspaceItemNotFound",
    "WorkspaceKey",
    "WorkspaceManagerBase",
]
