"""What a session's agent takes from its workspace: tools, prompt, offloader, working dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.settings import RuntimeSettings
from actors.storage.records import SessionConfig, SessionRecord
from actors.workspaces.host import WorkspaceHost
from actors.workspaces.session_workspaces import (
    SessionWorkspaces,
    WorkspaceHandle,
    shared_workspaces,
    workspace_request,
)
from agent_core.message import TextBlock, ToolCallBlock
from agent_core.permission import PermissionContext
from agent_core.ports import Offloader
from agent_core.state import AgentState
from agent_core.tool import Toolkit
from tests.unit.workspaces._helpers import write_skill
from workspaces import LocalWorkspaceManager, PathForbidden
from workspaces.errors import FileChanged


def session(**config: str) -> SessionRecord:
    return SessionRecord(user_id="alice", agent_id="a-1", config=SessionConfig(**config))


async def test_a_session_kit_binds_tools_prompt_and_permissions(tmp_path: Path) -> None:
    workspaces = SessionWorkspaces(WorkspaceHost(LocalWorkspaceManager(tmp_path)))
    root = tmp_path / "alice" / "a-1"
    try:
        handle = WorkspaceHandle(workspaces.service, workspace_request(session()))
        await handle.add_skill(write_skill(tmp_path / "src", "review", "Review code."))

        async with workspaces.kit(session(cwd="project")) as kit:
            assert isinstance(kit.offloader, Offloader)
            assert kit.workdir == root
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
            assert kit.workdir == tmp_path / "alice" / "shared"
            kit.grant(permissions)
            assert "cwd" not in permissions.working_directories
    finally:
        await workspaces.aclose()


async def test_kit_tools_run_in_the_workspace_host_and_carry_the_read_cache(
    tmp_path: Path,
) -> None:
    workspaces = SessionWorkspaces(WorkspaceHost(LocalWorkspaceManager(tmp_path)))
    try:
        async with workspaces.kit(session()) as kit:
            toolkit = Toolkit(kit.tools)
            state = AgentState()
            write = ToolCallBlock(
                id="w", name="Write", input='{"file_path": "notes.md", "content": "hi\\n"}'
            )
            chunks = [chunk async for chunk in toolkit.call(write, state)]
            assert chunks[-1].state.value == "success"
            assert (kit.workdir / "notes.md").read_text() == "hi\n"
            read = ToolCallBlock(id="r", name="Read", input='{"file_path": "notes.md"}')
            chunks = [chunk async for chunk in toolkit.call(read, state)]
            assert isinstance(chunks[-1].content[0], TextBlock)
            assert "hi" in chunks[-1].content[0].text
            cached = [entry.file_path for entry in state.tool_context.read_file_cache]
            assert cached == [str(kit.workdir / "notes.md")]
            path = await kit.offloader.offload_context("s-1", [])
            assert path.startswith(str(kit.workdir))
    finally:
        await workspaces.aclose()


async def test_each_process_shares_one_instance_per_root(tmp_path: Path) -> None:
    settings = RuntimeSettings(
        redis_url="redis://unused", workspace_root=str(tmp_path), workspace_backend="local"
    )
    first = shared_workspaces(settings)
    assert shared_workspaces(settings) is first
    async with first.kit(session()):
        pass
    await first.aclose()
    assert shared_workspaces(settings) is not first


async def test_a_file_is_streamed_confined_even_if_it_changes_after_it_was_found(
    tmp_path: Path,
) -> None:
    host = WorkspaceHost(LocalWorkspaceManager(tmp_path / "root"))
    handle = WorkspaceHandle(host, workspace_request(session()))
    try:
        listing = await handle.list_directory("")
        root = Path(listing.path)
        (root / "data.bin").write_bytes(b"x" * 600_000)
        stream = await handle.read_file("data.bin")
        assert stream.info.size_bytes == 600_000
        assert b"".join([chunk async for chunk in stream.chunks]) == b"x" * 600_000

        shrinking = await handle.read_file("data.bin")
        (root / "data.bin").write_bytes(b"short")
        with pytest.raises(FileChanged, match="shrank"):
            _ = [chunk async for chunk in shrinking.chunks]

        swapped = await handle.read_file("data.bin")
        (root / "data.bin").unlink()
        (root / "data.bin").symlink_to("/etc/passwd")
        with pytest.raises(PathForbidden, match="symbolic link"):
            _ = [chunk async for chunk in swapped.chunks]
    finally:
        await host.aclose()
