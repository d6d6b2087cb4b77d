"""Escape attempts made by an agent, in DEFAULT and BYPASS mode, against a sandboxed workspace.

What the service gives every session: the workspace's tools (running in the sandbox), its
directories as the permission context's working directories, and reads confined to them
(`Agent(confine_reads=True)`). In DEFAULT mode a read outside the workspace is never
auto-allowed: the reply parks for confirmation instead. In BYPASS mode nothing asks, so the
sandbox alone must stop the same calls, with a clear tool error, and the session goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.agent import Agent
from agent_core.event import RequireUserConfirmEvent, ToolResultEndEvent, ToolResultTextDeltaEvent
from agent_core.message import UserMsg
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.permission.types import AdditionalWorkingDirectory
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import Toolkit
from workspaces.sandbox import SandboxWorkspace, sandbox_available

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(sandbox_available() is not None, reason=str(sandbox_available())),
]

SECRET = "tenant-b-secret-0451"


@pytest.fixture
async def tenants(tmp_path: Path) -> AsyncIterator[tuple[SandboxWorkspace, Path]]:
    theirs = tmp_path / "bob" / "agent-b"
    theirs.mkdir(parents=True)
    (theirs / "notes.txt").write_text(SECRET)
    mine = SandboxWorkspace(tmp_path / "alice" / "agent-a", "agent-a")
    await mine.initialize()
    try:
        yield mine, theirs / "notes.txt"
    finally:
        await mine.close()


def agent_for(workspace: SandboxWorkspace, mode: PermissionMode, *calls: ScriptedToolCall) -> Agent:
    permissions = PermissionContext(mode=mode)
    permissions.working_directories["workspace"] = AdditionalWorkingDirectory(
        path=str(workspace.workdir), source="workspace"
    )
    model = ScriptedChatModel([ScriptedResponse(tool_calls=list(calls))], default="done")
    return Agent(
        "attacker",
        "You are an agent.",
        model,
        toolkit=Toolkit(workspace.builtin_tools()),
        state=AgentState(permission_context=permissions),
        confine_reads=True,
    )


PROBES = [
    ("Read", lambda secret: {"file_path": str(secret)}),
    ("Bash", lambda secret: {"command": f"cat {secret}"}),
    ("Grep", lambda secret: {"pattern": "secret", "path": str(secret.parent)}),
    ("Bash", lambda secret: {"command": "env"}),
]


@pytest.mark.parametrize(("tool", "arguments"), PROBES, ids=lambda v: getattr(v, "__name__", v))
async def test_default_mode_never_runs_a_read_outside_the_workspace_unasked(
    tenants: tuple[SandboxWorkspace, Path], tool: str, arguments: object
) -> None:
    workspace, secret = tenants
    call = ScriptedToolCall(tool, arguments(secret))  # type: ignore[operator]
    agent = agent_for(workspace, PermissionMode.DEFAULT, call)
    events = [event async for event in agent.reply_stream(UserMsg("user", "go"))]
    texts = "".join(e.delta for e in events if isinstance(e, ToolResultTextDeltaEvent))
    assert SECRET not in texts
    # Reads outside the workspace, and `env` (it prints secrets), must ask in DEFAULT mode.
    assert any(isinstance(e, RequireUserConfirmEvent) for e in events)


@pytest.mark.parametrize(("tool", "arguments"), PROBES, ids=lambda v: getattr(v, "__name__", v))
async def test_bypass_mode_is_stopped_by_the_sandbox(
    tenants: tuple[SandboxWorkspace, Path],
    tool: str,
    arguments: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workspace, secret = tenants
    monkeypatch.setenv("TROUPE_SECRET_KEY", "server-secret-never-shown")
    call = ScriptedToolCall(tool, arguments(secret))  # type: ignore[operator]
    agent = agent_for(workspace, PermissionMode.BYPASS, call)
    events = [event async for event in agent.reply_stream(UserMsg("user", "go"))]
    texts = "".join(e.delta for e in events if isinstance(e, ToolResultTextDeltaEvent))
    assert SECRET not in texts
    assert "server-secret-never-shown" not in texts
    assert not any(isinstance(e, RequireUserConfirmEvent) for e in events)
    assert any(isinstance(e, ToolResultEndEvent) for e in events)

    follow_up = ScriptedToolCall("Bash", {"command": "echo still-working"})
    agent.model.push(ScriptedResponse(tool_calls=[follow_up]))  # type: ignore[attr-defined]
    events = [event async for event in agent.reply_stream(UserMsg("user", "again"))]
    texts = "".join(e.delta for e in events if isinstance(e, ToolResultTextDeltaEvent))
    assert "still-working" in texts
