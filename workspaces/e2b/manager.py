"""`E2BWorkspaceManager`: one `E2BWorkspace` (and sandbox) per user's agent."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from e2b import ApiParams

from agent_core.mcp import MCPClientConfig
from workspaces.e2b.workspace import DEFAULT_GATEWAY_PORT, DEFAULT_TEMPLATE, E2BWorkspace
from workspaces.manager import CachingWorkspaceManager, WorkspaceKey

AGENT_TAG = "agent_id"


class E2BWorkspaceManager(CachingWorkspaceManager):
    """`E2BWorkspace`s isolated per `(user_id, agent_id)` (or the workspace a session names).

    There is no host directory: a workspace is its sandbox, tagged with `workspace_id`,
    `user_id` and `agent_id`, and found again by the first two after a restart. An idle
    workspace (not leased for `ttl` seconds) is closed: its processes stopped and its sandbox
    paused (`on_close="pause"`, disk kept) or killed (`"kill"`).
    """

    def __init__(
        self,
        *,
        ttl: float = 3600.0,
        on_close: Literal["pause", "kill"] = "pause",
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        template: str = DEFAULT_TEMPLATE,
        timeout_seconds: int = 300,
        python: str = "python3",
        gateway_port: int = DEFAULT_GATEWAY_PORT,
        sandbox_env: Mapping[str, str] | None = None,
        metadata: Mapping[str, str] | None = None,
        api_key: str | None = None,
        domain: str | None = None,
        api_params: ApiParams | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Make each workspace's sandbox as described (see `E2BWorkspace` for the options).

        Args:
            ttl: Seconds an unused workspace (and its running sandbox) stays up.
            on_close: What closing an idle workspace does to its sandbox.
            default_mcps: MCP servers registered in every brand-new workspace.
            skill_paths: Skills uploaded into every brand-new workspace.
            template: The E2B template of new sandboxes.
            timeout_seconds: Each sandbox's keep-alive.
            python: The sandbox's interpreter.
            gateway_port: The sandbox port of the MCP gateway.
            sandbox_env: Environment of the sandboxes' own processes.
            metadata: More metadata for every new sandbox.
            api_key: The E2B API key (default: `E2B_API_KEY`).
            domain: The E2B domain.
            api_params: Further SDK connection options.
            clock: Monotonic seconds (replaceable in tests).
        """
        super().__init__(ttl=ttl, default_mcps=default_mcps, skill_paths=skill_paths, clock=clock)
        self.on_close: Literal["pause", "kill"] = on_close
        self.template = template
        self.timeout_seconds = timeout_seconds
        self.python = python
        self.gateway_port = gateway_port
        self.sandbox_env = dict(sandbox_env or {})
        self.metadata = dict(metadata or {})
        self.api_key = api_key
        self.domain = domain
        self.api_params = api_params
        self._agents: dict[WorkspaceKey, str] = {}

    def key(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> WorkspaceKey:
        """Per user's agent: the session's own `workspace_id` if it names one, else the agent."""
        key = super().key(user_id, agent_id, session_id, workspace_id)
        self._agents.setdefault(key, agent_id)
        return key

    def _new_workspace(self, key: WorkspaceKey) -> E2BWorkspace:
        return E2BWorkspace(
            key.workspace_id,
            user_id=key.user_id,
            template=self.template,
            timeout_seconds=self.timeout_seconds,
            on_close=self.on_close,
            default_mcps=self.default_mcps,
            skill_paths=self.skill_paths,
            python=self.python,
            gateway_port=self.gateway_port,
            sandbox_env=self.sandbox_env,
            metadata={**self.metadata, AGENT_TAG: self._agents.get(key, key.workspace_id)},
            api_key=self.api_key,
            domain=self.domain,
            api_params=self.api_params,
        )
