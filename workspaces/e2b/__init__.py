"""E2B workspaces: each workspace's files, tools and MCP servers in its own E2B sandbox.

`E2BWorkspace` (see its module for persistence, the gateway route and the bookkeeping's
protection), `E2BWorkspaceManager` (one per user's agent, paused when idle). Both load the
E2B SDK (slow to import) on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names

if TYPE_CHECKING:
    from workspaces.e2b.manager import E2BWorkspaceManager
    from workspaces.e2b.workspace import AGENT_USER, SANDBOX_WORKDIR, E2BWorkspace

_LAZY = {
    "AGENT_USER": "workspaces.e2b.workspace",
    "E2BWorkspace": "workspaces.e2b.workspace",
    "E2BWorkspaceManager": "workspaces.e2b.manager",
    "SANDBOX_WORKDIR": "workspaces.e2b.workspace",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = ["AGENT_USER", "SANDBOX_WORKDIR", "E2BWorkspace", "E2BWorkspaceManager"]
