"""The built-in tools of a DockerWorkspace run inside its container, with the agent's paths."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agent_core.message import Msg, TextBlock, ToolResultBlock
from tests.integration.docker._helpers import container_exists, inspect
from tests.support.tool_calls import (
    Agent,
    bash_tool,
    check_bash_output_streams,
    check_cancelling_kills_the_command,
)
from workspaces.docker import DockerWorkspace
from workspaces.errors import WorkspaceClosed

pytestmark = [pytest.mark.docker, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def workspace(
    tmp_path_factory: pytest.TempPathFactory, docker_options: dict[str, Any]
) -> AsyncIterator[DockerWorkspace]:
    os.environ["TROUPE_TEST_SECRET"] = "hunter2"  # must not reach the container
    directory = tmp_path_factory.mktemp("docker") / "ws"
    try:
        async with DockerWorkspace(directory, "tools", **docker_options) as opened:
            yield opened
    finally:
        del os.environ["TROUPE_TEST_SECRET"]


@pytest.fixture
def agent(workspace: DockerWorkspace) -> Agent:
    return Agent(workspace.builtin_tools())


async def test_the_agent_sees_container_paths(workspace: DockerWorkspace) -> None:
    assert workspace.workdir == Path("/workspace")
    assert workspace.working_directory("src") == Path("/workspace/src")
    assert (workspace.host_workdir / "src").is_dir()
    fragment = await workspace.system_prompt_fragment()
    assert "/workspace" in fragment
    assert str(workspace.host_workdir) not in fragment


async def test_file_tools_work_on_the_mounted_directory(
    workspace: DockerWorkspace, agent: Agent
) -> None:
    ok, out = await agent("Write", file_path="notes/a.txt", content="alpha\nbeta\n")
    assert ok, out
    assert (workspace.host_workdir / "notes" / "a.txt").read_text() == "alpha\nbeta\n"
    ok, out = await agent("Read", file_path="/workspace/notes/a.txt")
    assert ok, out
    assert "beta" in out
    ok, out = await agent("Edit", file_path="notes/a.txt", old_string="beta", new_string="gamma")
    assert ok, out
    assert (workspace.host_workdir / "notes" / "a.txt").read_text() == "alpha\ngamma\n"
    ok, out = await agent("Glob", pattern="**/*.txt")
    assert ok, out
    assert "/workspace/notes/a.txt" in out
    ok, out = await agent("Grep", pattern="gam+a", output_mode="content")
    assert ok, out
    assert "gamma" in out
    ok, out = await agent("Bash", command="pwd; cat notes/a.txt")
    assert ok, out
    assert out.splitlines()[:2] == ["/workspace", "alpha"]


async def test_the_container_is_locked_down(workspace: DockerWorkspace, agent: Agent) -> None:
    ok, out = await agent("Bash", command="env")
    assert ok, out
    assert "TROUPE_TEST_SECRET" not in out
    assert "HOME=/workspace" in out
    ok, out = await agent("Bash", command="touch /usr/x /etc/x 2>&1; echo $?")
    assert "Read-only file system" in out
    ok, out = await agent("Bash", command="cat /proc/net/dev")
    interfaces = {line.split(":")[0].strip() for line in out.splitlines() if ":" in line}
    assert interfaces == {"lo"}
    ok, out = await agent("Bash", command="grep Cap /proc/self/status")
    assert "CapEff:\t0000000000000000" in out
    assert workspace.container_id is not None
    described = await inspect(workspace.docker_url or "", workspace.container_id)
    host = described["HostConfig"]
    assert host["Memory"] == workspace.policy.memory_bytes
    assert host["PidsLimit"] == workspace.policy.max_processes
    assert host["NanoCpus"] == int(workspace.policy.cpus * 1e9)
    assert host["ReadonlyRootfs"] is True
    assert host["NetworkMode"] == "none"


async def test_bash_output_streams(workspace: DockerWorkspace) -> None:
    await check_bash_output_streams(
        bash_tool(workspace.builtin_tools()), workspace.host_workdir / "go"
    )


async def test_cancelling_a_call_kills_its_command(
    workspace: DockerWorkspace, agent: Agent
) -> None:
    await check_cancelling_kills_the_command(bash_tool(workspace.builtin_tools()), agent)


async def test_offloads_and_skills_are_named_by_container_paths(
    workspace: DockerWorkspace, agent: Agent, tmp_path: Path
) -> None:
    result = ToolResultBlock(id="r1", name="Bash", output="x" * 100)
    path = await workspace.offload_tool_result("s1", result)
    assert path.startswith("/workspace/sessions/")
    ok, out = await agent("Read", file_path=path)
    assert ok, out
    assert "xxxx" in out
    context = await workspace.offload_context(
        "s1", [Msg(name="u", role="user", content=[TextBlock(text="hi")])]
    )
    assert context == "/workspace/sessions/s1/context.jsonl"
    skill = tmp_path / "greet"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello.\n---\n\nHello.\n")
    installed = await workspace.add_skill(skill)
    assert installed.skill.path == "/workspace/skills/greet"
    assert [s.path for s in await workspace.list_skills()] == ["/workspace/skills/greet"]
    ok, out = await agent("Read", file_path="/workspace/skills/greet/SKILL.md")
    assert ok, out


async def test_an_ephemeral_workspace_leaves_nothing(docker_options: dict[str, Any]) -> None:
    workspace = DockerWorkspace(**docker_options)
    async with workspace:
        agent = Agent(workspace.builtin_tools())
        ok, out = await agent("Write", file_path="scratch.txt", content="temporary")
        assert ok, out
        assert (workspace.host_workdir / "scratch.txt").exists()
        container = workspace.container_id
        assert container is not None
    assert not workspace.host_workdir.exists()
    assert not await container_exists(docker_options["docker_url"], container)
    with pytest.raises(WorkspaceClosed):
        workspace.builtin_tools()
