"""E2B workspaces: each workspace's files, tools and MCP servers in its own E2B sandbox.

`E2BWorkspace` (see its module for persistence, the gateway route and the bookkeeping's
protection), `E2BWorkspaceManager` (one per user's agent, paused when idle).
"""

from workspaces.e2b.manager import E2BWorkspaceManager
from workspaces.e2b.workspace import AGENT_USER, SANDBOX_WORKDIR, E2BWorkspace

__all__ = ["AGENT_USER", "SANDBOX_WORKDIR", "E2BWorkspace", "E2BWorkspaceManager"]
