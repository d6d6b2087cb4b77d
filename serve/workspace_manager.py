"""Workspace managers, where the spec's `agentscope.app.workspace_manager` names them."""

from workspaces import LocalWorkspaceManager, WorkspaceManagerBase
from workspaces.docker import DockerWorkspaceManager

__all__ = ["DockerWorkspaceManager", "LocalWorkspaceManager", "WorkspaceManagerBase"]
