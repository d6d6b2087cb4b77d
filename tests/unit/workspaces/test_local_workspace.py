"""LocalWorkspace: layout, tools, MCP servers added at runtime and kept across restarts."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.mcp import MCPClientConfig
from agent_core.message import ToolResultState
from agent_core.skill import SkillViewer
from agent_core.tool import ToolChunk
from tests.support.mcp_servers import collect, text_of
from tests.unit.workspaces._helpers import broken_mcp, demo_mcp, time_mcp, write_skill
from workspaces import (
    CorruptWorkspace,
    LocalWorkspace,
    MCPExists,
    MCPNotFound,
    MCPUnavailable,
    WorkspaceClosed,
)

pytestmark = pytest.mark.integration  # real MCP server processes


async def output(stream: AsyncIterator[ToolChunk]) -> str:
    return "".join(text_of(chunk) for chunk in await collect(stream)).strip()


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_initialize_creates_the_layout(tmp_path: Path) -> None:
    async with LocalWorkspace(tmp_path / "w") as workspace:
        assert workspace.workspace_id == "w"
        assert sorted(p.name for p in workspace.workdir.iterdir()) == [
            ".mcp",
            "data",
            "sessions",
            "skills",
        ]
        assert json.loads((workspace.workdir / ".mcp").read_text()) == []
        assert await workspace.list_mcps() == []


async def test_builtin_tools_are_bound_to_the_workspace_or_the_session_cwd(
    workspace: LocalWorkspace,
) -> None:
    tools = {tool.name: tool for tool in await workspace.list_tools()}
    assert set(tools) == {"Bash", "Read", "Write", "Edit", "Glob", "Grep"}

    assert await output(tools["Bash"](command="pwd")) == str(workspace.workdir)

    project = {tool.name: tool for tool in await workspace.list_tools(cwd="src/app")}
    assert (workspace.workdir / "src" / "app").is_dir()
    assert await output(project["Bash"](command="pwd")) == str(workspace.workdir / "src" / "app")
    assert workspace.working_directory("/tmp") == Path("/tmp")


async def test_mcp_servers_added_at_runtime_expose_their_tools(workspace: LocalWorkspace) -> None:
    await workspace.add_mcp(demo_mcp())
    await workspace.add_mcp(time_mcp())

    assert [client.name for client in await workspace.list_mcps()] == ["demo", "time"]
    names = {tool.name for tool in await workspace.all_tools()}
    assert {"mcp__demo__echo", "mcp__demo__add", "mcp__time__get_current_time"} <= names
    assert {"mcp__time__convert_time", "Bash"} <= names

    tools = {tool.name: tool for tool in await workspace.all_tools()}
    (result,) = await collect(tools["mcp__demo__add"](a=2, b=3))
    assert result.state is ToolResultState.SUCCESS
    assert text_of(result) == "5"
    (converted,) = await collect(
        tools["mcp__time__convert_time"](
            source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"
        )
    )
    assert "T21:00:00+09:00" in text_of(converted)

    statuses = {s.config.name: s for s in await workspace.mcp_statuses()}
    assert statuses["time"].is_healthy
    assert {t.name for t in statuses["time"].tools} == {"get_current_time", "convert_time"}
    saved = json.loads((workspace.workdir / ".mcp").read_text())
    assert [entry["name"] for entry in saved] == ["demo", "time"]


async def test_mcp_servers_survive_a_restart_and_removal_persists(tmp_path: Path) -> None:
    async with LocalWorkspace(tmp_path / "w") as first:
        await first.add_mcp(demo_mcp())
        await first.add_mcp(time_mcp())
        tools = {tool.name: tool for tool in await first.all_tools()}
        (pid_chunk,) = await collect(tools["mcp__demo__pid"]())
        old_pid = int(text_of(pid_chunk))
    assert not process_alive(old_pid), "closing the workspace stops its stdio servers"

    async with LocalWorkspace(tmp_path / "w") as second:
        clients = await second.list_mcps()
        assert [c.name for c in clients] == ["demo", "time"]
        assert all(c.is_connected for c in clients)
        await second.remove_mcp("demo")
        assert [c.name for c in await second.list_mcps()] == ["time"]

    async with LocalWorkspace(tmp_path / "w") as third:
        assert [c.name for c in await third.list_mcps()] == ["time"]
        assert "mcp__demo__echo" not in {t.name for t in await third.all_tools()}


async def test_bad_additions_are_refused_and_not_persisted(workspace: LocalWorkspace) -> None:
    await workspace.add_mcp(demo_mcp())
    with pytest.raises(MCPExists):
        await workspace.add_mcp(demo_mcp())
    with pytest.raises(MCPUnavailable, match="broken"):
        await workspace.add_mcp(broken_mcp())
    with pytest.raises(MCPNotFound, match="'nope'"):
        await workspace.remove_mcp("nope")
    saved = json.loads((workspace.workdir / ".mcp").read_text())
    assert [entry["name"] for entry in saved] == ["demo"]


async def test_a_server_failing_at_startup_is_reported_not_fatal(tmp_path: Path) -> None:
    workdir = tmp_path / "w"
    workdir.mkdir()
    entries = [
        broken_mcp().model_dump(mode="json"),
        {"name": "garbled", "is_stateful": "maybe"},
        demo_mcp().model_dump(mode="json"),
    ]
    (workdir / ".mcp").write_text(json.dumps(entries))
    async with LocalWorkspace(workdir) as workspace:
        assert set(workspace.mcp_errors) == {"broken", "garbled"}
        assert "invalid entry" in workspace.mcp_errors["garbled"]
        statuses = {s.config.name: s for s in await workspace.mcp_statuses()}
        assert statuses["demo"].is_healthy
        assert not statuses["broken"].is_healthy
        assert statuses["broken"].error
        names = {tool.name for tool in await workspace.all_tools()}
        assert "mcp__demo__echo" in names
        fragment = await workspace.system_prompt_fragment()
        assert "- broken: unavailable right now" in fragment
        # Removing works on entries that never loaded, and keeps the others intact.
        await workspace.remove_mcp("garbled")
        saved = json.loads((workdir / ".mcp").read_text())
        assert [entry["name"] for entry in saved] == ["broken", "demo"]


async def test_a_corrupt_mcp_file_fails_initialize(tmp_path: Path) -> None:
    workdir = tmp_path / "w"
    workdir.mkdir()
    (workdir / ".mcp").write_text("{not json")
    with pytest.raises(CorruptWorkspace, match=r"\.mcp"):
        await LocalWorkspace(workdir).initialize()
    assert (workdir / ".mcp").read_text() == "{not json", "nothing is overwritten"


async def test_two_instances_on_one_directory_follow_each_others_changes(
    tmp_path: Path,
) -> None:
    async with LocalWorkspace(tmp_path / "w") as api, LocalWorkspace(tmp_path / "w") as host:
        await api.add_mcp(demo_mcp())
        (client,) = await host.list_mcps()
        assert client.name == "demo"
        assert client.is_connected
        await api.remove_mcp("demo")
        assert await host.list_mcps() == []
        assert not client.is_connected, "the host stops the server removed elsewhere"


async def test_seeds_populate_only_a_brand_new_workspace(tmp_path: Path) -> None:
    source = write_skill(tmp_path / "src" / "review", "review", "Review code.")
    seeded = LocalWorkspace(tmp_path / "w", default_mcps=[demo_mcp()], skill_paths=[source])
    async with seeded:
        assert [c.name for c in await seeded.list_mcps()] == ["demo"]
        assert [s.name for s in await seeded.list_skills()] == ["review"]
        await seeded.remove_mcp("demo")
        await seeded.remove_skill("review")
    async with LocalWorkspace(
        tmp_path / "w", default_mcps=[demo_mcp()], skill_paths=[source]
    ) as again:
        assert await again.list_mcps() == []
        assert await again.list_skills() == []


async def test_tools_and_prompt_include_skills(tmp_path: Path, workspace: LocalWorkspace) -> None:
    await workspace.add_skill(write_skill(tmp_path / "pdf", "pdf", "Extract text from PDFs."))
    tools = await workspace.all_tools()
    viewer = tools[-1]
    assert isinstance(viewer, SkillViewer)
    (shown,) = await collect(viewer(skill="pdf"))
    assert str(workspace.workdir / "skills" / "pdf") in text_of(shown)

    fragment = await workspace.system_prompt_fragment("sub")
    assert str(workspace.workdir) in fragment
    assert f"start in {workspace.workdir / 'sub'}" in fragment
    assert "- pdf: Extract text from PDFs." in fragment
    assert "MCP servers" not in fragment


async def test_a_closed_workspace_refuses_work(tmp_path: Path) -> None:
    workspace = LocalWorkspace(tmp_path / "w")
    with pytest.raises(WorkspaceClosed):
        await workspace.list_mcps()
    await workspace.initialize()
    await workspace.close()
    with pytest.raises(WorkspaceClosed):
        await workspace.add_mcp(MCPClientConfig.model_validate(demo_mcp().model_dump()))
    with pytest.raises(WorkspaceClosed):
        workspace.builtin_tools()
