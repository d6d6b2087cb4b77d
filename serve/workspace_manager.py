"""Workspace managers, where the spec's `agentscope.app.workspace_manager` names them."""

from workspaces import LocalWorkspaceManager, WorkspaceManagerBase
from workspaces.docker import DockerWorkspaceManager
from workspaces.e2b import E2BWorkspaceManager

__all__ = [
    "DockerWorkspaceManager",
    "E2BWorkspaceManager",
    "LocalWorkspaceManager",
    "WorkspaceManagerBase",
]
