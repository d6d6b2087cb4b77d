"""Agent factories for `create_app(extra_agent_middlewares=..., extra_agent_tools=...)` tests.

Module-level functions of an importable module: session actors in Ray workers import them by
path. Their effects are visible from outside: the tool's result names the ids it was built
for, and the middleware appends a line (with the workspace directory) to the system prompt.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from actors.workspaces.session_workspaces import WorkspaceHandle
from agent_core.message import TextBlock, ToolResultState
from agent_core.middleware import MiddlewareBase
from agent_core.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.tool import ToolBase, ToolChunk

TOOL_NAME = "whoami"
PROMPT_MARK = "Audited for"


class WhoAmI(ToolBase):
    """Tells which user, agent and session it was built for."""

    name = TOOL_NAME
    description = "Say who is asking."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, user_id: str, agent_id: str, session_id: str) -> None:
        self.ids = f"user={user_id} agent={agent_id} session={session_id} pid={os.getpid()}"

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="harmless")

    async def __call__(self, **_: Any) -> AsyncIterator[ToolChunk]:
        yield ToolChunk(
            content=[TextBlock(text=self.ids)], state=ToolResultState.SUCCESS, is_last=True
        )


class AuditPrompt(MiddlewareBase):
    """Appends who the reply is for, and where its workspace is, to the system prompt."""

    def __init__(self, user_id: str, workdir: str) -> None:
        self.line = f"{PROMPT_MARK} {user_id} in {workdir}"

    async def on_system_prompt(self, agent: Any, current_prompt: str) -> str:
        return f"{current_prompt}\n{self.line}"


async def tools(user_id: str, agent_id: str, session_id: str) -> list[ToolBase]:
    return [WhoAmI(user_id, agent_id, session_id)]


async def middlewares(
    user_id: str, agent_id: str, session_id: str, workspace: WorkspaceHandle
) -> list[MiddlewareBase]:
    return [AuditPrompt(user_id, str(workspace.workdir))]


async def clashing_tools(user_id: str, agent_id: str, session_id: str) -> list[ToolBase]:
    """A tool whose name Troupe's own toolkit already has."""
    tool = WhoAmI(user_id, agent_id, session_id)
    tool.name = "get_current_time"
    return [tool]
