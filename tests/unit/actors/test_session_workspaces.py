"""What a session's agent takes from its workspace: tools, prompt, offloader, working dirs."""

from __future__ import annotations

from pathlib import Path

from actors.records import SessionConfig, SessionRecord
from actors.settings import RuntimeSettings
from actors.workspaces import SessionWorkspaces, shared_workspaces
from agent_core.permission import PermissionContext
from agent_core.ports import Offloader
from tests.unit.workspaces._helpers import write_skill
from workspaces import LocalWorkspaceManager


def session(**config: str) -> SessionRecord:
    return SessionRecord(user_id="alice", agent_id="a-1", config=SessionConfig(**config))


async def test_a_session_kit_binds_tools_prompt_and_permissions(tmp_path: Path) -> None:
    workspaces = SessionWorkspaces(LocalWorkspaceManager(tmp_path))
    root = tmp_path / "alice" / "a-1"
    try:
        workspace = await workspaces.get(session())
        await workspace.add_skill(write_skill(tmp_path / "src", "review", "Review code."))

        async with workspaces.kit(session(cwd="project")) as kit:
            assert kit.workspace is workspace
            assert isinstance(kit.workspace, Offloader)
            assert kit.cwd == root / "project"
            names = [tool.name for tool in kit.tools]
            assert names == ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill"]
            prompt = kit.system_prompt("You are helpful.")
            assert prompt.startswith("You are helpful.\n\n# Workspace\n\n")
            assert f"start in {root / 'project'}" in prompt
            assert "- review: Review code." in prompt

            permissions = PermissionContext()
            kit.grant(permissions)
            assert {k: d.path for k, d in permissions.working_directories.items()} == {
                "workspace": str(root)
            }

        async with workspaces.kit(session(cwd=str(tmp_path / "elsewhere"))) as kit:
            kit.grant(permissions)
            assert permissions.working_directories["cwd"].path == str(tmp_path / "elsewhere")

        async with workspaces.kit(session(workspace_id="shared")) as kit:
            assert kit.workspace.workdir == tmp_path / "alice" / "shared"
            kit.grant(permissions)
            assert "cwd" not in permissions.working_directories
    finally:
        await workspaces.aclose()


async def test_each_process_shares_one_instance_per_root(tmp_path: Path) -> None:
    settings = RuntimeSettings(redis_url="redis://unused", workspace_root=str(tmp_path))
    first = shared_workspaces(settings)
    assert shared_workspaces(settings) is first
    await first.get(session())
    await first.aclose()
    assert shared_workspaces(settings) is not first
